"""evaluations/video_reward.py with a tiny budget: gym-pusht's own signal recorded, the learned env's compared."""

import json

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.evaluations.video_reward import held_out_sequences, main  # noqa: E402

from rlvr_sim.metrics.pusht_reward import frame_reward  # noqa: E402


def test_recorded_reward_is_gym_pusht_s_at_the_frame():
    sequences = held_out_sequences(2, 6, seed=5, progress=False)
    assert sequences["start"].shape == (2, 64, 64, 3) and sequences["actions"].shape == (2, 6, 2)
    np.testing.assert_allclose(sequences["reward"], np.clip(sequences["coverage"] / 0.95, 0, 1))
    judged, _, _ = frame_reward(sequences["future"].reshape(-1, 64, 64, 3))
    assert np.abs(judged - sequences["reward"].ravel()).mean() < 0.05  # the frames are the states rewarded
    again = held_out_sequences(2, 6, seed=5, progress=False)
    for key in sequences:  # gym-pusht's shapely coverage varies in the last bit from call to call
        np.testing.assert_allclose(sequences[key], again[key], rtol=0, atol=1e-12)


def test_tiny_run_writes_json_and_markdown(tmp_path):
    report = main(["--sequences", "3", "--steps", "4", "--checkpoints", "pusht_pose_base", "--quiet",
                   "--out", str(tmp_path)])  # fmt: skip
    saved = json.loads((tmp_path / "video_reward.json").read_text())
    assert saved["rows"].keys() == report["rows"].keys()
    learned = saved["rows"]["learned env: pusht_pose_base"]
    assert 0.0 <= learned["mean_abs_error"]["value"] < 0.5
    assert saved["rows"]["judge on true frames"]["pearson_all_steps"]["value"] > 0.9
    assert "| learned env: pusht_pose_base |" in (tmp_path / "video_reward.md").read_text()


def test_calibration_counts_ends_at_each_threshold(tmp_path):
    """--calibrate, per readout (judge, pose tokens): a lower threshold can only add ends (both / only-readout
    up, only-gym-pusht down), and the counts add up to the sequences."""
    result = main(["--calibrate", "--sequences", "6", "--steps", "8", "--seed", "7", "--quiet", "--out", str(tmp_path)])
    assert set(result["rows"]) == {"judge", "pose tokens"}
    for rows in result["rows"].values():
        assert [row["threshold"] for row in rows] == sorted((row["threshold"] for row in rows), reverse=True)
        for high, low in zip(rows, rows[1:]):
            assert low["both_terminate"] >= high["both_terminate"] and low["only_readout"] >= high["only_readout"]
            assert low["only_gym_pusht"] <= high["only_gym_pusht"]
        for row in rows:
            assert row["both_terminate"] + row["only_gym_pusht"] + row["only_readout"] <= 6
            assert 0.0 <= row["same_step"] <= row["within_one_step"] <= 1.0
    text = (tmp_path / "calibration.md").read_text()
    assert "FRAME_SUCCESS_COVERAGE" in text and "POSE_SUCCESS_COVERAGE" in text


def test_goal_sits_on_a_bin_corner():
    """Why pose tokens keep 0.95 (pusht_reward's docstring): of the 8 bin centres around the goal pose, 2 cover
    more than 0.95 of the goal and the other 6 at most 0.92."""
    from rlvr_sim.metrics.pusht_pixels import GOAL_POSE
    from rlvr_sim.metrics.pusht_reward import POSE_SUCCESS_COVERAGE, goal_coverage
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    tokenizer = PoseTokenizer()
    step = np.array([2.0, 2.0, np.pi / tokenizer.config.bins])
    corners = np.array([[sx, sy, sa] for sx in (-1, 1) for sy in (-1, 1) for sa in (-1, 1)]) * step
    poses = np.concatenate([np.zeros((8, 2)), np.asarray(GOAL_POSE)[None] + corners], axis=1)
    centres = tokenizer.codes_to_states(tokenizer.states_to_codes(poses))[:, 2:]
    assert len({tuple(c) for c in np.round(centres, 6)}) == 8  # eight distinct cells meet at the goal
    coverage = goal_coverage(centres)
    assert (coverage > POSE_SUCCESS_COVERAGE).sum() == 2 and np.sort(coverage)[5] <= 0.92
