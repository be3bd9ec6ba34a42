"""Fixtures shared by the video tests."""

import pytest


@pytest.fixture(scope="session")
def pose_setup(tmp_path_factory):
    """Real gym-pusht episodes (the object reward reads poses with the pixel judge) and the pose tokenizer."""
    pytest.importorskip("gym_pusht")
    from rlvr_sim.envs.video.collect import collect

    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    root = tmp_path_factory.mktemp("pose_task")
    collect(root / "data", episodes=4, seed=0, max_steps=40, mix="expert:1,random:1")
    PoseTokenizer().save(root / "tok")
    return dict(data_dir=str(root / "data"), tokenizer_dir=str(root / "tok"), horizon=4, test_fraction=0.25,
                train_stride=2, test_stride=2, lpips="st-lpips")


@pytest.fixture(scope="module")
def delta_setup(pose_setup, tmp_path_factory):
    """Real gym-pusht episodes with an (untrained) keypoint tokenizer: its codes are what matters here."""
    import torch

    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer, KeypointTokenizerConfig

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("delta_task")
    KeypointTokenizer(KeypointTokenizerConfig(keypoints=4, width=8)).eval().save(root / "tok")
    return dict(pose_setup, tokenizer_dir=str(root / "tok"),
                action_bins={"low": [0, 0], "high": [512, 512], "num_bins": 256})


def save_tiny_video_checkpoint(path, codec, bins):
    """A one-layer untrained video world model for `codec` saved at `path` (meta: horizon 4, frame skip 4, 64x64;
    the caller saves the frame tokenizer under `path / "tokenizer"`)."""
    import torch

    from rlvr_sim.models.action_bins import ActionBins
    from rlvr_sim.models.lm import build_model, save_checkpoint

    torch.manual_seed(0)
    model = build_model("tiny-5m", codec.vocab_size, 256, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    meta = {"video_codec": vars(codec), "action_bins": ActionBins.from_dict(bins).to_dict(),
            "video_settings": {"horizon": 4, "frame_skip": 4, "tokenizer_dir": "tokenizer", "image_size": 64}}
    save_checkpoint(path, model, None, meta)
    return model


@pytest.fixture
def tiny_video_checkpoint():
    """`save_tiny_video_checkpoint(path, codec, bins)`, for tests that serve an untrained model as the env does."""
    return save_tiny_video_checkpoint


def step_codes(world, frame, actions, seed, temperature):
    """The codes `VideoWorldModel.step` (the env's path) generates from one start frame under `actions`, (T, tokens)."""
    import numpy as np

    world.start(frame[None], [seed])
    out = []
    for action in actions:
        world.step(action[None], temperature)
        out.append(world.last_codes[0])
    return np.stack(out)


@pytest.fixture
def env_step_codes():
    """`step_codes(world, frame, actions, seed, temperature)`: what the env generates, to compare with `sample()`."""
    return step_codes
