"""Keypoint frame tokenizer: a frame becomes K learned image points, drawn back over a context frame.

A learned *visual* tokenizer that keeps what moves, for scenes where a few small objects move over a
static background (a pushed block and a 5-pixel agent; an arm's links and tip). Learned from pixels
alone, with no scene-specific code, after the deep spatial autoencoders of visuomotor learning (Finn et
al. 2016) and conditional image generation from landmarks (Jakab et al. 2018):

- **Encoder**: a small conv net sees the frame and its difference from the data set's median frame (the
  static background, estimated from the training episodes and stored with the weights), so what moves
  stands out whatever the scene, and turns them into K heatmaps; a spatial softmax, restricted to pixels
  that differ from the background (so a point marks something that can move), reads each heatmap's
  expected (x, y) image position. The heatmap runs `border` pixels past each edge of the view (the frame
  continued as background), so an object partly out of view, such as the agent against a wall, is read at
  its centre rather than at the centroid of its visible part. Each coordinate is quantised to `bins` levels
  (straight-through; a point past the edge takes the edge level), so a frame is 2K tokens: x_1, y_1, ...,
  x_K, y_K, each in [0, bins). With 128 bins at 64x64 a token is half a pixel, so a point can say where
  the 5-pixel agent is to well under a pixel.
- **Decoder**: a U-Net sees the context frame's pixels, Gaussian maps (a narrow and a wide one, so a point
  far from what it should mark still gets a gradient) drawn at the context frame's points and at the
  target frame's points, and paints the target over the context frame:
  out = ctx + m * (c - ctx) with a per-pixel mask m (initialised nearly shut) and colour c, so what did
  not move is copied exactly and only what moved is drawn (where it went, and what it uncovered).

Codes depend on the frame alone (`context_free`): the world model's anchor codes and future codes are
the same kind, a rolled context re-uses sampled codes, and decoding needs the anchor frame's pixels
(which the env and the evaluations hold). Points carry geometry, not appearance: a change of colour or
an object entering the view is outside what this tokenizer represents (docs/video.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from rlvr_sim.models.frames import check_frames, frames_to_tensor
from rlvr_sim.models.tokenizer_checkpoint import load_tokenizer, save_tokenizer

FOREGROUND_LEVEL = 0.1  # a pixel this far (max channel, [0, 1]) from the background is fully foreground
OFF_FOREGROUND_LOGIT = -12.0  # heatmap logit added where a pixel is background: points avoid it


@dataclass
class KeypointTokenizerConfig:
    """Sizes of the keypoint tokenizer. `bins` is the codebook (one shared coordinate vocabulary)."""

    image_size: int = 64  # square frames; a multiple of 8 (the U-Net halves it three times)
    keypoints: int = 8  # K points per frame -> 2K tokens
    bins: int = 128  # levels per coordinate: 64 px / 128 = 0.5 px per code at 64x64
    width: int = 32  # channels of the first conv layers (doubled at each halving, capped at 4x)
    sigma: float = 1.5  # width in pixels of the narrow Gaussian map the decoder sees at each point
    wide_sigma: float = 6.0  # and of the wide one
    # half-resolution pixels of heatmap beyond each edge of the frame: an object partly outside the view (the
    # agent against a wall) can be read at its centre, not at the centroid of its visible part (0: old checkpoints)
    border: int = 0
    kind: str = "keypoint"

    def __post_init__(self) -> None:
        if self.image_size < 16 or self.image_size % 8:
            raise ValueError(f"image_size must be a multiple of 8 and >= 16, got {self.image_size}")
        if self.keypoints < 1 or self.bins < 2 or self.width < 4 or self.sigma <= 0 or self.border < 0:
            raise ValueError(f"need keypoints >= 1, bins >= 2, width >= 4, sigma > 0, border >= 0; got {self}")
        if self.kind != "keypoint":
            raise ValueError(f"KeypointTokenizerConfig.kind must be 'keypoint', got {self.kind!r}")

    @property
    def codebook_size(self) -> int:
        return self.bins

    def tokens_per_frame(self, mode: str = "absolute") -> int:
        return 2 * self.keypoints


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.GroupNorm(min(8, cout // 4), cout), nn.SiLU())


class KeypointTokenizer(nn.Module):
    """Frames <-> K quantised image points; see the module docstring."""

    context_free = True  # a frame's codes depend on that frame alone

    def __init__(self, config: KeypointTokenizerConfig | None = None) -> None:
        super().__init__()
        self.config = config = config or KeypointTokenizerConfig()
        w, k, size = config.width, config.keypoints, config.image_size
        # Everything runs at half resolution or below (a CPU trains this in minutes): the input is folded
        # 2x2 into channels (pixel unshuffle) and the output unfolded, so no sub-pixel detail is lost.
        # encoder: heatmaps at half resolution; the softmax expectation reads positions to a fraction of a pixel
        # No coordinate channels here: a translation-equivariant encoder can only put a point where something
        # is, not at a fixed place (with coordinates it learned fixed points that mark nothing).
        self.encoder = nn.Sequential(nn.PixelUnshuffle(2), _block(24, w), _block(w, w), _block(w, w),
                                     nn.Conv2d(w, k, 1))
        self.log_temperature = nn.Parameter(torch.zeros(()))
        # decoder U-Net over [context rgb, context maps, target maps, coordinates], folded 2x2
        widths = [w, 2 * w, 2 * w]
        self.fold = nn.PixelUnshuffle(2)
        self.down = nn.ModuleList([_block(4 * (3 + 4 * k + 2), widths[0])] +
                                  [_block(widths[i], widths[i + 1], 2) for i in range(2)])
        self.mid = _block(widths[2], widths[2])
        self.up = nn.ModuleList([_block(widths[i + 1] + widths[i], widths[i]) for i in reversed(range(2))])
        self.out = nn.Sequential(nn.Conv2d(widths[0], 16, 3, 1, 1), nn.PixelShuffle(2))
        with torch.no_grad():  # the mask starts nearly shut: "nothing moved" copies the context frame
            self.out[0].bias[12:].fill_(-3.0)  # pixel shuffle: output channel c unfolds inputs 4c .. 4c + 3
        # the static background (median training frame), set by the trainer and saved with the weights
        self.register_buffer("background", torch.ones(1, 3, size, size))
        axis = (torch.arange(size, dtype=torch.float32) + 0.5) / size * 2 - 1  # pixel centres in [-1, 1]
        self.register_buffer("axis", axis, persistent=False)
        # heatmap pixel centres in [-1, 1] frame units, `border` of them beyond each edge (read past the frame)
        b = config.border
        half = (torch.arange(-b, size // 2 + b, dtype=torch.float32) + 0.5) / (size // 2) * 2 - 1
        self.register_buffer("half_axis", half, persistent=False)

    # ---- the network on tensors: frames (N, 3, S, S) in [0, 1], points (N, K, 2) in [-1, 1] (x, y) ----
    def _coords(self, n: int, axis: torch.Tensor) -> torch.Tensor:
        ys, xs = torch.meshgrid(axis, axis, indexing="ij")
        return torch.stack([xs, ys])[None].expand(n, 2, len(axis), len(axis))

    def points(self, frames: torch.Tensor, background: torch.Tensor | None = None) -> torch.Tensor:
        """Continuous (unquantised) points (N, K, 2) of frames (N, 3, S, S); `background` (1, 3, S, S) in place of
        the data's median frame (the training's turned copies pass it turned)."""
        background = self.background if background is None else background
        difference = frames - background
        # Points may only land on pixels that differ from the background (soft mask, half resolution): the
        # network chooses *which* moving things each point marks, never a fixed place or a static feature.
        foreground = F.max_pool2d((difference.abs().amax(1, keepdim=True) / FOREGROUND_LEVEL).clamp(max=1.0), 2)
        b = self.config.border
        if b:  # the view continued past its edges as background; the mask as at the nearest edge pixel
            difference = F.pad(difference, (2 * b,) * 4)
            frames = F.pad(background, (2 * b,) * 4, mode="replicate") + difference
            foreground = F.pad(foreground, (b,) * 4, mode="replicate")
        heat = self.encoder(torch.cat([frames, difference], 1)) * self.log_temperature.exp()
        heat = heat + OFF_FOREGROUND_LOGIT * (1.0 - foreground)
        n, k, h, w = heat.shape
        prob = torch.softmax(heat.reshape(n, k, h * w), -1).reshape(n, k, h, w)
        x = (prob.sum(2) * self.half_axis).sum(-1)
        y = (prob.sum(3) * self.half_axis).sum(-1)
        return torch.stack([x, y], -1)

    def turn_error(self, frames: torch.Tensor, turns: int) -> torch.Tensor:
        """Mean squared distance ([-1, 1] units) between the points of the frames turned by `turns` quarter turns
        (background turned alike) and the frames' points turned the same way: 0 for points attached to what they
        mark, large for points defined in the image ("the object's top end"), which slide over a turning object."""
        points = self.points(frames)
        turned = self.points(torch.rot90(frames, turns, dims=(2, 3)), torch.rot90(self.background, turns, dims=(2, 3)))
        for _ in range(turns % 4):  # torch.rot90 moves the pixel at (x, y) to (y, -x) per quarter turn
            points = torch.stack([points[..., 1], -points[..., 0]], -1)
        return ((turned - points) ** 2).sum(-1).mean()

    def quantise(self, points: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Points in [-1, 1] -> (bin-centre points, straight-through; integer codes (N, K, 2))."""
        bins = self.config.bins
        codes = ((points.clamp(-1, 1) + 1) / 2 * bins).floor().clamp(0, bins - 1).long()
        centres = (codes.float() + 0.5) / bins * 2 - 1
        return points + (centres - points).detach(), codes

    def codes_to_points(self, codes: torch.Tensor) -> torch.Tensor:
        return (codes.float() + 0.5) / self.config.bins * 2 - 1

    def _maps(self, points: torch.Tensor) -> torch.Tensor:
        """Narrow and wide Gaussian maps (N, 2K, S, S) at the points (differentiable in the points)."""
        dx = (self.axis[None, None, :] - points[..., 0:1]) ** 2  # (N, K, S)
        dy = (self.axis[None, None, :] - points[..., 1:2]) ** 2
        square = dy[..., :, None] + dx[..., None, :]
        maps = [torch.exp(-square / (2 * (sigma * 2 / self.config.image_size) ** 2))
                for sigma in (self.config.sigma, self.config.wide_sigma)]
        return torch.cat(maps, 1)

    def separation(self, points: torch.Tensor, radius_px: float = 3.0) -> torch.Tensor:
        """Mean pairwise closeness exp(-d^2 / 2r^2) of each frame's points: a training penalty that keeps the
        K points from collapsing onto one feature (the failure of keypoint bottlenecks on static scenes)."""
        d2 = ((points[:, :, None] - points[:, None]) ** 2).sum(-1)
        r = radius_px * 2 / self.config.image_size
        k = points.shape[1]
        off = ~torch.eye(k, dtype=torch.bool, device=points.device)
        return torch.exp(-d2 / (2 * r**2))[:, off].mean()

    def draw(self, context: torch.Tensor, context_points: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
        """The frame whose points are `points`, painted over `context` (whose points are `context_points`)."""
        h = torch.cat([context, self._maps(context_points), self._maps(points), self._coords(len(context), self.axis)], 1)
        return self._paint(context, self.fold(h))

    def _folded_context(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What of `draw`'s folded input depends on the context frames alone: [context rgb, context maps] and
        the coordinates, each folded. Folding (pixel unshuffle) maps input channel c to output channels
        4c .. 4c + 3, so folding the parts and concatenating gives exactly `draw`'s folded input."""
        context_points, _ = self.quantise(self.points(context))
        return (self.fold(torch.cat([context, self._maps(context_points)], 1)),
                self.fold(self._coords(len(context), self.axis)))

    def _paint(self, context: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The U-Net over the folded input `h`, painting over `context` (the second half of `draw`)."""
        skips = []
        for i, down in enumerate(self.down):
            h = down(h)
            if i < 2:
                skips.append(h)
        h = self.mid(h)
        for up in self.up:
            h = up(torch.cat([F.interpolate(h, scale_factor=2.0, mode="nearest"), skips.pop()], 1))
        out = self.out(h)
        colour, mask = 0.5 + out[:, :3], torch.sigmoid(out[:, 3:])
        return context + mask * (colour - context)

    def forward(self, frames: torch.Tensor, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Reconstruct `frames` over `context` through the quantised points of both (training); also
        returns the separation penalty of the frames' continuous points."""
        raw = self.points(frames)
        points, _ = self.quantise(raw)
        context_points, _ = self.quantise(self.points(context))
        return self.draw(context, context_points, points), self.separation(raw)

    # ---- the frame-tokenizer API (uint8 frames, integer codes), as the env and task call it ----
    def _check_frames(self, frames: np.ndarray, what: str) -> np.ndarray:
        return check_frames(frames, self.config.image_size, what)

    _to_tensor = staticmethod(frames_to_tensor)

    @torch.inference_mode()
    def encode(self, frames: np.ndarray, context: np.ndarray | None = None, mode: str = "absolute",
               batch_size: int = 64) -> np.ndarray:
        """uint8 frames (N, S, S, 3) -> codes (N, 2K): x_1, y_1, ..., x_K, y_K bins. `context`/`mode` unused."""
        frames = self._check_frames(frames, "frames")
        out = [self.quantise(self.points(self._to_tensor(frames[i : i + batch_size])))[1].reshape(-1, 2 * self.config.keypoints)
               for i in range(0, len(frames), batch_size)]
        return torch.cat(out).numpy() if out else np.zeros((0, 2 * self.config.keypoints), np.int64)

    @torch.inference_mode()
    def decode(self, codes: np.ndarray, context: np.ndarray | None = None, mode: str = "conditional",
               batch_size: int = 64) -> np.ndarray:
        """codes (N, 2K) + uint8 context frames (N, S, S, 3) -> uint8 frames (N, S, S, 3), drawn over the context."""
        codes = np.asarray(codes)
        k = self.config.keypoints
        if codes.ndim != 2 or codes.shape[1] != 2 * k:
            raise ValueError(f"keypoint codes must have shape (N, {2 * k}), got {codes.shape}")
        if codes.size and (codes.min() < 0 or codes.max() >= self.config.bins):
            raise ValueError(f"codes must lie in [0, {self.config.bins})")
        if context is None:
            raise ValueError("keypoint codes are drawn over a context frame: pass the anchor frame(s) as `context`")
        context = self._check_frames(context, "context frames")
        if len(context) != len(codes):
            raise ValueError(f"got {len(context)} context frames for {len(codes)} code rows")
        out, previous, cache = [], getattr(self, "_decode_cache", {}), {}
        for i in range(0, len(codes), batch_size):
            cache[i] = self._context_entry(previous.get(i), context[i : i + batch_size])
            ctx, folded, coords = cache[i][2]
            points = self.codes_to_points(torch.from_numpy(codes[i : i + batch_size]).long().reshape(-1, k, 2))
            h = torch.cat([folded, self.fold(self._maps(points)), coords], 1)  # = draw's folded input
            frames = self._paint(ctx, h).clamp(0, 1)
            out.append((frames.permute(0, 2, 3, 1).numpy() * 255.0 + 0.5).astype(np.uint8))
        self._decode_cache = cache
        size = self.config.image_size
        return np.concatenate(out) if out else np.zeros((0, size, size, 3), np.uint8)

    def _context_entry(self, entry: tuple | None, context: np.ndarray) -> tuple:
        """(weight versions, context frames, (context tensor, its folded [rgb, maps], folded coordinates)) for
        one chunk of `decode`: `entry` (the same chunk's from the previous call) when it still holds.

        A world model decodes every step over the same anchor frames: the encoder pass that reads the anchor's
        points and the anchor's half of the decoder input are reused while the chunk's frames and the weights
        (their storage and in-place version counters: optimiser steps, `load_state_dict`, `.to()`) are unchanged,
        so the frames are exactly `draw`'s, with the anchor's part computed once per anchor, not once per step."""
        weights = tuple((t.data_ptr(), t._version) for t in (*self.parameters(), *self.buffers()))
        if entry is not None and entry[0] == weights and np.array_equal(entry[1], context):
            return entry
        ctx = self._to_tensor(context)
        return weights, context.copy(), (ctx, *self._folded_context(ctx))

    # ---- persistence (the same two files as the FSQ tokenizer) ----
    def save(self, directory: str | Path, extra: dict | None = None) -> None:
        save_tokenizer(self, directory, extra)

    @classmethod
    def load(cls, directory: str | Path) -> KeypointTokenizer:
        return load_tokenizer(cls, KeypointTokenizerConfig, directory)


__all__ = ["KeypointTokenizer", "KeypointTokenizerConfig"]
