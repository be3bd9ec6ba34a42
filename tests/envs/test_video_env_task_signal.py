"""RLVRWorld-Video-v0's task signal (gym-pusht's reward and success from the predicted pose or frame) and its
refusal of start frames a pose model cannot read."""

import json
import shutil

import gymnasium as gym
import numpy as np
import pytest
from rlvr_sim.envs.video.world_model_env import VideoWorldModel, VideoWorldModelEnv, VideoWorldModelVectorEnv

import rlvr_sim  # noqa: F401  (registers the ids)
from rlvr_sim.metrics.pusht_reward import frame_reward
from rlvr_sim.models.pose_tokenizer import PoseTokenizer
from rlvr_sim.resources import asset_path

pytest.importorskip("shapely")
# the agent parked in a corner, the T drawn where the pose tokenizer reads it as the goal's own bin cell
# (block 258, 258, 0.81 rad at bin centres: 96% of the goal covered)
ON_GOAL = np.array([80.0, 440.0, 254.0, 258.0, 0.81])
OFF_GOAL = np.array([80.0, 440.0, 380.0, 110.0, 0.0])


def _frame(state: np.ndarray) -> np.ndarray:
    return PoseTokenizer().render(state[None])[0]


@pytest.fixture(scope="module")
def env():
    return VideoWorldModelEnv()  # the embedded PushT pose model (its rlvr_sim.json: task "pusht")


def test_env_terminates_with_reward_one_when_the_predicted_t_covers_the_goal(env):
    env.reset(seed=0, options={"frame": _frame(ON_GOAL)})
    _, reward, terminated, truncated, info = env.step(ON_GOAL[:2].astype(np.float32))  # the agent holds still
    assert terminated and not truncated and reward == 1.0
    assert info["is_success"] and info["coverage"] > 0.95


def test_reward_falls_as_the_predicted_push_moves_the_t_off_the_goal(env):
    env.reset(seed=0, options={"frame": _frame(ON_GOAL)})
    rewards = [env.step(np.array([256.0, 256.0], np.float32))[1] for _ in range(4)]  # into the T's middle
    assert rewards[-1] < 0.5 * rewards[0] and 0.0 < rewards[-1]
    env.reset(seed=0, options={"frame": _frame(OFF_GOAL)})
    _, reward, terminated, _, info = env.step(OFF_GOAL[:2].astype(np.float32))
    assert not terminated and 0.0 <= reward < 0.1 and not info["is_success"]


def test_a_checkpoint_of_another_scene_returns_zero_and_never_terminates(tmp_path):
    checkpoint = shutil.copytree(asset_path("pusht_pose_base"), tmp_path / "arm_scene")
    meta_path = checkpoint / "rlvr_sim.json"
    meta = json.loads(meta_path.read_text())
    meta["video_settings"]["scene"] = "arm"  # e.g. a robot-arm world whose frames the PushT judge cannot read
    meta_path.write_text(json.dumps(meta))
    other = VideoWorldModelEnv(checkpoint=str(checkpoint))
    assert other.world.scene == "arm"
    other.reset(seed=0, options={"frame": _frame(ON_GOAL)})
    _, reward, terminated, _, info = other.step(ON_GOAL[:2].astype(np.float32))
    assert reward == 0.0 and not terminated and "coverage" not in info


def test_vector_env_terminates_the_succeeding_row_and_truncates_the_others():
    vec = VideoWorldModelVectorEnv(num_envs=2, max_episode_steps=10)
    frames = np.stack([_frame(ON_GOAL), _frame(OFF_GOAL)])
    vec.reset(seed=0, options={"frame": frames})
    _, rewards, terminated, truncated, info = vec.step(np.stack([ON_GOAL[:2], OFF_GOAL[:2]]).astype(np.float32))
    assert terminated.tolist() == [True, False] and truncated.tolist() == [False, True]
    assert rewards[0] == 1.0 and rewards[1] < 0.1 and info["is_success"].tolist() == [True, False]
    obs, rewards, terminated, truncated, _ = vec.step(np.zeros((2, 2), np.float32))  # NEXT_STEP autoreset
    assert not terminated.any() and not truncated.any() and not rewards.any() and obs.shape == (2, 64, 64, 3)


def test_a_visual_pusht_checkpoint_judges_its_predicted_frames(tmp_path):
    """A learned visual (FSQ) checkpoint recorded as PushT: the reward is the pixel judge's on the frame it
    predicts; the same checkpoint without a scene returns 0."""
    from test_video_env import _tiny_checkpoint

    from rlvr_sim.models.visual_tokenizer import FrameTokenizer, TokenizerConfig
    from rlvr_sim.tasks.video import VideoCodec

    codec = VideoCodec(codebook_size=25, action_dim=2, abs_tokens=64, cond_tokens=16)
    frames = np.stack([_frame(ON_GOAL), _frame(OFF_GOAL)])
    checkpoint = _tiny_checkpoint(tmp_path / "fsq", codec, FrameTokenizer(TokenizerConfig(width=8, levels=[5, 5])).eval(),
                                  3, frames)  # fmt: skip
    unnamed = VideoWorldModelEnv(checkpoint=checkpoint, temperature=1.0)
    assert unnamed.world.scene is None
    unnamed.reset(seed=0)
    assert unnamed.step(np.array([10.0, 10.0], np.float32))[1:3] == (0.0, False)
    meta_path = tmp_path / "fsq" / "rlvr_sim.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "task": "pusht"}))
    env = VideoWorldModelEnv(checkpoint=checkpoint, temperature=1.0)
    env.reset(seed=0, options={"frame": np.zeros((64, 64, 3), np.uint8)})  # a visual model reads any frame
    for _ in range(3):
        obs, reward, terminated, _, info = env.step(np.array([10.0, 10.0], np.float32))
        expected, success, coverage = frame_reward(obs[None])
        assert reward == expected[0] and terminated == success[0] and info["coverage"] == coverage[0]


@pytest.mark.parametrize("value", [0, 255])
def test_pose_model_refuses_a_start_frame_without_agent_or_t(env, value):
    blank = np.full((64, 64, 3), value, np.uint8)
    with pytest.raises(ValueError, match=r"no readable agent .* and no readable T"):
        env.reset(options={"frame": blank})
    no_agent = _frame(np.array([np.nan, np.nan, *ON_GOAL[2:]]))
    with pytest.raises(ValueError, match=r"start frame 0 shows no readable agent \(0 pixels"):
        VideoWorldModel.start(env.world, no_agent[None], [0])
    vec = gym.make_vec("RLVRWorld-Video-v0", num_envs=2)
    with pytest.raises(ValueError, match=r"start frame 1 shows no readable T"):
        vec.reset(options={"frame": np.stack([_frame(ON_GOAL), _frame(np.array([80.0, 440.0, *[np.nan] * 3]))])})
    env.reset(seed=0, options={"frame": _frame(OFF_GOAL)})  # a readable frame still starts
