"""The keypoint tokenizer: its API contract, persistence, the foreground rule, and training on any episode folder."""

from __future__ import annotations

import json
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


class _PeakAt(torch.nn.Module):
    """A stand-in encoder whose single heatmap peaks at one (row, column) of whatever size it is given."""

    def __init__(self, row: int, column: int, peak: float = 50.0) -> None:
        super().__init__()
        self.row, self.column, self.peak = row, column, peak

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        heat = torch.zeros(len(x), 1, x.shape[2] // 2, x.shape[3] // 2)
        heat[:, :, self.row, self.column] = self.peak
        return heat


@pytest.mark.parametrize("border", [0, 2])
def test_border_lets_a_point_sit_past_the_edge_of_the_view(border):
    """An object half out of view (the agent against a wall): with `border` heatmap pixels past each edge a point
    can be read outside the frame (and is then coded at the edge bin); without, it stays on the visible part.
    The foreground rule still holds past the edge: a border pixel is allowed only beside a foreground edge pixel."""
    tok = KeypointTokenizer(KeypointTokenizerConfig(image_size=16, keypoints=1, bins=16, width=8, border=border)).eval()
    frames = np.full((1, 16, 16, 3), 255, np.uint8)
    frames[0, 6:10, 0:2] = (60, 90, 230)  # a blob cut by the left edge, half-resolution rows 3-4
    tok.encoder = _PeakAt(row=border + 4, column=0)  # the leftmost heatmap column: past the edge if border > 0
    with torch.no_grad():
        x, y = tok.points(tok._to_tensor(frames))[0, 0].tolist()
    edge = (0.5 - border) / 8 * 2 - 1  # that column's centre, in [-1, 1] frame units
    assert x == pytest.approx(edge, abs=1e-3) and (x < -1) == (border > 0)
    assert y == pytest.approx((4 + 0.5) / 8 * 2 - 1, abs=1e-3)
    assert tok.encode(frames)[0, 0] == (0 if border else 1)  # past the edge: coded in the edge bin
    tok.encoder = _PeakAt(row=0, column=0, peak=5.0)  # a corner with no foreground beside it: masked off
    with torch.no_grad():
        x, y = tok.points(tok._to_tensor(frames))[0, 0].tolist()
    assert y > -0.5  # pulled to the blob, not the empty corner


def test_checkpoints_without_a_border_load_as_before(tmp_path):
    """Tokenizers saved before `border` existed read their points exactly as they did (border 0)."""
    torch.manual_seed(0)
    tok = KeypointTokenizer(KeypointTokenizerConfig(keypoints=3, width=8)).eval()
    tok.save(tmp_path / "tok")
    config_file = tmp_path / "tok" / "tokenizer_config.json"
    stored = json.loads(config_file.read_text())
    del stored["config"]["border"]
    config_file.write_text(json.dumps(stored))
    loaded = load_frame_tokenizer(tmp_path / "tok")
    assert loaded.config.border == 0
    frames = _frames(4, seed=3)
    assert np.array_equal(loaded.encode(frames), tok.encode(frames))


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
                   "--save-every", "2", "--turn-weight", "0.1"])
    assert report["steps"] == 3 and report["gap1_copy_mse"] > 0
    assert (out / "train_state.pt").is_file()
    tok = load_frame_tokenizer(out)
    assert isinstance(tok, KeypointTokenizer) and tok.config.keypoints == 4
    assert not np.allclose(tok.background.numpy(), 1.0)  # the median frame of the data, not the default
    # fine-tuning from it (--init): its weights and background are the start, sizes must match
    tuned = tmp_path / "tuned"
    main(["--data", str(FIXTURES / "npz_robot7"), "--out", str(tuned), "--kind", "keypoint", "--steps", "1",
          "--width", "8", "--keypoints", "4", "--batch-size", "4", "--horizon", "2", "--test-fraction", "0.5",
          "--init", str(out), "--lr", "0"])
    again = load_frame_tokenizer(tuned)
    assert again.config.border == 2
    for name, value in tok.state_dict().items():
        assert torch.equal(again.state_dict()[name], value), name  # lr 0: nothing moved
    assert np.array_equal(np.load(tuned / "background.npy"), np.load(out / "background.npy"))
    made = json.loads((tuned / "tokenizer_config.json").read_text())
    assert made["made_from"] == [json.loads((out / "tokenizer_config.json").read_text())["command"]]
    with pytest.raises(SystemExit, match="keypoints 4 \\(here 3\\)"):
        main(["--data", str(FIXTURES / "npz_robot7"), "--out", str(tmp_path / "bad"), "--kind", "keypoint", "--steps",
              "1", "--width", "8", "--keypoints", "3", "--init", str(out)])


