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


def test_ablation_rows_and_training_only_episodes(tmp_path):
    """--ablations adds the exact-state and half-data rows; --extra-data trains on more episodes but scores only on
    the held-out episodes of --data (the same held-out transitions in every row)."""
    pytest.importorskip("gym_pusht")
    from rlvr_sim.envs.video.collect import collect
    from rlvr_sim.evaluations.video_predictability import main

    collect(tmp_path / "data", episodes=12, seed=0, max_steps=40, mix="expert:1,random:1")
    collect(tmp_path / "more", episodes=4, seed=5, max_steps=40, mix="expert:1")
    plain = main(["--data", str(tmp_path / "data"), "--steps", "20", "--seeds", "1", "--threads", "1",
                  "--out", str(tmp_path / "a.json")])
    result = main(["--data", str(tmp_path / "data"), "--steps", "20", "--seeds", "1", "--threads", "1", "--ablations",
                   "--extra-data", str(tmp_path / "more"), "--out", str(tmp_path / "b.json")])
    assert list(result["rows"]) == ["absolute", "body frame", "body frame, exact states",
                                    "body frame, half the training episodes", "body frame, + more for training"]
    assert result["held_out"] == plain["held_out"] and result["transitions"] == plain["transitions"]
    assert result["rows"]["body frame"] == plain["rows"]["body frame"]  # the extra episodes train only their row
    collect(tmp_path / "again", episodes=3, seed=6, max_steps=40, mix="explore:1")
    both = main(["--data", str(tmp_path / "data"), "--steps", "20", "--seeds", "1", "--threads", "1",
                 "--extra-data", str(tmp_path / "more"), "--extra-data", str(tmp_path / "again"), "--out", str(tmp_path / "c.json")])
    assert list(both["rows"])[-1] == "body frame, + more + again for training" and both["held_out"] == plain["held_out"]
    assert both["rows"]["body frame"] == plain["rows"]["body frame"]


def test_episodes_without_state_are_refused(tmp_path):
    from rlvr_sim.evaluations.video_predictability import transitions

    np.savez(tmp_path / "ep.npz", image=np.zeros((8, 8, 8, 3), np.uint8), action=np.zeros((8, 2), np.float32))
    with pytest.raises(ValueError, match="state"):
        transitions(tmp_path, 4)
