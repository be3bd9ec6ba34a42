"""Bootstrap confidence intervals for per-episode / per-window scores (percentile method, seeded)."""

from __future__ import annotations

import numpy as np


def bootstrap_ci(values: np.ndarray, resamples: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (1-D; NaN entries are an error)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if values.size == 0 or not np.isfinite(values).all():
        raise ValueError("bootstrap needs a non-empty array of finite values")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (resamples, len(values)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def paired_gain(baseline: np.ndarray, candidate: np.ndarray, resamples: int = 2000, seed: int = 0) -> dict[str, float]:
    """Mean of baseline - candidate over paired items (a positive gain: the candidate's error is lower)
    with its bootstrap 95% interval; `excludes_zero` says whether the interval leaves out 0."""
    baseline, candidate = np.asarray(baseline, dtype=np.float64), np.asarray(candidate, dtype=np.float64)
    if baseline.shape != candidate.shape:
        raise ValueError(f"paired arrays differ in shape: {baseline.shape} vs {candidate.shape}")
    diff = baseline - candidate
    low, high = bootstrap_ci(diff, resamples, seed=seed)
    return {"gain": float(diff.mean()), "low": low, "high": high, "excludes_zero": bool(low > 0 or high < 0)}


__all__ = ["bootstrap_ci", "paired_gain"]
