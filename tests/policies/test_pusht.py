"""Scripted PushT policies: seeded, bounded, graded."""

import numpy as np
import pytest
from rlvr_sim.policies.pusht import SKILLS, PushTPolicy

INFO = {"pos_agent": np.array([100.0, 400.0]), "block_pose": np.array([300.0, 300.0, 0.3]),
        "goal_pose": np.array([256.0, 256.0, np.pi / 4])}


@pytest.mark.parametrize("skill", list(SKILLS))
def test_policies_are_seeded_and_in_bounds(skill):
    runs = []
    for _ in range(2):
        policy = PushTPolicy(skill, seed=7)
        runs.append(np.stack([policy.act(INFO) for _ in range(6)]))
    assert np.array_equal(runs[0], runs[1])
    assert runs[0].dtype == np.float32 and (runs[0] >= 0).all() and (runs[0] <= 512).all()


def test_expert_aims_behind_the_block_and_noise_grades_skill():
    expert = PushTPolicy("expert", seed=0).act(INFO)
    good = np.stack([PushTPolicy("good", seed=s).act(INFO) for s in range(20)])
    poor = np.stack([PushTPolicy("poor", seed=s).act(INFO) for s in range(20)])
    assert np.linalg.norm(good - expert, axis=1).mean() < np.linalg.norm(poor - expert, axis=1).mean()


def test_unknown_skill_is_rejected():
    with pytest.raises(ValueError, match="unknown PushT skill"):
        PushTPolicy("wizard")


def test_near_goal_task_starts_are_seeded_and_in_range():
    from rlvr_sim.policies.pusht import GOAL_POSE, NearGoalTask

    task = NearGoalTask()
    starts = [task.sample_start(np.random.default_rng([0, e])) for e in range(50)]
    assert np.array_equal(starts[3], task.sample_start(np.random.default_rng([0, 3])))
    for start in starts:
        distance, angle = task.pose_error(start[2:])
        assert 30.0 <= distance <= 90.0 and 20.0 - 1e-6 <= angle <= 70.0 + 1e-6
        assert not task.success(start[2:])
    assert task.success(GOAL_POSE + np.array([3.0, -3.0, np.radians(2.0)]))
    assert not task.success(None)


def test_delayed_skill_acts_on_a_stale_state():
    laggy, expert = PushTPolicy("laggy", seed=0), PushTPolicy("expert", seed=0)
    moved = dict(INFO, block_pose=INFO["block_pose"] + np.array([40.0, 0.0, 0.0]))
    for info in (INFO, moved):
        late = laggy.act(info)
    assert np.array_equal(late, PushTPolicy("expert", seed=0).act(INFO))
    assert not np.array_equal(late, expert.act(moved))


def test_expert_solves_near_goal_starts_in_gym_pusht():
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("gym_pusht")
    from rlvr_sim.policies.pusht import NearGoalTask

    task, env, solved = NearGoalTask(), gym.make("gym_pusht/PushT-v0", obs_type="state"), []
    for episode in range(4):
        _, info = env.reset(options={"reset_to_state": task.sample_start(np.random.default_rng([9, episode]))})
        policy = PushTPolicy("expert", seed=episode)
        for _ in range(task.horizon):
            action = policy.act(info)
            for _ in range(task.frame_skip):
                _, _, _, _, info = env.step(action)
            if task.success(info["block_pose"]):
                break
        solved.append(task.success(info["block_pose"]))
    assert sum(solved) >= 3


def test_explore_pushes_toward_goals_of_its_own():
    """`explore` is the aimed pusher with a seeded goal of its own, redrawn every `wander_every` decisions: it does
    not act as the expert does toward gym-pusht's goal, replays from its seed, and its goal changes on schedule."""
    from rlvr_sim.policies.pusht import PushPlanner

    explore = PushTPolicy("explore", seed=3)
    first = explore.act(INFO)
    goal = explore._wander_goal.copy()
    assert not np.allclose(goal, INFO["goal_pose"])
    expected = PushPlanner(SKILLS["explore"].push_step_px).target(INFO["pos_agent"], INFO["block_pose"], goal)
    assert np.linalg.norm(first - expected) < 5 * SKILLS["explore"].noise_px  # the aimed push, plus its noise
    for _ in range(SKILLS["explore"].wander_every - 1):
        explore.act(INFO)
        assert np.array_equal(explore._wander_goal, goal)
    explore.act(INFO)
    assert not np.array_equal(explore._wander_goal, goal)


def test_explore_moves_the_tee_many_ways_in_gym_pusht():
    """Over one episode the T is pushed in at least three of the four world directions (the expert pushes toward
    one fixed goal)."""
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("gym_pusht")
    env = gym.make("gym_pusht/PushT-v0", obs_type="state", max_episode_steps=400)
    _, info = env.reset(seed=1)
    policy, moves, start = PushTPolicy("explore", seed=1), [], info["block_pose"].copy()
    for step in range(400):
        if step % 4 == 0:
            action = policy.act(info)
        if step % 40 == 39:
            moves.append(info["block_pose"][:2] - start[:2])
            start = info["block_pose"].copy()
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    env.close()
    quadrants = {int(np.round(np.arctan2(m[1], m[0]) / (np.pi / 2))) % 4 for m in moves if np.linalg.norm(m) > 10}
    assert len(quadrants) >= 3
