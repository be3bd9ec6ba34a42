"""gym-pusht's reward and success rule from a pose (`rlvr_sim.metrics.pusht_reward`) against gym-pusht itself."""

import numpy as np
import pytest

from rlvr_sim.metrics.pusht_pixels import GOAL_POSE
from rlvr_sim.metrics.pusht_reward import (
    SUCCESS_COVERAGE,
    coverage_reward,
    frame_reward,
    goal_coverage,
    is_success,
    pose_reward,
)

pytest.importorskip("shapely")


def _gym_pusht_steps(count: int, seed: int) -> list[tuple[np.ndarray, float, bool, float]]:
    """(true block pose, reward, terminated, coverage) of gym-pusht's own step from `count` seeded states:
    a third placed within a few world units of the goal (gym-pusht succeeds on many of them), the rest
    anywhere. gym-pusht's reset moves the block off the requested pose (it sets the position before the
    angle), so the offset it adds is measured on a first reset and taken off on a second."""
    import gym_pusht  # noqa: F401  (registers gym_pusht/PushT-v0)
    import gymnasium as gym

    env = gym.make("gym_pusht/PushT-v0", obs_type="state").unwrapped
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        if i % 3 == 0:
            want = np.array([*(GOAL_POSE[:2] + rng.normal(0.0, 1.5, 2)), GOAL_POSE[2] + rng.normal(0.0, 0.02)])
        else:
            want = np.array([*rng.uniform(120.0, 392.0, 2), rng.uniform(-np.pi, np.pi)])
        env.reset(seed=i, options={"reset_to_state": np.array([40.0, 40.0, *want])})
        offset = env._get_info()["block_pose"] - want
        env.reset(options={"reset_to_state": np.array([40.0, 40.0, *(want - offset)])})
        _, reward, terminated, _, info = env.step(np.array([40.0, 40.0]))  # the agent stays in its corner
        out.append((np.asarray(info["block_pose"]), float(reward), bool(terminated), float(info["coverage"])))
    env.close()
    return out


def test_reward_and_success_match_gym_pusht_on_its_own_states():
    steps = _gym_pusht_steps(60, seed=0)
    poses = np.stack([pose for pose, *_ in steps])
    reward, success, coverage = pose_reward(poses)
    np.testing.assert_allclose(coverage, [c for *_, c in steps], atol=1e-9)
    np.testing.assert_allclose(reward, [r for _, r, _, _ in steps], atol=1e-9)
    assert success.tolist() == [t for _, _, t, _ in steps]
    assert 0 < success.sum() < len(steps)  # both outcomes occur, so the rule is checked both ways
    assert (reward[~success] < 1.0).all() and (reward[success] == 1.0).all()


def test_coverage_edge_cases():
    assert goal_coverage(GOAL_POSE)[0] == pytest.approx(1.0)
    assert goal_coverage(np.array([60.0, 60.0, 0.0]))[0] == 0.0  # far from the goal
    assert goal_coverage(np.array([np.nan, 256.0, 0.0]))[0] == 0.0  # the T not visible
    shifted = goal_coverage(GOAL_POSE + np.array([10.0, 0.0, 0.0]))[0]
    assert 0.5 < shifted < 0.95 and not is_success(shifted) and coverage_reward(shifted) == pytest.approx(shifted / 0.95)
    assert is_success(0.951) and not is_success(0.95)  # strictly above, as gym-pusht


def test_frame_reward_reads_the_block_off_drawn_frames():
    """The judge reads the T to a few world units at 64x64 (docs/video.md), so a T drawn on the goal scores
    high but not exactly 1; a T across the arena scores 0; a frame without a T scores 0."""
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    states = np.array([[60.0, 60.0, *GOAL_POSE], [60.0, 60.0, 120.0, 380.0, 0.0]])
    frames = np.concatenate([PoseTokenizer().render(states), np.full((1, 64, 64, 3), 255, np.uint8)])
    reward, success, coverage = frame_reward(frames)
    assert reward[0] > 0.85 and coverage[1] == 0.0 and coverage[2] == 0.0
    assert not success[1:].any()


def test_frame_reward_succeeds_above_the_frame_threshold():
    """A pose read off a frame succeeds above FRAME_SUCCESS_COVERAGE (the judge reads a few units off, which
    lowers coverage); the reward keeps gym-pusht's formula; `threshold` restores gym-pusht's 0.95."""
    from rlvr_sim.metrics.pusht_reward import FRAME_SUCCESS_COVERAGE
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    assert SUCCESS_COVERAGE - 0.05 < FRAME_SUCCESS_COVERAGE < SUCCESS_COVERAGE
    offsets = np.linspace(-12.0, 12.0, 25)
    states = np.array([[60.0, 60.0, GOAL_POSE[0] + dx, GOAL_POSE[1], GOAL_POSE[2]] for dx in offsets])
    frames = PoseTokenizer().render(states)
    reward, success, coverage = frame_reward(frames)
    np.testing.assert_array_equal(success, coverage > FRAME_SUCCESS_COVERAGE)
    np.testing.assert_allclose(reward, np.clip(coverage / SUCCESS_COVERAGE, 0, 1))
    assert success.any() and not success.all()  # near the goal it ends, 12 units off it does not
    _, strict, _ = frame_reward(frames, threshold=SUCCESS_COVERAGE)
    np.testing.assert_array_equal(strict, coverage > SUCCESS_COVERAGE)
    assert strict.sum() < success.sum()
