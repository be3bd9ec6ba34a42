"""Reading PushT state off pixels: goal coverage (the success judge) and the T's pose and agent position.

A learned simulator returns frames, not states, so a policy evaluated inside it must perceive, and its
success must be judged, from pixels. gym-pusht draws flat colours (goal LightGreen, T LightSlateGray,
agent RoyalBlue, walls LightGray on white) at 512x512 and resizes to the observation size; image x/y
are world x/y scaled by size/512. Each pixel is labelled with the nearest of those colours.

- `pixel_coverage`: share of the goal-T's pixels covered by T-coloured pixels (gym-pusht's own success
  is coverage > 0.95 computed on the true polygons; compare with `info["coverage"]` to calibrate).
- `estimate_state`: agent position (centroid of agent pixels) and T pose (centroid of T pixels plus the
  angle whose rendered T overlaps them best), in gym-pusht's world units, as `info`-like keys.
"""

from __future__ import annotations

import numpy as np

WORLD_SIZE = 512.0
GOAL_POSE = np.array([256.0, 256.0, np.pi / 4])  # gym-pusht's fixed goal (x, y, angle)
# The T in its body frame (gym-pusht add_tee, scale 30, length 4): the bar and the stem.
TEE_POLYGONS = (
    np.array([(-60.0, 30.0), (60.0, 30.0), (60.0, 0.0), (-60.0, 0.0)]),
    np.array([(-15.0, 30.0), (-15.0, 120.0), (15.0, 120.0), (15.0, 30.0)]),
)
# Area-weighted centroid of the T in its body frame: bar 3600 px^2 at y=15, stem 2700 px^2 at y=75.
TEE_AREA_CENTROID = np.array([0.0, (3600.0 * 15.0 + 2700.0 * 75.0) / 6300.0])
PALETTE = {
    "background": (255, 255, 255),
    "goal": (144, 238, 144),
    "block": (119, 136, 153),
    "agent": (65, 105, 225),
    "wall": (211, 211, 211),
}
LABELS = {name: index for index, name in enumerate(PALETTE)}
_PALETTE_ARRAY = np.array(list(PALETTE.values()), dtype=np.float64)


def _check_frame(frame: np.ndarray) -> np.ndarray:
    frame = np.asarray(frame)
    if frame.ndim != 3 or frame.shape[-1] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 frame, got {frame.shape} {frame.dtype}")
    return frame


def colour_labels(frame: np.ndarray) -> np.ndarray:
    """(H, W) index into PALETTE of each pixel's nearest colour (robust to blur and resize blending)."""
    pixels = _check_frame(frame).astype(np.float64)
    distances = ((pixels[:, :, None, :] - _PALETTE_ARRAY[None, None]) ** 2).sum(-1)
    return distances.argmin(-1)


def _rotate(points: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return points @ np.array([[c, s], [-s, c]])


def tee_mask(pose: np.ndarray, height: int, width: int) -> np.ndarray:
    """Boolean (H, W) mask of the T at `pose` (x, y, angle; world units), pixel centres inside the polygons."""
    import cv2

    supersample = 4
    canvas = np.zeros((height * supersample, width * supersample), np.uint8)
    scale = np.array([width, height]) * supersample / WORLD_SIZE
    for polygon in TEE_POLYGONS:
        world = _rotate(polygon, float(pose[2])) + np.asarray(pose[:2], dtype=np.float64)
        cv2.fillPoly(canvas, [np.round(world * scale * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
    pooled = canvas.reshape(height, supersample, width, supersample).mean(axis=(1, 3))
    return pooled >= 0.5


def pixel_coverage(frame: np.ndarray, goal_pose: np.ndarray = GOAL_POSE) -> float:
    """Fraction of the goal T's pixels that show the block (gym-pusht success: coverage > 0.95)."""
    labels = colour_labels(frame)
    goal = tee_mask(goal_pose, *labels.shape)
    return float((labels[goal] == LABELS["block"]).mean())


def _centroid(mask: np.ndarray) -> np.ndarray | None:
    rows, cols = np.nonzero(mask)
    if len(rows) == 0:
        return None
    height, width = mask.shape
    return np.array([(cols.mean() + 0.5) * WORLD_SIZE / width, (rows.mean() + 0.5) * WORLD_SIZE / height])


def estimate_block_pose(labels: np.ndarray, coarse_steps: int = 24, fine_steps: int = 7) -> np.ndarray | None:
    """(x, y, angle) of the T from a label image: the angle whose rendered T (placed so that its area
    centroid sits on the T pixels' centroid) has the best IoU with them, searched coarse (360/24 degrees)
    then fine around the best; None when no T pixels show."""
    block = labels == LABELS["block"]
    centroid = _centroid(block)
    if centroid is None or block.sum() < 4:
        return None

    def best_of(angles: np.ndarray) -> tuple[float, np.ndarray]:
        best_iou, best_pose = -1.0, np.zeros(3)
        for angle in angles:
            position = centroid - _rotate(TEE_AREA_CENTROID[None], float(angle))[0]
            pose = np.array([position[0], position[1], _wrap(float(angle))])
            rendered = tee_mask(pose, *labels.shape)
            union = (rendered | block).sum()
            iou = (rendered & block).sum() / union if union else 0.0
            if iou > best_iou:
                best_iou, best_pose = iou, pose
        return best_iou, best_pose

    step = 2 * np.pi / coarse_steps
    _, coarse = best_of(np.arange(coarse_steps) * step - np.pi)
    _, fine = best_of(coarse[2] + np.linspace(-step / 2, step / 2, fine_steps))
    return fine


def _wrap(angle: float) -> float:
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


def estimate_state(frame: np.ndarray) -> dict[str, np.ndarray | None]:
    """gym-pusht `info`-style state from a frame: `pos_agent`, `block_pose` (None when not visible), `goal_pose`."""
    labels = colour_labels(frame)
    return {
        "pos_agent": _centroid(labels == LABELS["agent"]),
        "block_pose": estimate_block_pose(labels),
        "goal_pose": GOAL_POSE.copy(),
    }
