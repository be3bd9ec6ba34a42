"""RLVRWorld-Video-v0: check_env, determinism, vector env == N single envs, render modes, bad input."""

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.video.world_model_env import (
    VideoWorldModelEnv,
    VideoWorldModelVectorEnv,
)

import rlvr_sim  # noqa: F401  (registers the ids)
from rlvr_sim.models.action_bins import ActionBins
from rlvr_sim.models.lm import build_model, save_checkpoint
from rlvr_sim.models.visual_tokenizer import FrameTokenizer, TokenizerConfig
from rlvr_sim.tasks.video import VideoCodec


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny untrained video world model in our checkpoint layout (fast to build and to step)."""
    import torch

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("video_ckpt")
    codec = VideoCodec(codebook_size=25, action_dim=2, abs_tokens=64, cond_tokens=16)
    model = build_model("tiny-5m", codec.vocab_size, 256, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    bins = ActionBins(np.array([0.0, 0.0]), np.array([512.0, 512.0]))
    meta = {"video_codec": vars(codec), "action_bins": bins.to_dict(),
            "video_settings": {"horizon": 3, "frame_skip": 4, "tokenizer_dir": "tokenizer", "image_size": 64}}
    save_checkpoint(root, model, None, meta)
    FrameTokenizer(TokenizerConfig(width=8, levels=[5, 5])).eval().save(root / "tokenizer")
    frames = np.random.default_rng(0).integers(0, 256, (4, 64, 64, 3), dtype=np.uint8)
    np.savez_compressed(root / "start_frames.npz", image=frames, future=frames[:, None], action=np.zeros((4, 1, 2)))
    return str(root)


def test_check_env_passes(checkpoint):
    env = gym.make("RLVRWorld-Video-v0", checkpoint=checkpoint)
    check_env(env.unwrapped, skip_render_check=True)
    assert env.observation_space.shape == (64, 64, 3) and env.action_space.shape == (2,)


def test_rollout_rolls_context_and_is_seeded(checkpoint):
    runs = []
    for _ in range(2):
        env = VideoWorldModelEnv(checkpoint=checkpoint, max_episode_steps=5)
        obs, info = env.reset(seed=3)
        frames, anchors, truncated = [obs], [], False
        for _ in range(5):
            obs, reward, terminated, truncated, info = env.step(np.array([100.0, 200.0], np.float32))
            frames.append(obs)
            anchors.append(info["steps_since_anchor"])
            assert reward == 0.0 and not terminated
        runs.append(np.stack(frames))
    assert truncated and anchors == [1, 2, 3, 1, 2]  # horizon 3: the context rolls after 3 steps
    assert np.array_equal(runs[0], runs[1])


def test_kv_cache_matches_full_recompute(checkpoint):
    outputs = []
    for use_cache in (True, False):
        env = VideoWorldModelEnv(checkpoint=checkpoint, use_cache=use_cache, temperature=0.0)
        env.reset(seed=1)
        outputs.append(np.stack([env.step(np.array([50.0 * t, 300.0], np.float32))[0] for t in range(4)]))
    assert np.array_equal(outputs[0], outputs[1])


def test_vector_env_equals_single_envs(checkpoint):
    vec = gym.make_vec("RLVRWorld-Video-v0", num_envs=3, checkpoint=checkpoint)
    assert isinstance(vec.unwrapped, VideoWorldModelVectorEnv)
    obs, _ = vec.reset(seed=10)
    singles = [VideoWorldModelEnv(checkpoint=checkpoint) for _ in range(3)]
    single_obs = [env.reset(seed=10 + i)[0] for i, env in enumerate(singles)]
    assert all(np.array_equal(obs[i], single_obs[i]) for i in range(3))
    rng = np.random.default_rng(0)
    for _ in range(4):
        actions = rng.uniform(0, 512, (3, 2)).astype(np.float32)
        obs, *_ = vec.step(actions)
        for i, env in enumerate(singles):
            assert np.array_equal(obs[i], env.step(actions[i])[0])


def test_reset_from_given_frame_and_bad_inputs(checkpoint):
    env = VideoWorldModelEnv(checkpoint=checkpoint)
    frame = np.full((64, 64, 3), 200, np.uint8)
    obs, info = env.reset(seed=0, options={"frame": frame})
    assert np.array_equal(obs, frame) and info["start_index"] == -1
    with pytest.raises(ValueError, match="shape"):
        env.reset(options={"frame": np.zeros((96, 96, 3), np.uint8)})
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="NaN"):
        env.step(np.array([np.nan, 1.0], np.float32))
    with pytest.raises(FileNotFoundError):
        VideoWorldModelEnv(checkpoint="/nonexistent/model")


def test_render_modes(checkpoint):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = VideoWorldModelEnv(checkpoint=checkpoint, render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    assert np.array_equal(env.render(), obs)
    human = VideoWorldModelEnv(checkpoint=checkpoint, render_mode="human")
    human.reset(seed=0)
    human.step(np.array([10.0, 10.0], np.float32))
    human.close()
    with pytest.raises(ValueError, match="render_mode"):
        VideoWorldModelEnv(checkpoint=checkpoint, render_mode="ascii")


def test_default_embedded_model_works_without_arguments():
    env = gym.make("RLVRWorld-Video-v0")
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(env.action_space.sample())
    assert obs.shape == (64, 64, 3) and obs.dtype == np.uint8
