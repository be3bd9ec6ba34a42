"""Real2Sim serves a learned *visual* PushT checkpoint (keypoint tokenizer, no pose tokens, no support.npz) as it
serves a pose one: episodes replay exactly, the report ranks it against gym-pusht and says its support is not
measured (issue 26: Real2Sim with the visual PushT model on the same 7 policies and 20 episodes)."""

import json

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
