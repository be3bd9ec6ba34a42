"""Real2Sim serves a learned *visual* PushT checkpoint (keypoint tokenizer, no pose tokens, no support.npz) as it
serves a pose one: episodes replay exactly, the report ranks it against gym-pusht and says its support is not
measured (issue 26: Real2Sim with the visual PushT model on the same 7 policies and 20 episodes)."""

import json

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.evaluations.real2sim_episodes import EpisodeSpec, run_episode  # noqa: E402

VISUAL = "learned:pusht_visual_base"


def test_a_visual_checkpoint_episode_replays_exactly():
    spec = EpisodeSpec(VISUAL, "expert", episode=0, seed=0, horizon=3)
    first = run_episode(spec)
    assert first == run_episode(spec)  # seeded: the same frames, judge readings and outcome
    assert first["sim"] == VISUAL and 1 <= first["steps"] <= 3
    assert first["out_of_support"] is None  # the visual checkpoint ships no support.npz: not measured, not 0


def test_rollout_cli_ranks_a_visual_checkpoint(tmp_path):
    from rlvr_sim.evaluations.real2sim import main

    out = tmp_path / "real2sim_visual"
    report = main(["--rollout", "--sims", f"real,{VISUAL}", "--policies", "expert,random", "--episodes", "1",
                   "--horizon", "3", "--no-ray", "--quiet", "--out", str(out)])
    assert set(report["metrics"]) == {VISUAL}
    assert set(report["rates"][VISUAL]) == {"expert", "random"}
    assert report["support"][VISUAL]["available"] is False
    assert report["support"][VISUAL]["checkpoint"].endswith("pusht_visual_base")
    written = json.loads((out / "real2sim.json").read_text())
    assert written["metrics"] == json.loads(json.dumps(report["metrics"]))
    assert "ships no `support.npz`" in (out / "real2sim.md").read_text()


def test_start_frame_figure_shows_both_starts():
    """`evaluations/real2sim_start_frames.py` (the picture in docs/real2sim.md): the same policy in the same learned
    simulator from gym-pusht's direct 64x64 picture (top) and from the data-made frame (bottom)."""
    from rlvr_sim.evaluations.real2sim_start_frames import strips

    image = strips("pusht_visual_mixed", steps=2, every=1, scale=1)
    assert image.shape == (2 * 66, 3 * 66, 3) and image.dtype.name == "uint8"
    top, bottom = image[1:65, 1:65].astype(int), image[67:131, 1:65].astype(int)
    assert (np.abs(top - bottom).max(-1) > 30).sum() > 100  # two different start pictures of one state
