"""The keypoint tokenizer: its API contract, persistence, the foreground rule, and training on any episode folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer, KeypointTokenizerConfig
from rlvr_sim.models.pose_tokenizer import load_frame_tokenizer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _frames(n: int, size: int = 64, seed: int = 0) -> np.ndarray:
    """White frames with one blue 5x5 square at a random place each."""
    rng = np.random.default_rng(seed)
    frames = np.full((n, size, size, 3), 255, np.uint8)
    for frame in frames:
        y, x = rng.integers(5, size - 10, 2)
        frame[y : y + 5, x : x + 5] = (60, 90, 230)
    return frames


def test_encode_decode_shapes_and_errors():
    tok = KeypointTokenizer(KeypointTokenizerConfig(keypoints=4, width=8)).eval()
    frames = _frames(3)
    codes = tok.encode(frames)
    assert codes.shape == (3, 8) and codes.dtype == np.int64 and codes.min() >= 0 and codes.max() < 128
    assert tok.decode(codes, frames).shape == frames.shape
    with pytest.raises(ValueError, match="context"):
        tok.decode(codes, None)
    with pytest.raises(ValueError, match=r"lie in \[0, 128\)"):
        tok.decode(codes + 200, frames)
    with pytest.raises(ValueError, match="shape"):
        tok.decode(codes[:, :3], frames)
    with pytest.raises(ValueError, match="uint8"):
        tok.encode(frames.astype(np.float32))
    with pytest.raises(ValueError, match="context frames for"):
        tok.decode(codes, frames[:2])


def test_points_only_land_on_what_differs_from_the_background():
    """With one foreground square, every point of an untrained network lies on it (the softmax is restricted
    to foreground pixels): no point can mark an empty place."""
    torch.manual_seed(0)
    tok = KeypointTokenizer(KeypointTokenizerConfig(keypoints=6, width=8)).eval()
    frames = _frames(8, seed=1)
    codes = tok.encode(frames).reshape(8, 6, 2)
    px = (codes + 0.5) / 128 * 64  # bin centres in pixels
    for frame, points in zip(frames, px):
        ys, xs = np.nonzero((frame != 255).any(-1))
        assert (points[:, 0] >= xs.min() - 1).all() and (points[:, 0] <= xs.max() + 2).all()
        assert (points[:, 1] >= ys.min() - 1).all() and (points[:, 1] <= ys.max() + 2).all()


def test_save_load_round_trip(tmp_path):
    torch.manual_seed(0)
    tok = KeypointTokenizer(KeypointTokenizerConfig(keypoints=3, width=8)).eval()
    with torch.no_grad():
        tok.background.mul_(0.9)
    tok.save(tmp_path / "tok", {"report": {"x": 1}})
    loaded = load_frame_tokenizer(tmp_path / "tok")
    assert isinstance(loaded, KeypointTokenizer) and loaded.context_free
    frames = _frames(4, seed=2)
    assert np.array_equal(loaded.encode(frames), tok.encode(frames))
    assert np.array_equal(loaded.decode(tok.encode(frames), frames), tok.decode(tok.encode(frames), frames))


def test_bad_config():
    with pytest.raises(ValueError, match="multiple of 8"):
        KeypointTokenizerConfig(image_size=60)
    with pytest.raises(ValueError, match="keypoints"):
        KeypointTokenizerConfig(keypoints=0)


def test_training_script_on_an_episode_folder(tmp_path):
    """`training/tokenizer.py --kind keypoint` on a folder of episodes: a checkpoint the task can load, a
    report beside copy-context, resumable state; the 7-dim real-robot-like fixture (non-square frames)."""
    from training.tokenizer import main

    out = tmp_path / "tok"
    report = main(["--data", str(FIXTURES / "npz_robot7"), "--out", str(out), "--kind", "keypoint", "--steps", "3",
                   "--width", "8", "--keypoints", "4", "--batch-size", "4", "--horizon", "2", "--test-fraction", "0.5",
                   "--save-every", "2"])
    assert report["steps"] == 3 and report["gap1_copy_mse"] > 0
    assert (out / "train_state.pt").is_file()
    tok = load_frame_tokenizer(out)
    assert isinstance(tok, KeypointTokenizer) and tok.config.keypoints == 4
    assert not np.allclose(tok.background.numpy(), 1.0)  # the median frame of the data, not the default


def test_keypoint_decode_reuses_the_anchor_exactly():
    """The keypoint tokenizer's decode reuses its anchor's half of the U-Net input across calls (the env decodes
    every step over one anchor): the frames must be exactly those of `draw`, and a new anchor, new weights or a
    second chunk must never see another call's cached anchor."""
    torch.manual_seed(0)
    tok = KeypointTokenizer(KeypointTokenizerConfig(image_size=16, keypoints=2, bins=16, width=8)).eval()
    with torch.no_grad():
        tok.background.fill_(0.5)
        tok.out[0].bias.zero_()  # an open mask: every pixel is drawn by the U-Net, so any difference shows
    rng = np.random.default_rng(0)

    def reference(codes, context):  # decode as it was: draw() from scratch
        with torch.no_grad():
            ctx = tok._to_tensor(context)
            ctx_points, _ = tok.quantise(tok.points(ctx))
            points = tok.codes_to_points(torch.from_numpy(codes).long().reshape(-1, 2, 2))
            frames = tok.draw(ctx, ctx_points, points).clamp(0, 1)
        return (frames.permute(0, 2, 3, 1).numpy() * 255.0 + 0.5).astype(np.uint8)

    def frames(n):
        return rng.integers(0, 256, (n, 16, 16, 3), dtype=np.uint8)

    context = frames(5)
    for context_now in (context, context, frames(5), context):  # repeated, replaced, back again
        codes = rng.integers(0, 16, (5, 4))
        assert np.array_equal(tok.decode(codes, context_now, batch_size=2), reference(codes, context_now))
    changed = context.copy()
    changed[3, 4, 4] ^= 1  # one pixel of one anchor: that chunk recomputes
    codes = rng.integers(0, 16, (5, 4))
    assert np.array_equal(tok.decode(codes, changed, batch_size=2), reference(codes, changed))
    with torch.no_grad():
        tok.encoder[-1].weight.mul_(1.5)  # new weights in place (an optimiser step): no stale anchor points
    assert np.array_equal(tok.decode(codes, changed, batch_size=2), reference(codes, changed))
    tok.load_state_dict(KeypointTokenizer(tok.config).state_dict())
    assert np.array_equal(tok.decode(codes, changed, batch_size=2), reference(codes, changed))
