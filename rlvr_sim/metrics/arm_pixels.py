"""Reading the ArmReach scene off pixels: where the arm's tip and the puck are, from colour masks alone.

The MuJoCo ArmReach scene (`rlvr_sim.envs.arm`, MJCF `envs/arm/arm_reach.xml`) draws flat colours with no
lighting or multisampling, so every pixel of a true frame is exactly one palette colour; a predicted frame
is labelled pixel by pixel with the nearest palette colour, and an object's position is the centroid of
its label. Positions are in continuous pixel coordinates of the frame they were read from: pixel (row i,
column j) covers [j, j + 1) x [i, i + 1), so its centre is (j + 0.5, i + 0.5), and a scene point (x, y) in
the 512-unit square shows at (x, y) * size / 512. The tip marker is drawn on top of everything, so
`judge_tip` always sees it in a true frame; the puck can be partly hidden under the arm's links, which
biases `judge_puck` (its median error on true frames is still below a pixel; see tests/envs/test_arm.py).
"""

from __future__ import annotations

import numpy as np

WORLD_SIZE = 512.0  # the scene's square, in scene units (as gym-pusht's arena)
# the materials of envs/arm/arm_reach.xml, as 0-255 RGB
PALETTE = {
    "background": (245, 245, 245),
    "wall": (150, 150, 150),
    "puck": (40, 170, 80),
    "upper_arm": (40, 90, 210),
    "forearm": (240, 160, 30),
    "base": (50, 50, 50),
    "tip": (220, 20, 60),
}
LABELS = {name: index for index, name in enumerate(PALETTE)}
_PALETTE_ARRAY = np.array(list(PALETTE.values()), dtype=np.float64)
POSITION_ERROR_CAP = 32.0  # px: an object lost from a predicted frame counts as this far off (half a 64x64 frame)
WORST_OBJECT_SCORE = 2 * POSITION_ERROR_CAP
MIN_PIXELS = 1  # fewer labelled pixels than this and the object counts as not visible (NaN)


def _check_frames(frames: np.ndarray) -> np.ndarray:
    frames = np.asarray(frames)
    if frames.ndim == 3:
        frames = frames[None]
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be uint8 of shape (N, H, W, 3) or (H, W, 3), got {frames.dtype} {frames.shape}")
    return frames


def colour_labels(frames: np.ndarray) -> np.ndarray:
    """(N, H, W) index into PALETTE of each pixel's nearest colour (squared RGB distance)."""
    pixels = _check_frames(frames).astype(np.float32)
    distances = ((pixels[..., None, :] - _PALETTE_ARRAY.astype(np.float32)) ** 2).sum(-1)
    return distances.argmin(-1)


def _centroids(labels: np.ndarray, label: int) -> np.ndarray:
    mask = labels == label
    counts = mask.sum(axis=(1, 2)).astype(np.float64)
    rows = np.arange(labels.shape[1], dtype=np.float64) + 0.5
    cols = np.arange(labels.shape[2], dtype=np.float64) + 0.5
    with np.errstate(invalid="ignore", divide="ignore"):
        x = (mask.sum(axis=1) * cols).sum(axis=1) / counts
        y = (mask.sum(axis=2) * rows).sum(axis=1) / counts
    out = np.stack([x, y], axis=1)
    out[counts < MIN_PIXELS] = np.nan
    return out


def judge_tip(frames: np.ndarray) -> np.ndarray:
    """(N, H, W, 3) uint8 frames -> (N, 2) tip (x, y) in pixels of those frames; NaN where no tip pixel shows."""
    return _centroids(colour_labels(frames), LABELS["tip"])


def judge_puck(frames: np.ndarray) -> np.ndarray:
    """(N, H, W, 3) uint8 frames -> (N, 2) puck (x, y) in pixels (centroid of its visible part); NaN if hidden."""
    return _centroids(colour_labels(frames), LABELS["puck"])


def judge_states(frames: np.ndarray) -> np.ndarray:
    """(N, H, W, 3) uint8 frames -> (N, 4) tip x, y and puck x, y in pixels of those frames (NaN: not visible);
    the arm's counterpart of `rlvr_sim.metrics.pusht_pixels.judge_states`, from one labelling pass."""
    labels = colour_labels(frames)
    return np.concatenate([_centroids(labels, LABELS["tip"]), _centroids(labels, LABELS["puck"])], axis=1)


def object_errors(pred: np.ndarray, gold: np.ndarray, cap: float = POSITION_ERROR_CAP) -> dict[str, np.ndarray]:
    """Per-frame `tip_px` and `puck_px` errors between (N, 4) predicted and true `judge_states`, each capped at
    `cap`: an object the prediction lost while the truth shows it scores the cap; hidden in both, 0."""
    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if pred.shape != gold.shape or pred.ndim != 2 or pred.shape[1] != 4:
        raise ValueError(f"expected two (N, 4) arm state arrays (tip x, y, puck x, y), got {pred.shape} and {gold.shape}")
    out = {}
    for name, cols in (("tip_px", slice(0, 2)), ("puck_px", slice(2, 4))):
        error = np.minimum(np.nan_to_num(np.linalg.norm(pred[:, cols] - gold[:, cols], axis=1), nan=cap), cap)
        out[name] = np.where(np.isnan(pred[:, cols.start]) & np.isnan(gold[:, cols.start]), 0.0, error)
    return out


def object_score(errors: dict[str, np.ndarray]) -> np.ndarray:
    """One number per frame, lower is better, in [0, WORST_OBJECT_SCORE]: tip px + puck px."""
    return errors["tip_px"] + errors["puck_px"]


def world_to_px(points: np.ndarray, size: int) -> np.ndarray:
    """Scene units (..., 2) -> continuous pixel coordinates of a size x size frame."""
    return np.asarray(points, dtype=np.float64) * (size / WORLD_SIZE)


__all__ = ["LABELS", "PALETTE", "POSITION_ERROR_CAP", "WORLD_SIZE", "WORST_OBJECT_SCORE", "colour_labels", "judge_puck",
           "judge_states", "judge_tip", "object_errors", "object_score", "world_to_px"]
