"""Compressive FSQ frame tokenizer: a full grid for a context frame, few tokens per future frame.

Two modes share one network (iVideoGPT's compressive idea, scaled to a CPU):
- *absolute* (`ABSOLUTE`): a frame on its own -> `abs_grid` x `abs_grid` codes. These tell the world
  model what the context frame shows; their reconstruction is only a by-product.
- *conditional* (`CONDITIONAL`): a future frame given the context frame's pixels -> `cond_grid` x
  `cond_grid` codes. The decoder sees the context frame through U-Net skips, so codes are spent only on
  what moved (PushT frames are mostly flat background, where copying the last frame is already hard to
  beat). With `output="composite"` (default) it paints over the context frame:
  out = ctx + m * (c - ctx), a per-pixel sigmoid mask m (initialised nearly shut) and a colour layer c,
  so pixels that did not move are copied exactly instead of being re-synthesised slightly blurred
  (the older `"residual"` decoder, ctx + a linear change, tinted and blurred the whole frame and
  reconstructed worse than copying the last frame on LPIPS).
Quantiser: FSQ (finite scalar quantisation) with per-channel `levels`; latents are batch-normalised
before the bounding tanh so they do not saturate onto one code. Colour outputs are linear (a sigmoid
stalls on the exactly-white PushT background) and are clamped to [0, 1] at decode time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from rlvr_sim.models.frames import check_frames, frames_to_tensor
from rlvr_sim.models.tokenizer_checkpoint import CONFIG_FILE, WEIGHTS_FILE, load_tokenizer, save_tokenizer

ABSOLUTE, CONDITIONAL = "absolute", "conditional"


@dataclass
class TokenizerConfig:
    """Sizes of the tokenizer; `levels` fixes the codebook (product of levels codes)."""

    image_size: int = 64  # frames are square; must be abs_grid * 2^k
    abs_grid: int = 8  # tokens per side for an absolute (context) frame
    cond_grid: int = 4  # tokens per side for a conditional (future) frame; divides abs_grid
    levels: list[int] = field(default_factory=lambda: [8, 5, 5, 5])  # FSQ levels: 1000 codes
    width: int = 48  # channels of the conv trunks
    # "composite": a conditional frame is the context frame with painted layers, out = ctx + m * (c - ctx),
    # m a per-pixel sigmoid mask and c a colour (static pixels are copied exactly; only what moved is
    # drawn). "residual" (older checkpoints): out = ctx + linear change.
    output: str = "composite"

    def __post_init__(self) -> None:
        down = self.image_size // self.abs_grid
        if self.image_size % self.abs_grid or down & (down - 1):
            raise ValueError(f"image_size {self.image_size} must be abs_grid {self.abs_grid} times a power of 2")
        ratio = self.abs_grid // max(self.cond_grid, 1)
        if self.cond_grid < 1 or self.abs_grid % self.cond_grid or ratio & (ratio - 1):
            raise ValueError(f"cond_grid {self.cond_grid} must divide abs_grid {self.abs_grid} by a power of 2")
        if self.output not in ("composite", "residual"):
            raise ValueError(f"output must be 'composite' or 'residual', got {self.output!r}")
        if any(level < 2 for level in self.levels):
            raise ValueError(f"FSQ levels must be >= 2, got {self.levels}")

    @property
    def codebook_size(self) -> int:
        return int(np.prod(self.levels))

    def tokens_per_frame(self, mode: str) -> int:
        return self.abs_grid**2 if mode == ABSOLUTE else self.cond_grid**2


class FSQ(nn.Module):
    """Finite scalar quantisation: round each bounded channel to one of `levels[c]` values (straight-through)."""

    def __init__(self, levels: list[int]) -> None:
        super().__init__()
        self.register_buffer("levels", torch.tensor(levels, dtype=torch.float32), persistent=False)
        basis = np.concatenate([[1], np.cumprod(levels[:-1])]).astype(np.int64)
        self.register_buffer("basis", torch.tensor(basis), persistent=False)

    def _bound(self, z: torch.Tensor) -> torch.Tensor:
        half = (self.levels - 1) * (1 - 1e-3) / 2
        offset = torch.where(self.levels % 2 == 0, 0.5, 0.0)
        shift = torch.atanh(offset / half)
        return torch.tanh(z + shift) * half - offset

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z (N, H, W, C) -> (quantised values in [-1, 1], integer codes (N, H, W))."""
        bounded = self._bound(z)
        rounded = bounded + (torch.round(bounded) - bounded).detach()
        digits = (torch.round(bounded) + self.levels // 2).long()
        codes = (digits * self.basis).sum(dim=-1)
        return rounded / (self.levels // 2), codes

    def codes_to_values(self, codes: torch.Tensor) -> torch.Tensor:
        digits = (codes.unsqueeze(-1) // self.basis) % self.levels.long()
        return (digits - self.levels.long() // 2) / (self.levels // 2)


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.SiLU())


class FrameTokenizer(nn.Module):
    """Encoder/decoder pair with an FSQ bottleneck; see the module docstring for the two modes.

    Channel widths grow as resolution falls (`widths[i]` at image_size / 2^i) so that almost all compute
    happens on small feature maps: a CPU trains this in minutes, not hours.
    """

    context_free = False  # conditional codes depend on the context frame

    def __init__(self, config: TokenizerConfig) -> None:
        super().__init__()
        self.config = config
        self.num_down = int(math.log2(config.image_size // config.abs_grid))
        self.cond_down = int(math.log2(config.abs_grid // config.cond_grid))
        w = [min(config.width * 2**i // 4, 2 * config.width) for i in range(self.num_down + 1)]
        w = [max(c, 8) for c in w]
        self.widths = w
        dim = len(config.levels)
        # context-frame feature pyramid (full resolution down to abs_grid), shared by encoder and decoder
        self.ctx_stem = _conv(4, w[0])
        self.ctx_down = nn.ModuleList([_conv(w[i], w[i + 1], 2) for i in range(self.num_down)])
        # encoder: [frame, context, frame - context, mode plane] -> abs_grid features
        self.enc_stem = _conv(10, w[0])
        self.enc_down = nn.ModuleList([_conv(2 * w[i], w[i + 1], 2) for i in range(self.num_down)])
        top = w[-1]
        self.enc_mid = _conv(2 * top, top)
        self.enc_abs = nn.Conv2d(top, dim, 1)
        self.enc_cond = nn.Sequential(*[_conv(top, top, 2) for _ in range(self.cond_down)], nn.Conv2d(top, dim, 1))
        self.norm_abs = nn.BatchNorm2d(dim, affine=False)
        self.norm_cond = nn.BatchNorm2d(dim, affine=False)
        self.quantiser = FSQ(config.levels)
        # decoder: codes -> abs_grid features -> up to full resolution with context skips
        self.dec_abs = nn.Conv2d(dim, top, 1)
        self.dec_cond = nn.Sequential(nn.Conv2d(dim, top, 1),
                                      *[nn.Sequential(nn.Upsample(scale_factor=2), _conv(top, top))
                                        for _ in range(self.cond_down)])
        self.dec_mid = nn.Sequential(_conv(2 * top, top), _conv(top, top))
        self.dec_up = nn.ModuleList([_conv(w[i + 1] + w[i], w[i]) for i in reversed(range(self.num_down))])
        self.composite = config.output == "composite"
        self.dec_out = nn.Conv2d(w[0], 4 if self.composite else 3, 3, 1, 1)
        if self.composite:
            with torch.no_grad():  # start with the mask mostly closed: "nothing moved" copies the context
                self.dec_out.bias[3].fill_(-3.0)

    def _context_features(self, context: torch.Tensor, mode_plane: torch.Tensor) -> list[torch.Tensor]:
        features = [self.ctx_stem(torch.cat([context, mode_plane], dim=1))]
        for down in self.ctx_down:
            features.append(down(features[-1]))
        return features  # resolutions image_size, /2, ..., abs_grid

    @staticmethod
    def _inputs(frames: torch.Tensor, context: torch.Tensor | None, mode: str) -> tuple[torch.Tensor, torch.Tensor]:
        if mode not in (ABSOLUTE, CONDITIONAL):
            raise ValueError(f"mode must be {ABSOLUTE!r} or {CONDITIONAL!r}, got {mode!r}")
        if mode == CONDITIONAL and context is None:
            raise ValueError("conditional tokens need the context frame")
        ref = torch.zeros_like(frames) if mode == ABSOLUTE else context
        plane = torch.full_like(frames[:, :1], 1.0 if mode == ABSOLUTE else 0.0)
        return ref, plane

    def encode_latent(self, frames: torch.Tensor, context: torch.Tensor | None, mode: str) -> tuple[torch.Tensor, torch.Tensor]:
        """frames/context (N, 3, S, S) in [0, 1] -> (quantised latents (N, C, g, g), codes (N, g, g))."""
        ref, plane = self._inputs(frames, context, mode)
        ctx = self._context_features(ref, plane)
        h = self.enc_stem(torch.cat([frames, ref, frames - ref, plane], dim=1))
        for level, down in enumerate(self.enc_down):
            h = down(torch.cat([h, ctx[level]], dim=1))
        h = self.enc_mid(torch.cat([h, ctx[-1]], dim=1))
        z = self.norm_abs(self.enc_abs(h)) if mode == ABSOLUTE else self.norm_cond(self.enc_cond(h))
        values, codes = self.quantiser(z.permute(0, 2, 3, 1))
        return values.permute(0, 3, 1, 2), codes

    def decode_latent(self, values: torch.Tensor, context: torch.Tensor | None, mode: str) -> torch.Tensor:
        """Quantised latents -> frames (N, 3, S, S), unclamped (linear output)."""
        size = self.config.image_size
        ref, plane = self._inputs(torch.zeros(values.shape[0], 3, size, size), context, mode)
        ctx = self._context_features(ref, plane)
        h = self.dec_abs(values) if mode == ABSOLUTE else self.dec_cond(values)
        h = self.dec_mid(torch.cat([h, ctx[-1]], dim=1))
        for step, up in enumerate(self.dec_up):
            h = F.interpolate(h, scale_factor=2.0, mode="nearest")
            h = up(torch.cat([h, ctx[self.num_down - 1 - step]], dim=1))
        out = self.dec_out(h)
        if not self.composite:
            return ref + out
        colour = 0.5 + out[:, :3]
        if mode == ABSOLUTE:
            return colour
        mask = torch.sigmoid(out[:, 3:])
        return ref + mask * (colour - ref)

    def forward(self, frames: torch.Tensor, context: torch.Tensor | None, mode: str) -> tuple[torch.Tensor, torch.Tensor]:
        values, codes = self.encode_latent(frames, context, mode)
        return self.decode_latent(values, context, mode), codes

    # ---- numpy API (uint8 frames in, uint8 frames out) ----

    _to_tensor = staticmethod(frames_to_tensor)

    def _check_frames(self, frames: np.ndarray, what: str) -> np.ndarray:
        return check_frames(frames, self.config.image_size, what)

    @torch.no_grad()
    def encode(self, frames: np.ndarray, context: np.ndarray | None = None, mode: str = ABSOLUTE,
               batch_size: int = 32) -> np.ndarray:
        """uint8 frames (N, S, S, 3) [+ context frames, same shape] -> codes (N, g*g) int64."""
        frames = self._check_frames(frames, "frames")
        if context is not None:
            context = self._check_frames(context, "context frames")
        out = []
        for start in range(0, len(frames), batch_size):
            ctx = None if context is None else self._to_tensor(context[start : start + batch_size])
            _, codes = self.encode_latent(self._to_tensor(frames[start : start + batch_size]), ctx, mode)
            out.append(codes.reshape(len(codes), -1).numpy())
        return np.concatenate(out) if out else np.zeros((0, self.config.tokens_per_frame(mode)), np.int64)

    @torch.no_grad()
    def decode(self, codes: np.ndarray, context: np.ndarray | None = None, mode: str = ABSOLUTE,
               batch_size: int = 32) -> np.ndarray:
        """codes (N, g*g) [+ uint8 context frames] -> uint8 frames (N, S, S, 3)."""
        codes = np.asarray(codes)
        grid = self.config.abs_grid if mode == ABSOLUTE else self.config.cond_grid
        if codes.ndim != 2 or codes.shape[1] != grid * grid:
            raise ValueError(f"{mode} codes must have shape (N, {grid * grid}), got {codes.shape}")
        if codes.size and (codes.min() < 0 or codes.max() >= self.config.codebook_size):
            raise ValueError(f"codes must lie in [0, {self.config.codebook_size})")
        if context is not None:
            context = self._check_frames(context, "context frames")
        out = []
        for start in range(0, len(codes), batch_size):
            chunk = torch.from_numpy(codes[start : start + batch_size]).long().reshape(-1, grid, grid)
            values = self.quantiser.codes_to_values(chunk).permute(0, 3, 1, 2).float()
            ctx = None if context is None else self._to_tensor(context[start : start + batch_size])
            frames = self.decode_latent(values, ctx, mode).clamp(0, 1)
            out.append((frames.permute(0, 2, 3, 1).numpy() * 255.0 + 0.5).astype(np.uint8))
        size = self.config.image_size
        return np.concatenate(out) if out else np.zeros((0, size, size, 3), np.uint8)

    # ---- persistence ----

    def save(self, directory: str | Path, extra: dict | None = None) -> None:
        """Write `tokenizer_config.json` (+ provenance) and `tokenizer.safetensors` into `directory`."""
        save_tokenizer(self, directory, extra)

    @classmethod
    def load(cls, directory: str | Path) -> FrameTokenizer:
        # checkpoints written before the composite decoder have no "output": theirs was residual
        return load_tokenizer(cls, TokenizerConfig, directory, defaults={"output": "residual"})


__all__ = ["ABSOLUTE", "CONDITIONAL", "CONFIG_FILE", "FSQ", "WEIGHTS_FILE", "FrameTokenizer", "TokenizerConfig"]
