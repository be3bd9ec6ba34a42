"""The object reward on the arm scene: the arm's pixel judge (tip and puck) scores decoded predictions."""

import os

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # must precede the first `import mujoco` (headless rendering)
pytest.importorskip("mujoco")

from rlvr_sim.metrics import arm_pixels  # noqa: E402
from rlvr_sim.tasks import make_task  # noqa: E402


@pytest.fixture(scope="module")
def arm_setup(tmp_path_factory):
    from rlvr_sim.envs.arm.collect import collect

    from rlvr_sim.resources import asset_path

    root = tmp_path_factory.mktemp("arm_task")
    collect(root / "data", episodes=4, seed=3, max_steps=30)
    return dict(data_dir=str(root / "data"), tokenizer_dir=str(asset_path("arm_visual") / "tokenizer"), horizon=4,
                frame_skip=1, scene="arm", test_fraction=0.25, train_stride=2, test_stride=2, lpips="st-lpips")


def test_arm_object_errors_cap_lost_objects_and_ignore_objects_hidden_in_both():
    gold = np.array([[10.0, 10.0, 40.0, 40.0], [10.0, 10.0, np.nan, np.nan]])
    pred = np.array([[13.0, 14.0, np.nan, np.nan], [10.0, 10.0, np.nan, np.nan]])
    errors = arm_pixels.object_errors(pred, gold)
    np.testing.assert_allclose(errors["tip_px"], [5.0, 0.0])
    np.testing.assert_allclose(errors["puck_px"], [arm_pixels.POSITION_ERROR_CAP, 0.0])  # lost: the cap; hidden in both: 0
    np.testing.assert_allclose(arm_pixels.object_score(errors), [5.0 + arm_pixels.POSITION_ERROR_CAP, 0.0])
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        arm_pixels.object_errors(pred[:, :2], gold[:, :2])


def test_arm_object_reward_scores_the_truth_near_zero_and_a_wrong_arm_lower(arm_setup):
    task = make_task("pusht", reward_kind="object", **arm_setup)
    assert task.worst_reward == -arm_pixels.WORST_OBJECT_SCORE
    examples = task.examples("test")
    prompts, metas = [e.prompt_ids for e in examples], [e.metadata for e in examples]
    gold = np.array(task.reward(prompts, [e.answer_ids for e in examples], metas))
    assert (gold > -4.0).all() and (gold <= 0.0).all()  # the tokenizer's reconstruction and judge error only
    # each example's answer scored against another window's truth: where the tips differ, the reward drops
    shifted = [examples[(i + 1) % len(examples)].answer_ids for i in range(len(examples))]
    wrong = np.array(task.reward(prompts, shifted, metas))
    states = task.gold_states("test", np.array([m["index"] for m in metas]), np.array([m["first"] for m in metas]),
                              task.horizon)
    assert states.shape == (len(examples), task.horizon, 4)
    tips = states[..., :2]
    moved = np.linalg.norm(tips - np.roll(tips, -1, axis=0), axis=-1).mean(1) > 4.0  # tips 4+ px apart on average
    assert moved.any()
    assert (wrong[moved] < gold[moved] - 2.0).all()
    assert task.reward(prompts[:2], [[0, 1]] * 2, metas[:2]) == [task.worst_reward] * 2  # unparseable: the worst


def test_object_reward_needs_a_scene_with_a_judge(arm_setup):
    with pytest.raises(ValueError, match="scene 'rope' has none"):
        make_task("pusht", **{**arm_setup, "scene": "rope", "reward_kind": "object"})