def test_a_horizon_longer_than_the_held_out_episodes_is_reported_not_measured(tmp_path):
    """A horizon longer than every held-out episode (3 frames at frame skip 4) trains, and the report says that gap
    was not measured instead of the script failing after the training."""
    from training.tokenizer import main

    report = main(["--data", str(FIXTURES / "npz_robot7"), "--out", str(tmp_path / "long"), "--kind", "keypoint",
                   "--steps", "1", "--width", "8", "--keypoints", "4", "--batch-size", "4", "--horizon", "5",
                   "--test-fraction", "0.5"])
    assert report["gap5_pairs"] == 0 and report["gap1_recon_mse"] >= 0


def test_freeze_points_trains_the_drawing_only(tmp_path, capsys):
    """`--freeze-points` (with `--init`) sharpens a tokenizer's drawing while every frame keeps its codes, so a world
    model trained on those codes stays valid: the encoder is bit-identical, the decoder moved; without --init: refused."""
    from training.tokenizer import main

    common = ["--data", str(FIXTURES / "npz_robot7"), "--kind", "keypoint", "--width", "8", "--keypoints", "4",
              "--batch-size", "4", "--horizon", "2", "--test-fraction", "0.5"]
    main(common + ["--out", str(tmp_path / "tok"), "--steps", "2"])
    main(common + ["--out", str(tmp_path / "drawn"), "--steps", "3", "--lr", "1e-2", "--turn-weight", "0.5",
                   "--init", str(tmp_path / "tok"), "--freeze-points"])
    before, after = load_frame_tokenizer(tmp_path / "tok"), load_frame_tokenizer(tmp_path / "drawn")
    moved = {name for name, value in before.state_dict().items() if not torch.equal(after.state_dict()[name], value)}
    assert moved and all(not name.startswith("encoder.") and name != "log_temperature" for name in moved), moved
    assert any(name.startswith(("down.", "up.", "out.", "mid.")) for name in moved)
    frames = (np.random.default_rng(0).random((5, 64, 64, 3)) * 255).astype(np.uint8)
    assert np.array_equal(before.encode(frames), after.encode(frames))
    with pytest.raises(SystemExit, match="--freeze-points.*--init"):
        main(common + ["--out", str(tmp_path / "bad"), "--steps", "1", "--freeze-points"])
    with pytest.raises(SystemExit):  # argparse's error: the FSQ grid has no points to keep
        main(["--data", str(FIXTURES / "npz_robot7"), "--out", str(tmp_path / "fsq"), "--kind", "fsq", "--freeze-points"])
    assert "--kind fsq has none" in capsys.readouterr().err


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


class _Centroid(KeypointTokenizer):
    """Points that turn with the frame by construction: every point at the intensity-weighted centre of what differs
    from the background (the turn error's reference); `fixed` puts them at one place of the image instead."""

    fixed = False

    def points(self, frames, background=None):
        background = self.background if background is None else background
        weight = (frames - background).abs().sum(1)  # (N, S, S)
        axis = self.axis
        x = (weight.sum(1) * axis).sum(-1) / weight.sum((1, 2))
        y = (weight.sum(2) * axis).sum(-1) / weight.sum((1, 2))
        centre = torch.stack([x, y], -1)[:, None].expand(-1, self.config.keypoints, 2)
        return torch.full_like(centre, 0.5) if self.fixed else centre


def test_turn_error_is_zero_for_points_that_turn_with_the_frame():
    """`turn_error` (the `--turn-weight` loss) compares the points of turned frames with the turned points: 0 when
    the points follow what they mark (whichever way torch turns the pixels), large when they sit at a place of the
    image; gradients reach the encoder, so training can attach the points."""
    frames = KeypointTokenizer._to_tensor(_frames(6))
    tok = _Centroid(KeypointTokenizerConfig(keypoints=3, width=8))
    for turns in (1, 2, 3):
        assert tok.turn_error(frames, turns).item() < 1e-10
    tok.fixed = True
    assert tok.turn_error(frames, 1).item() > 0.4  # (0.5, 0.5) against (0.5, -0.5): a distance of 1
    learned = KeypointTokenizer(KeypointTokenizerConfig(keypoints=3, width=8))
    learned.turn_error(frames, 1).backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in learned.encoder.parameters())
