"""Deprecated location of the text-game pipeline, kept so that `python -m rlvr_sim.envs.textgame.pipeline`
still runs: the pipeline is `training/textgame_pipeline.py` (`python -m rlvr_sim.training.textgame_pipeline`),
next to the PushT one."""

import sys

from rlvr_sim.training.textgame_pipeline import main

if __name__ == "__main__":
    print("python -m rlvr_sim.envs.textgame.pipeline is deprecated: use python training/textgame_pipeline.py",
          file=sys.stderr)
    sys.exit(main())
