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
# A frame's T pixels show a T when their best IoU with a T (`block_fit`) is at least min(1 - MIN_BLOCK_FIT_PIXELS / size,
# MIN_BLOCK_FIT_CAP): at or below the 0.5th percentile of held-out data frames at 48, 64 and 96 px (0.585, 0.69, 0.78;
# the pixels along the T's edges lower the fit at low resolution), and under the fit of gym-pusht's own pictures at
# any size (0.80-0.85 at worst from 64 to 224 px: the fit levels off near 0.87); a smeared or doubled T in a learned
# simulator's frame scores 0.3-0.6 at 64 px (docs/real2sim.md, "A smear is not a T"; `python evaluations/judge_fit.py`).
MIN_BLOCK_FIT_PIXELS, MIN_BLOCK_FIT_CAP = 21.0, 0.75
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


def rotate(vec: np.ndarray, angle: float) -> np.ndarray:
    """Rotate one (2,) vector or an (N, 2) array of vectors by `angle` (radians, counter-clockwise in x/y):
    the one rotation of the PushT code (metrics, scripted policies)."""
    c, s = np.cos(angle), np.sin(angle)
    vec = np.asarray(vec, dtype=np.float64)
    return np.stack([c * vec[..., 0] - s * vec[..., 1], s * vec[..., 0] + c * vec[..., 1]], axis=-1)


def tee_mask(pose: np.ndarray, height: int, width: int) -> np.ndarray:
    """Boolean (H, W) mask of the T at `pose` (x, y, angle; world units), pixel centres inside the polygons."""
    import cv2

    supersample = 4
    canvas = np.zeros((height * supersample, width * supersample), np.uint8)
    scale = np.array([width, height]) * supersample / WORLD_SIZE
    for polygon in TEE_POLYGONS:
        world = rotate(polygon, float(pose[2])) + np.asarray(pose[:2], dtype=np.float64)
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


def _block_points(labels: np.ndarray) -> np.ndarray:
    """World positions (N, 2) of the pixel centres labelled T."""
    rows, cols = np.nonzero(labels == LABELS["block"])
    height, width = labels.shape
    return np.stack([(cols + 0.5) * WORLD_SIZE / width, (rows + 0.5) * WORLD_SIZE / height], axis=1)


def _tee_iou(points: np.ndarray, centroid: np.ndarray, angles: np.ndarray, tee_pixels: float) -> np.ndarray:
    """IoU of T pixels with the T of each angle whose area centroid sits on `centroid` (pixel centres counted in
    the T's body frame; the T's own area is analytic, `tee_pixels`)."""
    cos, sin = np.cos(angles)[:, None], np.sin(angles)[:, None]
    rel = points - centroid  # body frame = rotate by -angle, then shift by the area centroid
    x = cos * rel[None, :, 0] + sin * rel[None, :, 1] + TEE_AREA_CENTROID[0]
    y = -sin * rel[None, :, 0] + cos * rel[None, :, 1] + TEE_AREA_CENTROID[1]
    bar = (np.abs(x) <= 60.0) & (y >= 0.0) & (y <= 30.0)
    stem = (np.abs(x) <= 15.0) & (y > 30.0) & (y <= 120.0)
    inside = (bar | stem).sum(axis=1)
    return inside / (tee_pixels + len(points) - inside)


def estimate_block_pose(labels: np.ndarray, coarse_steps: int = 72, fine_steps: int = 21,
                        with_fit: bool = False) -> np.ndarray | None | tuple[np.ndarray | None, float]:  # fmt: skip
    """(x, y, angle) of the T from a label image, or None when fewer than 4 T pixels show.

    The T is placed so that its area centroid sits on the T pixels' centroid; the angle is the one whose
    T covers them best (IoU of pixel centres, counted in the T's body frame, all candidate angles at
    once): a coarse search over `coarse_steps` angles, then `fine_steps` angles across the best coarse
    cell. The T's own area is analytic (6300 world units^2), so no mask is rasterised.
    `with_fit`: also return that best IoU (`block_fit`; 0.0 without a T): how much the T pixels look like a T.
    """
    points = _block_points(labels)
    if len(points) < 4:
        return (None, 0.0) if with_fit else None
    height, width = labels.shape
    centroid = points.mean(axis=0)
    tee_pixels = 6300.0 * width * height / WORLD_SIZE**2
    step = 2 * np.pi / coarse_steps
    coarse = np.arange(coarse_steps) * step - np.pi
    best = float(coarse[int(np.argmax(_tee_iou(points, centroid, coarse, tee_pixels)))])
    fine = best + np.linspace(-step, step, fine_steps)
    ious = _tee_iou(points, centroid, fine, tee_pixels)
    angle = _wrap(float(fine[int(np.argmax(ious))]))
    position = centroid - rotate(TEE_AREA_CENTROID[None], angle)[0]
    pose = np.array([position[0], position[1], angle])
    return (pose, float(ious.max())) if with_fit else pose


