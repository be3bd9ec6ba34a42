"""gym-pusht's task signal from a pose: goal coverage, its reward and its success rule, as pure functions.

gym-pusht (`gym_pusht/envs/pusht.py`, `PushTEnv._get_coverage` and `step`) scores every env step by how
much of the goal T the block covers: coverage = area(block T ∩ goal T) / area(goal T), computed on the
T's two polygons with shapely; reward = clip(coverage / 0.95, 0, 1); the episode terminates (and
`info["is_success"]`) when coverage > 0.95. The same numbers from a *predicted* pose (a world model's
pose tokens, or the pixel judge's reading of a predicted frame) give a learned simulator gym-pusht's
reward and termination, so an agent can learn or plan inside it.

Poses are gym-pusht's `info["block_pose"]`: (x, y, angle) of the T's body origin in world units (the T's
polygons are `pusht_pixels.TEE_POLYGONS` rotated by the angle and moved to (x, y), exactly as pymunk's
`local_to_world` places them). A pose with a NaN (the T not visible) covers nothing.

Read off a 64x64 frame, the pose is a few world units off (the pixel judge), and any error lowers the
coverage: on gym-pusht's own frames, at 0.95 the judge ends only 9 of the 45 calibration sequences gym-pusht
ends (`evaluations/results/video_reward_calibration`). So a pose *read off a frame* succeeds above
`FRAME_SUCCESS_COVERAGE` (0.93), calibrated on separate sequences (`python evaluations/video_reward.py
--calibrate --seed 7 --sequences 192`: the threshold whose judged ends on gym-pusht's true frames fall in
gym-pusht's decision most often); the reward keeps gym-pusht's formula. Pose-token bin centres succeed
above `POSE_SUCCESS_COVERAGE`, measured the same way (the same command's second table): 0.95, gym-pusht's own.
No lower threshold ends where gym-pusht ends more often, because the goal pose (256, 256, pi/4) lies on a corner
of the 4-unit, 2.8-degree bin grid: of the 8 bin centres around it, 2 cover 0.961 of the goal and 6 cover
0.905-0.920, so 0.95 misses ends on those 6 and anything at or under 0.92 ends on all 8, which also holds poses
up to 4 units and 2.8 degrees off (more false ends than it gains). A pose-token model ends less often than
gym-pusht for that reason; a grid centred on the goal would need retraining the pose models.
"""

from __future__ import annotations

import numpy as np

from rlvr_sim.metrics.pusht_pixels import GOAL_POSE, TEE_POLYGONS, is_tee, judge_states

SUCCESS_COVERAGE = 0.95  # gym-pusht's `success_threshold`: success (and termination) when coverage exceeds it
FRAME_SUCCESS_COVERAGE = 0.93  # the same rule for a pose the pixel judge reads off a 64x64 frame (module docstring)
POSE_SUCCESS_COVERAGE = 0.95  # the same rule for pose-token bin centres (module docstring)


def _tee_parts(poses: np.ndarray) -> list[np.ndarray]:
    """Per T part (bar, stem): (N, 4, 2) world corners of every pose (body frame rotated, then moved)."""
    cos, sin = np.cos(poses[:, 2])[:, None], np.sin(poses[:, 2])[:, None]
    parts = []
    for polygon in TEE_POLYGONS:
        x = polygon[None, :, 0] * cos - polygon[None, :, 1] * sin + poses[:, :1]
        y = polygon[None, :, 0] * sin + polygon[None, :, 1] * cos + poses[:, 1:2]
        parts.append(np.stack([x, y], axis=-1))
    return parts


def goal_coverage(block_poses: np.ndarray, goal_pose: np.ndarray = GOAL_POSE) -> np.ndarray:
    """(N, 3) or (3,) block poses -> (N,) share of the goal T's area that the block covers (0 where NaN).

    The T's bar and stem do not overlap, so area(T ∩ goal) is the sum over the four part pairs of the
    convex intersections' areas: what shapely computes on gym-pusht's two MultiPolygons, part by part."""
    try:
        import shapely
    except ImportError as error:  # a dependency of gym-pusht: pip install 'rlvr-sim[video]'
        raise ImportError("goal coverage needs shapely (installed with gym-pusht: pip install "
                          "'rlvr-sim[video]')") from error
    poses = np.asarray(block_poses, dtype=np.float64).reshape(-1, 3)
    visible = np.isfinite(poses).all(axis=1)
    safe = np.where(visible[:, None], poses, 0.0)
    goal_parts = [shapely.polygons(part[0]) for part in _tee_parts(np.asarray(goal_pose, np.float64)[None])]
    goal_area = sum(part.area for part in goal_parts)
    covered = np.zeros(len(poses))
    for block_part in _tee_parts(safe):
        polygons = shapely.polygons(block_part)
        for goal_part in goal_parts:
            covered += shapely.area(shapely.intersection(polygons, goal_part))
    return np.where(visible, covered / goal_area, 0.0)


def coverage_reward(coverage: np.ndarray | float) -> np.ndarray:
    """gym-pusht's reward for a coverage: clip(coverage / 0.95, 0, 1)."""
    return np.clip(np.asarray(coverage, dtype=np.float64) / SUCCESS_COVERAGE, 0.0, 1.0)


def is_success(coverage: np.ndarray | float, threshold: float = SUCCESS_COVERAGE) -> np.ndarray:
    """gym-pusht's success (its termination rule): coverage strictly above 0.95 (or `threshold`)."""
    return np.asarray(coverage, dtype=np.float64) > threshold


def pose_reward(block_poses: np.ndarray, threshold: float = SUCCESS_COVERAGE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, 3) block poses -> (reward, success, coverage), each (N,): what gym-pusht's step would return
    (success above `threshold`: gym-pusht's 0.95 for a true or pose-token pose)."""
    coverage = goal_coverage(block_poses)
    return coverage_reward(coverage), is_success(coverage, threshold), coverage


def frame_reward(frames: np.ndarray, threshold: float = FRAME_SUCCESS_COVERAGE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, H, W, 3) uint8 PushT frames -> (reward, success, coverage) of the block pose the pixel judge
    reads off each frame (`judge_states`; a frame without a visible T scores 0 and does not succeed);
    success above the frame-calibrated `FRAME_SUCCESS_COVERAGE` (module docstring), and only where the T pixels
    show a T (`is_tee`: a smeared T that covers the goal does not succeed)."""
    states, fits = judge_states(frames, with_fit=True)
    reward, success, coverage = pose_reward(states[:, 2:], threshold)
    return reward, success & is_tee(fits, np.asarray(frames).shape[1]), coverage


__all__ = ["FRAME_SUCCESS_COVERAGE", "POSE_SUCCESS_COVERAGE", "SUCCESS_COVERAGE", "coverage_reward", "frame_reward", "goal_coverage", "is_success", "pose_reward"]
