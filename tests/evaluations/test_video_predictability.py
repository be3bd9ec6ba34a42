"""The predictability diagnostic behind the relational layout runs on recorded episodes and says so when it cannot."""

import json

import numpy as np
import pytest


def test_diagnostic_scores_both_coordinate_systems_on_held_out_episodes(tmp_path):
    pytest.importorskip("gym_pusht")
    from rlvr_sim.envs.video.collect import collect
    from rlvr_sim.evaluations.video_predictability import main

    collect(tmp_path / "data", episodes=12, seed=0, max_steps=40, mix="expert:1,random:1")
    result = main(["--data", str(tmp_path / "data"), "--steps", "30", "--seeds", "2", "--threads", "1", "--out", str(tmp_path / "p.json")])
    assert json.loads((tmp_path / "p.json").read_text())["rows"] == result["rows"]
    assert set(result["rows"]) == {"absolute", "body frame"} and result["held_out"] > 0
    for row in result["rows"].values():
        # finite, and not 0: a perfect held-out fit would mean the held-out episodes leaked into the fit
        assert all(np.isfinite(v["position_r2"]) and 0 < v["position_mae"] < np.inf for v in row.values())
        assert all(len(v["per_seed"]["angle_r2"]) == 2 for v in row.values())


def test_episodes_without_state_are_refused(tmp_path):
    from rlvr_sim.evaluations.video_predictability import transitions

    np.savez(tmp_path / "ep.npz", image=np.zeros((8, 8, 8, 3), np.uint8), action=np.zeros((8, 2), np.float32))
    with pytest.raises(ValueError, match="state"):
        transitions(tmp_path, 4)