def _wrap(angle: float) -> float:
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


def estimate_state(frame: np.ndarray) -> dict[str, np.ndarray | float | None]:
    """gym-pusht `info`-style state from a frame: `pos_agent`, `block_pose` (None when not visible), `goal_pose`,
    and `block_fit`: the IoU of the T pixels with the T at `block_pose` (0.0 without a T), which a T-coloured
    smear lacks (`is_tee`)."""
    labels = colour_labels(frame)
    pose, fit = estimate_block_pose(labels, with_fit=True)
    return {"pos_agent": _centroid(labels == LABELS["agent"]), "block_pose": pose, "goal_pose": GOAL_POSE.copy(),
            "block_fit": fit}


def min_block_fit(size: int) -> float:
    """The least `block_fit` of a T in a frame `size` pixels across (`MIN_BLOCK_FIT_PIXELS`, `MIN_BLOCK_FIT_CAP`)."""
    return min(1.0 - MIN_BLOCK_FIT_PIXELS / float(size), MIN_BLOCK_FIT_CAP)


def is_tee(block_fit: float | np.ndarray, size: int) -> bool | np.ndarray:
    """Whether T pixels with this `block_fit` in a frame `size` pixels across show a T, so that a pose read off them
    can count as a success; a learned simulator's smeared or doubled T does not (`min_block_fit`)."""
    return np.asarray(block_fit) >= min_block_fit(size)


# ---- object-level fidelity: what a PushT simulator must get right, measured on frames ----
PIXELS_PER_WORLD = 64.0 / WORLD_SIZE  # errors are reported in pixels of a 64x64 frame, whatever the input size
POSITION_ERROR_CAP = 32.0  # px at 64x64: an object that is missing counts as half a frame away
ANGLE_ERROR_CAP = 180.0  # degrees
ANGLE_WEIGHT = 1.0 / 5.0  # 5 degrees of T angle weigh as much as 1 px of position in `object_score`
WORST_OBJECT_SCORE = 2 * POSITION_ERROR_CAP + ANGLE_WEIGHT * ANGLE_ERROR_CAP
# The four-edge action-response test: targets near the middle of each wall (world units), each held 3 model
# steps, after which gym-pusht has the agent on the target.
EDGE_TARGETS = np.array([(60.0, 256.0), (452.0, 256.0), (256.0, 60.0), (256.0, 452.0)])


