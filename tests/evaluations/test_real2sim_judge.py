"""Real2Sim's judged success needs the T pixels to show a T: a smear read at the goal is not a success."""

import json

import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.evaluations.real2sim_episodes import JUDGE_VERSION, EpisodeSpec, run_episode  # noqa: E402


def test_a_goal_pose_on_pixels_that_are_no_tee_does_not_succeed(monkeypatch):
    import rlvr_sim.metrics.pusht_pixels as pixels

    spec = EpisodeSpec("real", "expert", episode=0, seed=0, horizon=12)
    assert run_episode(spec)["success"]  # the expert reaches the goal, and the judge sees it
    real_estimate = pixels.estimate_state

    def smeared(frame):  # the same poses, read off pixels that fit a T no better than a smear does
        return {**real_estimate(frame), "block_fit": 0.5}

    monkeypatch.setattr(pixels, "estimate_state", smeared)
    result = run_episode(spec)
    assert not result["success"] and result["true_success"]  # gym-pusht's own state says the T got there


def test_episodes_judged_by_an_older_judge_are_not_resumed(tmp_path):
    from rlvr_sim.evaluations.real2sim_fanout import _spec_key

    spec = EpisodeSpec("real", "random", episode=0, seed=0, horizon=2)
    key = json.loads(_spec_key(spec))
    assert key[-1] == JUDGE_VERSION >= 2
    old = json.dumps(key[:-1])  # how version 1 logged the same episode
    log = tmp_path / "episodes.jsonl"
    log.write_text(json.dumps({"key": old, "sim": "real", "policy": "random", "episode": 0, "success": True}) + "\n")
    from rlvr_sim.evaluations.real2sim_fanout import run_episodes

    [result] = run_episodes([spec], use_ray=False, progress=False, log=log)
    assert result["success"] is False  # re-run (random never reaches the goal in 2 steps), not read back


def test_judge_fit_report_flags_a_block_that_is_no_tee(tmp_path):
    """The calibration script on the project's Open-X fixture, whose block is a square: none of its frames is a T."""
    from pathlib import Path

    from rlvr_sim.evaluations.judge_fit import main

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "npz_pusht64"
    result = main(["--data", str(fixture), "--sizes", "64", "--every", "1", "--out", str(tmp_path)])
    row = result["sizes"]["64"]
    assert row["frames"] > 0 and row["below_threshold"] == 1.0 and row["threshold"] == pytest.approx(1 - 21 / 64)
    assert (tmp_path / "judge_fit.md").read_text().count("| 64 |") == 1


def test_strips_replay_the_tables_episodes_and_frame_their_outcome():
    """`evaluations/real2sim_strips.py` draws the episodes `run_episode` counts: the expert's real episode ends framed
    green at its judged success, random's framed red at the horizon; `frames` receives every frame the judge saw."""
    from rlvr_sim.evaluations.real2sim_strips import GREEN, RED, episode_row

    frames: list = []
    result = run_episode(EpisodeSpec("real", "expert", episode=0, seed=0, horizon=12), frames=frames)
    assert result["success"] and len(frames) == result["steps"] + 1 and frames[0].shape == (64, 64, 3)
    won = episode_row("real", "expert", 0, 0, horizon=12, every=1)
    lost = episode_row("real", "random", 0, 0, horizon=3, every=1)
    assert won.shape[0] == lost.shape[0] == 66 and won.shape[1] == 14 * 66
    assert tuple(won[0, result["steps"] * 66 + 10]) == GREEN and tuple(lost[0, 3 * 66 + 10]) == RED
