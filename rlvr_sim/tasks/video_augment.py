"""Training-time augmentation of PushT pose-code windows for `VideoTask` (`augment="d4"` / `"d4_shift"`).

The square arena looks the same under its eight symmetries (four turns, each with or without a mirror), so a
window of pose codes and agent targets maps onto seven more true windows (`PoseTokenizer.symmetry_codes`,
`symmetric_action_bins`). Away from the walls it is also translation invariant: `"d4_shift"` adds
SHIFT_COPIES copies of every symmetric window translated by up to SHIFT_MAX pose bins where the walls stay out
of reach (`window_shifts`). Only pose codes have known symmetries; a learned tokenizer's codes do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlvr_sim.tasks.video_data import Windows

AUGMENTS = ("none", "d4", "d4_shift")
# "d4_shift" adds SHIFT_COPIES copies of every symmetric window translated by up to SHIFT_MAX pose bins
# (16 bins = 64 world units = 8 px at 64x64), where the walls stay out of reach (see window_shifts)
SHIFT_COPIES, SHIFT_MAX = 2, 16


def check_augment(augment: str, frame_tokenizer: Any, action_bins: Any) -> None:
    """`augment="d4"` needs pose codes and a square action range centred on the arena; `"d4_shift"` also
    action bins over [0, 512] in a multiple of the pose bins. A clear ValueError otherwise."""
    from rlvr_sim.metrics.pusht_pixels import WORLD_SIZE

    if augment not in AUGMENTS:
        raise ValueError(f"augment must be one of {AUGMENTS}, got {augment!r}")
    if augment == "none":
        return
    if not hasattr(frame_tokenizer, "symmetry_codes"):
        raise ValueError("augment='d4' needs the PushT pose tokenizer (a learned tokenizer's codes have no "
                         "known symmetry)")
    low, high = action_bins.low, action_bins.high
    if action_bins.action_dim != 2 or np.ptp(low) or np.ptp(high) or low[0] + high[0] != WORLD_SIZE:
        raise ValueError("augment='d4' needs 2-D actions binned over the same range in x and y, centred on "
                         f"the arena (e.g. action_bins low [0, 0], high [512, 512]); got low {low.tolist()}, "
                         f"high {high.tolist()}")
    pose_bins = frame_tokenizer.config.bins
    if augment == "d4_shift" and (high[0] - low[0] != WORLD_SIZE or action_bins.num_bins % pose_bins):
        raise ValueError("augment='d4_shift' needs action bins over [0, 512] in a multiple of the pose bins "
                         f"({pose_bins}), so a translation moves actions by whole bins")


def symmetric_action_bins(bins: np.ndarray, k: int, num_bins: int, inverse: bool = False) -> np.ndarray:
    """Action bins (..., 2) of `num_bins` per axis under symmetry `k` (see `PoseTokenizer.symmetry_codes`)."""
    last = num_bins - 1
    flip, turns = divmod(k, 4)
    ops = ["flip"] * flip + ["turn"] * turns
    for op in (reversed(ops) if inverse else ops):
        x, y = bins[..., 0], bins[..., 1]
        if op == "flip":
            bins = np.stack([last - x, y], -1)
        else:
            bins = np.stack([last - y, x] if inverse else [y, last - x], -1)
    return bins


def shift_codes(codes: np.ndarray, shift: np.ndarray, slot: int) -> np.ndarray:
    """Pose codes (W, ..., 5) with agent and T positions moved by `shift` (W, 2) bins ("not visible" stays)."""
    out = codes.copy()
    extra = (1,) * (codes.ndim - 2)
    for i, axis in ((0, 0), (1, 1), (2, 0), (3, 1)):
        out[..., i] += shift[:, axis].reshape(-1, *extra)
    return np.where(codes % slot == slot - 1, codes, out)


def window_shifts(w: Windows, rng: np.random.Generator, pose_bins: int, slot: int, num_action_bins: int) -> np.ndarray:
    """One random translation (dx, dy) in pose bins per window, (0, 0) where none is safe.

    Safe: before and after the move, every agent position and commanded target keeps >= 32 world units
    and every T origin >= 64 from the arena's edge, and |d| <= SHIFT_MAX bins, so the walls (the only
    thing in the arena that breaks translation invariance) are out of reach in both windows."""
    bins = pose_bins
    per_action_bin = num_action_bins // bins
    codes = np.concatenate([w.abs_codes[:, None], w.cond_codes], axis=1) % slot  # (W, T+2, 5)
    shifts = np.zeros((len(codes), 2), np.int64)
    margin_agent, margin_block = bins // 16, bins // 8
    for axis in (0, 1):
        agent = np.concatenate([codes[..., axis], w.action_bins[..., axis] // per_action_bin], axis=1)
        block = codes[..., 2 + axis]
        low = np.maximum(margin_agent - agent.min(1), margin_block - block.min(1))
        high = np.minimum(bins - 1 - margin_agent - agent.max(1), bins - 1 - margin_block - block.max(1))
        safe = (low <= 0) & (high >= 0)  # the original window is clear of the walls too
        low, high = np.maximum(low, -SHIFT_MAX), np.minimum(high, SHIFT_MAX)
        draw = rng.integers(np.minimum(low, 0), np.maximum(high, 0) + 1)
        shifts[:, axis] = np.where(safe, draw, 0)
    shifts[(codes[..., :4] == bins).any((1, 2))] = 0  # an object out of view: no translation
    return shifts


def window_variants(w: Windows, augment: str, frame_tokenizer: Any, num_action_bins: int,
                    seed: int) -> list[tuple]:
    """(symmetry k, per-window shift (W, 2), abs codes, cond codes, action bins[, kept rows]) of a training
    split: the original only (`augment="none"`), or each of the 8 symmetries (and translated copies)."""
    none = np.zeros((len(w.abs_codes), 2), np.int64)
    if augment == "none":
        return [(0, none, w.abs_codes, w.cond_codes, w.action_bins)]
    tok = frame_tokenizer
    slot = tok.config.slot_size
    per_action_bin = num_action_bins // tok.config.bins  # action bins per pose bin
    rng = np.random.default_rng(seed)
    out = []
    for k in range(8):
        abs_codes, cond_codes = tok.symmetry_codes(w.abs_codes, k), tok.symmetry_codes(w.cond_codes, k)
        action_bins = symmetric_action_bins(w.action_bins, k, num_action_bins)
        out.append((k, none, abs_codes, cond_codes, action_bins))
        for _ in range(SHIFT_COPIES if augment == "d4_shift" else 0):
            moved = Windows(w.context, w.future, abs_codes, cond_codes, action_bins)
            shift = window_shifts(moved, rng, tok.config.bins, slot, num_action_bins)
            keep = shift.any(1)
            out.append((k, shift[keep], shift_codes(abs_codes[keep], shift[keep], slot),
                        shift_codes(cond_codes[keep], shift[keep], slot),
                        action_bins[keep] + per_action_bin * shift[keep][:, None, :], np.flatnonzero(keep)))
    return out


__all__ = ["AUGMENTS", "SHIFT_COPIES", "SHIFT_MAX", "check_augment", "shift_codes", "symmetric_action_bins",
           "window_shifts", "window_variants"]
