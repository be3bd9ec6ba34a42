"""The earlier PushT Real2Sim comparison: best goal coverage per episode from gym-pusht's default starts.

Superseded by the near-goal rollouts of `evaluations/real2sim.py --rollout` (`real2sim_episodes`), kept
because its continuous measure (mean best coverage) still ranks policies when few reach the threshold.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.real2sim import TaskSuccessRates


def _episode(
    env: Any,
    policy: Any,
    frame: np.ndarray,
    horizon: int,
    judge: Callable[[np.ndarray, dict], float],
    action_repeat: int = 1,
) -> tuple[float, list[np.ndarray]]:
    """Roll `policy` from `frame` for `horizon` decisions (each held `action_repeat` env steps); the best
    judged coverage and the frames seen."""
    from rlvr_sim.envs.worlds import repeat_step

    best, frames = 0.0, [frame]
    for _ in range(horizon):
        frame, _, terminated, truncated, info = repeat_step(env, policy.act(frame), action_repeat)
        frames.append(frame)
        best = max(best, judge(frame, info))
        if terminated or truncated:
            break
    return best, frames


def measure_rollout_rates(
    make_world: Callable[[], Any],
    policies: Sequence[str] = ("expert", "good", "mediocre", "poor", "jitter", "random"),
    episodes: int = 8,
    horizon: int = 40,
    threshold: float = 0.95,
    seed: int = 0,
    frame_size: int = 64,
) -> dict[str, Any]:
    """The earlier coverage-threshold comparison (gym-pusht's default starts): per-policy best goal coverage
    in gym-pusht and in one simulator from the same first frames (`run_rollouts` supersedes it)."""
    from rlvr_sim.envs.worlds import make_ground_truth, model_frame_skip
    from rlvr_sim.policies.pusht import PixelPushTPolicy

    from rlvr_sim.metrics.pusht_pixels import pixel_coverage

    if episodes < 1 or horizon < 1 or not 0.0 < threshold <= 1.0:
        raise ValueError("need episodes >= 1, horizon >= 1 and 0 < threshold <= 1")
    real_env, world = make_ground_truth(frame_size, frame_size), make_world()
    frame_skip = model_frame_skip(world)  # the real env holds each action as long as one model step lasts
    per_policy: dict[str, dict[str, list[float]]] = {}
    start = time.perf_counter()
    try:
        for index, skill in enumerate(policies):
            scores: dict[str, list[float]] = {"real": [], "world_model": [], "real_pixel_judge": []}
            for episode in range(episodes):
                episode_seed = seed + 1000 * index + episode
                frame, _ = real_env.reset(seed=episode_seed)
                real_best, real_frames = _episode(
                    real_env,
                    PixelPushTPolicy(skill, episode_seed),
                    frame,
                    horizon,
                    lambda f, i: i["coverage"],
                    frame_skip,
                )
                world_frame, _ = world.reset(seed=episode_seed, options={"frame": frame})
                world_best, _ = _episode(
                    world,
                    PixelPushTPolicy(skill, episode_seed),
                    world_frame,
                    horizon,
                    lambda f, i: pixel_coverage(f),
                )
                scores["real"].append(real_best)
                scores["world_model"].append(world_best)
                scores["real_pixel_judge"].append(max(pixel_coverage(f) for f in real_frames[1:]))
            per_policy[skill] = scores
    finally:
        real_env.close()
        world.close()
    rates = {
        skill: {name: float(np.mean([v > threshold for v in values])) for name, values in scores.items()}
        for skill, scores in per_policy.items()
    }
    return {
        "rates": rates,
        "max_coverage": per_policy,
        "settings": {
            "episodes": episodes,
            "horizon": horizon,
            "threshold": threshold,
            "seed": seed,
            "frame_size": frame_size,
            "frame_skip": frame_skip,
            "seconds": round(time.perf_counter() - start, 1),
        },
    }


def coverage_table(measured: dict[str, Any]) -> TaskSuccessRates:
    """Mean (over episodes) of each episode's best goal coverage, per policy: a continuous performance
    measure that still ranks policies when few or none reach the success threshold."""
    scores = measured["max_coverage"]
    policies = list(scores)
    columns = {
        name: np.array([np.mean(scores[p][name]) for p in policies]) for name in next(iter(scores.values()))
    }
    real = columns.pop("real")
    return TaskSuccessRates(task="pusht (mean best coverage)", policies=policies, real=real, sims=columns)


def write_rates_table(rates: dict[str, dict[str, float]], path: str | Path) -> Path:
    """The measured rates as a long CSV table (policy, real, world_model, real_pixel_judge) for `--table`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ["real", "world_model", "real_pixel_judge"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["policy", *columns])
        for skill, values in rates.items():
            writer.writerow([skill, *(f"{values[c]:.6f}" for c in columns)])
    return path
