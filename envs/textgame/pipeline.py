"""Removed: the text-game pipeline is `training/textgame_pipeline.py` (`python -m rlvr_sim.training.textgame_pipeline`).

This module only says so, to whoever still runs or imports the old location."""

raise ImportError("rlvr_sim.envs.textgame.pipeline was removed: use python training/textgame_pipeline.py "
                  "(installed: python -m rlvr_sim.training.textgame_pipeline)")