def judge_states(frames: np.ndarray, with_fit: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """(N, H, W, 3) uint8 frames of any size -> (N, 5) (agent x, y, block x, y, angle) in world units;
    NaN where the object is not visible. `with_fit`: also each frame's `block_fit` (N,) (see `is_tee`)."""
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be uint8 of shape (N, H, W, 3), got {frames.dtype} {frames.shape}")
    states, fits = np.full((len(frames), 5), np.nan), np.zeros(len(frames))
    for i, frame in enumerate(frames):
        estimate = estimate_state(frame)
        if estimate["pos_agent"] is not None:
            states[i, :2] = estimate["pos_agent"]
        if estimate["block_pose"] is not None:
            states[i, 2:] = estimate["block_pose"]
        fits[i] = estimate["block_fit"]
    return (states, fits) if with_fit else states


def object_errors(pred: np.ndarray, gold: np.ndarray) -> dict[str, np.ndarray]:
    """Per-frame errors between (N, 5) predicted and true states (world units, NaN = not visible):
    `agent_px`, `block_px` (pixels at 64x64), `angle_deg`, each capped (a missing object scores the
    cap); `agent_missing` / `block_missing` flag predictions that lost an object the truth shows."""
    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if pred.shape != gold.shape or pred.ndim != 2 or pred.shape[1] != 5:
        raise ValueError(f"expected two (N, 5) state arrays, got {pred.shape} and {gold.shape}")
    agent = np.linalg.norm(pred[:, :2] - gold[:, :2], axis=1) * PIXELS_PER_WORLD
    block = np.linalg.norm(pred[:, 2:4] - gold[:, 2:4], axis=1) * PIXELS_PER_WORLD
    angle = np.abs(np.degrees((pred[:, 4] - gold[:, 4] + np.pi) % (2 * np.pi) - np.pi))
    out = {
        "agent_px": np.minimum(np.nan_to_num(agent, nan=POSITION_ERROR_CAP), POSITION_ERROR_CAP),
        "block_px": np.minimum(np.nan_to_num(block, nan=POSITION_ERROR_CAP), POSITION_ERROR_CAP),
        "angle_deg": np.minimum(np.nan_to_num(angle, nan=ANGLE_ERROR_CAP), ANGLE_ERROR_CAP),
        "agent_missing": np.isnan(pred[:, 0]) & ~np.isnan(gold[:, 0]),
        "block_missing": np.isnan(pred[:, 2]) & ~np.isnan(gold[:, 2]),
    }
    both_missing = np.isnan(gold[:, 0]), np.isnan(gold[:, 2])  # the truth hides it too: no error
    out["agent_px"] = np.where(both_missing[0] & np.isnan(pred[:, 0]), 0.0, out["agent_px"])
    out["block_px"] = np.where(both_missing[1] & np.isnan(pred[:, 2]), 0.0, out["block_px"])
    out["angle_deg"] = np.where(both_missing[1] & np.isnan(pred[:, 2]), 0.0, out["angle_deg"])
    return out


def object_score(errors: dict[str, np.ndarray]) -> np.ndarray:
    """One number per frame, lower is better, in [0, WORST_OBJECT_SCORE]: agent px + block px + angle / 5."""
    return errors["agent_px"] + errors["block_px"] + ANGLE_WEIGHT * errors["angle_deg"]


AGENT_RADIUS_WORLD = 15.0  # gym-pusht's agent disc
# the deepest a disc can lie in the T (centre on the stem's or bar's mid-line, 15 units from each side)
MAX_PENETRATION = (AGENT_RADIUS_WORLD + 15.0) * PIXELS_PER_WORLD


def penetration(states: np.ndarray, tolerance: float = 4.0) -> np.ndarray:
    """(N, 5) states -> (N,) how deep the agent's disc lies inside the T, in px at 64x64, beyond `tolerance`
    world units (one pose bin); 0 where either object is not visible.

    gym-pusht's bodies collide, so a true frame shows the disc touching the T, not inside it (its centre is
    inside the T in ~0.2% of true states); a predicted frame with the disc deep in a T that did not move is
    a push the model failed to make. Depth = disc radius - signed distance from the disc's centre to the T
    (the union of its two boxes in the T's body frame; negative inside)."""
    states = np.asarray(states, dtype=np.float64).reshape(-1, 5)
    c, s = np.cos(states[:, 4]), np.sin(states[:, 4])
    dx, dy = states[:, 0] - states[:, 2], states[:, 1] - states[:, 3]
    local = np.stack([c * dx + s * dy, -s * dx + c * dy], axis=1)  # the agent in the T's body frame
    signed = np.full(len(states), np.inf)
    for polygon in TEE_POLYGONS:
        low, high = polygon.min(axis=0), polygon.max(axis=0)
        centre, half = (low + high) / 2, (high - low) / 2
        q = np.abs(local - centre) - half
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
        inside = np.minimum(q.max(axis=1), 0.0)
        signed = np.minimum(signed, outside + inside)
    depth = np.maximum(AGENT_RADIUS_WORLD - signed - tolerance, 0.0) * PIXELS_PER_WORLD
    return np.where(np.isfinite(states).all(axis=1), depth, 0.0)
