"""RLVRWorld-Video-v0: check_env, determinism, vector env == N single envs, render modes, bad input."""

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.lm_env import SEED_BOUND
from rlvr_sim.envs.video.world_model_env import (
    VideoWorldModelEnv,
    VideoWorldModelVectorEnv,
)

import rlvr_sim  # noqa: F401  (registers the ids)
from rlvr_sim.data.episodes import resize_frames
from rlvr_sim.models.action_bins import ActionBins
from rlvr_sim.models.lm import build_model, save_checkpoint
from rlvr_sim.models.visual_tokenizer import FrameTokenizer, TokenizerConfig
from rlvr_sim.tasks.video import VideoCodec


def _tiny_checkpoint(root, codec: VideoCodec, tokenizer, horizon: int, frames: np.ndarray,
                     logit_scale: float = 1.0) -> str:
    """A tiny untrained video world model in our checkpoint layout (fast to build and to step).

    `logit_scale` multiplies the output layer: an untrained model's logits are all near 0, so its greedy choice
    can sit on a near-tie that float rounding breaks differently at another batch size; scaled, the gaps are
    far above rounding and a greedy comparison across batch sizes tests the code, not the rounding."""
    import torch

    torch.manual_seed(0)
    model = build_model("tiny-5m", codec.vocab_size, 256, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(logit_scale)
    bins = ActionBins(np.array([0.0, 0.0]), np.array([512.0, 512.0]))
    meta = {"video_codec": vars(codec), "action_bins": bins.to_dict(),
            "video_settings": {"horizon": horizon, "frame_skip": 4, "tokenizer_dir": "tokenizer", "image_size": 64}}
    save_checkpoint(root, model, None, meta)
    tokenizer.save(root / "tokenizer")
    np.savez_compressed(root / "start_frames.npz", image=frames, future=frames[:, None],
                        action=np.zeros((len(frames), 1, 2)))
    return str(root)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """Over the learned FSQ tokenizer (64 + 16 codes), random start frames."""
    import torch

    torch.manual_seed(0)  # the untrained tokenizer's weights: not whatever RNG state earlier tests on this worker left
    codec = VideoCodec(codebook_size=25, action_dim=2, abs_tokens=64, cond_tokens=16)
    frames = np.random.default_rng(0).integers(0, 256, (4, 64, 64, 3), dtype=np.uint8)
    return _tiny_checkpoint(tmp_path_factory.mktemp("video_ckpt"), codec,
                            FrameTokenizer(TokenizerConfig(width=8, levels=[5, 5])).eval(), 3, frames, logit_scale=50.0)


@pytest.fixture(scope="module")
def pose_checkpoint(tmp_path_factory):
    """Over the PushT pose tokenizer (5 codes per frame), start frames of a gym-pusht episode."""
    import cv2
    from rlvr_sim.envs.video.collect import rollout_episode

    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    tokenizer = PoseTokenizer()
    codec = VideoCodec(codebook_size=tokenizer.config.codebook_size, action_dim=2, abs_tokens=5, cond_tokens=5)
    images = rollout_episode("expert", 0, 8, 4, 96)["image"]
    frames = np.stack([cv2.resize(f, (64, 64), interpolation=cv2.INTER_AREA) for f in images[::4]])
    return _tiny_checkpoint(tmp_path_factory.mktemp("pose_ckpt"), codec, tokenizer, 4, frames)


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
    # horizon 3: after 3 steps the context rolls back to the frame 1 step ago (horizon // 2 kept as context)
    assert truncated and anchors == [1, 2, 3, 2, 3]
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("kind", ["fsq", "pose"])
def test_env_samples_what_the_grpo_and_evaluation_sampler_samples(checkpoint, pose_checkpoint, kind):
    """One generation path: the env's frames are the frames `sample(..., forced=actions)` gives (the
    sampler GRPO trains with and the single-step evaluation uses) for the same seed, start frame and
    actions, and `VideoWorldModel.rollout` (the multi-step evaluation) equals stepping the env."""
    import torch
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    from rlvr_sim.rl.sampler import sample

    torch.manual_seed(0)
    path = checkpoint if kind == "fsq" else pose_checkpoint
    world = VideoWorldModel(path)
    frame = world.start_frames[0]
    actions = np.array([[40.0, 400.0], [300.0, 20.0], [500.0, 250.0]])
    seed = 1234
    codes = world.tokenizer.encode(frame[None], None, "absolute")[0]
    bins = world.action_bins.encode(actions)
    prompt = [world.codec.bos_id, *map(int, codes), *world.codec.action_tokens(bins[0])]
    forced = [world.codec.action_tokens(b) for b in bins[1:]]
    out = sample(world.model, [prompt], max_new_tokens=3 * world.codec.cond_tokens, seeds=[seed],
                 forced=[forced], interleave_every=world.codec.cond_tokens,
                 allowed_token_range=(0, world.codec.codebook_size), pad_token_id=world.codec.pad_id)
    sampled = world.codec.parse_frames(out.completions()[0], 3)[0]
    world.start(frame[None], [seed])
    stepped = [world.step(a[None]) for a in actions]
    assert np.array_equal(np.stack(world.history_codes[1:], axis=1)[0], sampled)
    rolled = VideoWorldModel(path).rollout(frame[None], actions[None], [seed])[0]
    assert np.array_equal(rolled, np.concatenate(stepped))
    # the env, seeded as any world-model env: its episode's info["sample_seed"] replays it in the evaluation path
    env = VideoWorldModelEnv(checkpoint=path, temperature=1.0)
    _, info = env.reset(seed=0, options={"frame": frame})
    served = np.stack([env.step(a.astype(np.float32))[0] for a in actions])
    replay = VideoWorldModel(path).rollout(frame[None], actions[None], [info["sample_seed"]], temperature=1.0)[0]
    assert np.array_equal(served, replay)
    assert 0 <= info["sample_seed"] < SEED_BOUND


def test_pose_world_follows_its_tokens_past_the_window(pose_checkpoint):
    """Past the training window the pose world keeps the last frames' codes as context (no re-judging)."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    world = VideoWorldModel(pose_checkpoint)
    frames = world.rollout(world.start_frames[:2], np.full((2, 7, 2), 256.0), [0, 1])
    # horizon 4: rolled after step 4 (anchor = frame 2) and after step 6 (anchor = frame 4), then step 7
    assert frames.shape == (2, 7, 64, 64, 3) and world.steps_since_anchor == 3
    codes = world.history_codes  # anchor, frames 5, 6, 7: the predicted codes themselves
    expected = world.codec.window_tokens(codes[0][0], [codes[1][0], codes[2][0]],
                                         [b[0] for b in world.history_bins[:2]])
    assert world.prefix[0] == expected


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_vector_env_equals_single_envs(checkpoint, temperature):
    """Seeded as the text vector envs (`vector_seeds`): sub-env i is the single env seeded seed + i."""
    vec = gym.make_vec("RLVRWorld-Video-v0", num_envs=3, checkpoint=checkpoint, temperature=temperature)
    assert isinstance(vec.unwrapped, VideoWorldModelVectorEnv)
    obs, info = vec.reset(seed=10)
    singles = [VideoWorldModelEnv(checkpoint=checkpoint, temperature=temperature) for _ in range(3)]
    firsts = [env.reset(seed=10 + i) for i, env in enumerate(singles)]
    assert all(np.array_equal(obs[i], firsts[i][0]) for i in range(3))
    assert list(info["sample_seed"]) == [first[1]["sample_seed"] for first in firsts]
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
    # a square RGB frame of another size (gym-pusht's own 96x96) is resized as training frames were
    big = np.full((96, 96, 3), 200, np.uint8)
    big[:48] = 30
    obs, _ = env.reset(seed=0, options={"frame": big})
    assert np.array_equal(obs, resize_frames(big[None], 64)[0])
    for bad in (np.zeros((96, 80, 3), np.uint8), np.zeros((64, 64, 4), np.uint8), np.zeros((64, 64, 3), np.float32),
                np.zeros((96, 96, 3), np.float64)):
        with pytest.raises(ValueError, match="shape"):
            env.reset(options={"frame": bad})
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
    with pytest.raises(ValueError, match="render_mode"):
        VideoWorldModelVectorEnv(num_envs=2, checkpoint=checkpoint, render_mode="ascii")


def test_negative_temperature_is_refused_as_by_the_text_envs(checkpoint):
    for make in (lambda: VideoWorldModelEnv(checkpoint=checkpoint, temperature=-0.5),
                 lambda: VideoWorldModelVectorEnv(num_envs=2, checkpoint=checkpoint, temperature=-0.5)):
        with pytest.raises(ValueError, match="temperature must be >= 0"):
            make()


def test_default_embedded_model_works_without_arguments():
    env = gym.make("RLVRWorld-Video-v0")
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(env.action_space.sample())
    assert obs.shape == (64, 64, 3) and obs.dtype == np.uint8


def test_uncertainty_samples_report_disagreement_without_changing_the_served_world(pose_checkpoint):
    served = VideoWorldModelEnv(checkpoint=pose_checkpoint)
    shadowed = VideoWorldModelEnv(checkpoint=pose_checkpoint, uncertainty_samples=3)
    a, _ = served.reset(seed=5)
    b, _ = shadowed.reset(seed=5)
    assert np.array_equal(a, b)
    spreads = []
    for target in ([60.0, 256.0], [452.0, 256.0], [256.0, 60.0]):
        obs_a, *_, info_a = served.step(np.array(target, np.float32))
        obs_b, *_, info_b = shadowed.step(np.array(target, np.float32))
        assert np.array_equal(obs_a, obs_b) and "uncertainty" not in info_a
        spreads.append(info_b["uncertainty"])
    # an untrained model samples near-uniform codes: its worlds disagree
    assert all(0.0 <= s <= 100.0 for s in spreads) and max(spreads) > 0.1
    with pytest.raises(ValueError, match="uncertainty_samples"):
        VideoWorldModelEnv(checkpoint=pose_checkpoint, uncertainty_samples=-1)


def test_median_codes_pick_the_median_bin_per_slot():
    """Mass 0.4 on "still" (bin 50) and 0.6 spread over bins 53-55: greedy says still, the median moves."""
    import torch
    from rlvr_sim.envs.video.world_model_env import median_codes

    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    tok = PoseTokenizer()
    size, bins = tok.config.slot_size, tok.config.bins
    logits = torch.full((3, tok.config.codebook_size + 10), -1e9)
    for row, slot in ((0, 2), (1, 4), (2, 0)):
        lo = slot * size
        if row == 0:
            logits[row, lo + 50], logits[row, lo + 53 : lo + 56] = np.log(0.4), np.log(0.2)
        if row == 1:  # the angle wraps: most of the mass just past the seam
            logits[row, lo + 127], logits[row, lo + 0 : lo + 3] = np.log(0.3), np.log(0.7 / 3)
        if row == 2:  # "not visible" holds most of the mass
            logits[row, lo + bins], logits[row, lo + 10] = np.log(0.7), np.log(0.3)
    assert median_codes(logits[:1], 2, tok).item() == 2 * size + 53  # cdf: 0.4 at 50, 0.6 at 53
    assert median_codes(logits[1:2], 4, tok).item() == 4 * size + 0  # cdf from bin 127: 0.3, then 0.53 at 0
    assert median_codes(logits[2:], 0, tok).item() == bins


def test_median_decoding_runs_in_the_env_and_refuses_what_it_cannot_do(checkpoint, pose_checkpoint):
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    env = gym.make("RLVRWorld-Video-v0", checkpoint=pose_checkpoint, median=True)
    runs = []
    for _ in range(2):
        env.reset(seed=3)
        runs.append(np.stack([env.step([100.0, 400.0])[0] for _ in range(3)]))
    assert (runs[0] == runs[1]).all()  # a point estimate: deterministic
    world = VideoWorldModel(pose_checkpoint)
    world.start(world.start_frames[:1], [0])
    with pytest.raises(ValueError, match="temperature 0"):
        world.step(np.array([[100.0, 400.0]]), temperature=1.0, median=True)
    fsq = VideoWorldModel(checkpoint)
    fsq.start(fsq.start_frames[:1], [0])
    with pytest.raises(ValueError, match="pose-token"):
        fsq.step(np.array([[100.0, 400.0]]), temperature=0.0, median=True)


def test_viewer_shows_the_frames_the_env_gives_for_the_same_seed(pose_checkpoint):
    """The viewer drives the registered env itself (no generation path of its own): for one seed and the
    same actions, its world frames are a plain env rollout's, sampled at temperature 1."""
    from rlvr_sim.viewer.session import ViewerSession
    from rlvr_sim.viewer.worlds import EnvHandle, make_world_model

    def factory():
        return make_world_model(checkpoint=pose_checkpoint, temperature=1.0)

    session = ViewerSession(EnvHandle(factory(), factory, "world model"), mode="play", seed=5)
    session.set_target_fraction(0.2, 0.8)
    viewed = [session.world_frame]
    for _ in range(5):  # past the horizon of 4: the context rolls
        session.step()
        viewed.append(session.world_frame)
    env = VideoWorldModelEnv(checkpoint=pose_checkpoint, temperature=1.0)
    frame, _ = env.reset(seed=5)
    direct = [frame] + [env.step(session.target.copy())[0] for _ in range(5)]
    assert np.array_equal(np.stack(viewed), np.stack(direct))
    assert not all(np.array_equal(direct[0], f) for f in direct[1:])  # the rollout moves: a real comparison


def test_start_with_context_is_the_rolled_window(checkpoint):
    """`start(frame, seeds, context=(past frames, actions))` anchors at the oldest past frame with the rest as
    context: the same prompt the rolling window builds when it re-anchors there, and the same next frame."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    rolled, fresh = VideoWorldModel(checkpoint), VideoWorldModel(checkpoint)
    start = rolled.start_frames[:2]
    actions = np.array([[[100.0, 200.0], [300.0, 120.0]], [[250.0, 400.0], [60.0, 90.0]],
                        [[480.0, 30.0], [200.0, 200.0]], [[10.0, 500.0], [333.0, 222.0]]])  # (step, row, 2)
    rolled.start(start, [0, 1])
    for a in actions[:3]:
        rolled.step(a, temperature=0.0)
    rolled._roll()  # horizon 3: re-anchored at the frame one step back, as the 4th step would
    keep = rolled.steps_since_anchor
    past = np.stack(rolled.history_frames[:keep], axis=1)  # (rows, keep, S, S, 3)
    fresh.start(rolled.history_frames[-1], [0, 1], context=(past, actions[3 - keep : 3].transpose(1, 0, 2)))
    assert fresh.prefix == rolled.prefix and fresh.steps_since_anchor == keep
    np.testing.assert_array_equal(fresh.step(actions[3], temperature=0.0), rolled.step(actions[3], temperature=0.0))
    plain = VideoWorldModel(checkpoint)
    plain.start(rolled.history_frames[-2], [0, 1])
    assert plain.prefix != fresh.prefix


def test_start_context_bad_input_is_named(checkpoint):
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    world = VideoWorldModel(checkpoint)
    frames = world.start_frames[:2]
    good_past = np.stack([frames, frames], axis=1)[:, :1]
    for context, match in (((good_past[:1], np.zeros((1, 1, 2))), "context frames"),
                           ((good_past, np.zeros((2, 2, 2))), "context actions"),
                           ((good_past, np.full((2, 1, 2), np.nan)), "context actions"),
                           ((np.stack([frames] * 3, axis=1), np.zeros((2, 3, 2))), "1 to 2 past frames"),
                           ("nonsense", "context must be")):
        with pytest.raises(ValueError, match=match):
            world.start(frames, [0, 1], context=context)
