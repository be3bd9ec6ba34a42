"""Frames in and out of the learned frame tokenizers (`visual_tokenizer`, `keypoint_tokenizer`): the shape check
that names what is wrong, and the uint8 (N, H, W, 3) -> float (N, 3, H, W) in [0, 1] conversion."""

from __future__ import annotations

import numpy as np
import torch


def check_frames(frames: np.ndarray, size: int, what: str = "frames") -> np.ndarray:
    """`frames` as an array, or a ValueError naming `what` unless it is uint8 of shape (N, size, size, 3)."""
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[1:] != (size, size, 3) or frames.dtype != np.uint8:
        raise ValueError(f"{what} must be uint8 of shape (N, {size}, {size}, 3), got {frames.dtype} {frames.shape}")
    return frames


def frames_to_tensor(frames: np.ndarray) -> torch.Tensor:
    """uint8 (N, H, W, 3) -> float32 (N, 3, H, W) in [0, 1]."""
    return torch.from_numpy(np.ascontiguousarray(frames)).float().permute(0, 3, 1, 2) / 255.0


__all__ = ["check_frames", "frames_to_tensor"]
