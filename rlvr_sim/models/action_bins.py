"""Continuous actions as tokens: 256 uniform bins per dimension (RLVR-World / iVideoGPT discretiser).

Per-dimension min/max come from the training set; an action is normalised to [0, 1] with them, clipped
to [0, 1] and binned as floor(x * 256) (x = 1 falls in the last bin). The ranges travel with the model
checkpoint (`to_dict` / `from_dict`), so the same action always maps to the same tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

NUM_BINS = 256


@dataclass
class ActionBins:
    """Per-dimension ranges and the bin count; `encode` maps (…, A) actions to (…, A) bin ids."""

    low: np.ndarray
    high: np.ndarray
    num_bins: int = NUM_BINS

    def __post_init__(self) -> None:
        self.low = np.asarray(self.low, dtype=np.float64).reshape(-1)
        self.high = np.asarray(self.high, dtype=np.float64).reshape(-1)
        if self.low.shape != self.high.shape or self.low.size == 0:
            raise ValueError(f"action ranges must be equal-length vectors, got {self.low.shape} and {self.high.shape}")
        if not (np.isfinite(self.low).all() and np.isfinite(self.high).all()):
            raise ValueError("action ranges must be finite")
        if (self.high < self.low).any():
            raise ValueError("action range high < low in some dimension")

    @property
    def action_dim(self) -> int:
        return int(self.low.size)

    @classmethod
    def fit(cls, actions: np.ndarray, num_bins: int = NUM_BINS) -> ActionBins:
        """Ranges from training actions of shape (N, A) (NaN rows are an error, not silently skipped)."""
        actions = np.asarray(actions, dtype=np.float64)
        if actions.ndim != 2 or actions.shape[0] == 0:
            raise ValueError(f"fit needs actions of shape (N, A) with N > 0, got {actions.shape}")
        if not np.isfinite(actions).all():
            raise ValueError("training actions contain NaN or inf")
        return cls(actions.min(axis=0), actions.max(axis=0), num_bins)

    def _check(self, actions: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape[-1:] != (self.action_dim,):
            raise ValueError(f"actions must end in dimension {self.action_dim}, got shape {actions.shape}")
        if not np.isfinite(actions).all():
            raise ValueError("actions contain NaN or inf")
        return actions

    def encode(self, actions: np.ndarray) -> np.ndarray:
        """Bin ids in [0, num_bins) (int64), same shape as `actions`; out-of-range values are clipped."""
        actions = self._check(actions)
        span = np.where(self.high > self.low, self.high - self.low, 1.0)
        unit = np.clip((actions - self.low) / span, 0.0, 1.0)
        return np.minimum(np.floor(unit * self.num_bins), self.num_bins - 1).astype(np.int64)

    def decode(self, bins: np.ndarray) -> np.ndarray:
        """Bin centres as actions (float32); the inverse of `encode` up to half a bin width."""
        bins = np.asarray(bins)
        if bins.shape[-1:] != (self.action_dim,):
            raise ValueError(f"bins must end in dimension {self.action_dim}, got shape {bins.shape}")
        if bins.size and (bins.min() < 0 or bins.max() >= self.num_bins):
            raise ValueError(f"bin ids must lie in [0, {self.num_bins})")
        return (self.low + (bins + 0.5) / self.num_bins * (self.high - self.low)).astype(np.float32)

    def to_dict(self) -> dict[str, Any]:
        return {"low": self.low.tolist(), "high": self.high.tolist(), "num_bins": self.num_bins}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ActionBins:
        missing = {"low", "high"} - set(data)
        if missing:
            raise ValueError(f"action-bin metadata lacks {sorted(missing)}")
        return cls(np.array(data["low"]), np.array(data["high"]), int(data.get("num_bins", NUM_BINS)))
