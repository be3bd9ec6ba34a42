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
