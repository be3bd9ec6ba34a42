"""The arm scene's figures in docs/arm.md, as JSON: `python -m rlvr_sim.envs.arm.measure [--data data/arm]`.

- `arrival`: tip-to-target distance (px at 64x64) after each of 4 steps holding a far target, from 200
  seeded random starts (`arrival_errors`): how many model steps the controller needs.
- `judge` (with `--data`): the colour-mask judges against the collector's ground truth (`tip_px`,
  `puck_px`, the MuJoCo sites projected through the camera) on every frame of an episode folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from rlvr_sim.metrics.arm_pixels import judge_puck, judge_tip


def _summary(errors: np.ndarray) -> dict[str, float]:
    return {"median": round(float(np.nanmedian(errors)), 3), "p95": round(float(np.nanpercentile(errors, 95)), 3),
            "p99": round(float(np.nanpercentile(errors, 99)), 3), "max": round(float(np.nanmax(errors)), 3),
            "missing": int(np.isnan(errors).sum()), "count": int(errors.size)}


def judge_accuracy(directory: str | Path) -> dict[str, dict[str, float]]:
    """Pixel distance between judged and true tip / puck positions over every frame of `directory`'s
    `arm_*.npz` episodes (NaN judgements are counted as `missing`)."""
    paths = sorted(Path(directory).glob("arm_*.npz"))
    if not paths:
        raise FileNotFoundError(f"no arm_*.npz episodes under {directory}")
    tip, puck = [], []
    for path in paths:
        with np.load(path) as data:
            tip.append(np.linalg.norm(judge_tip(data["image"]) - data["tip_px"], axis=1))
            puck.append(np.linalg.norm(judge_puck(data["image"]) - data["puck_px"], axis=1))
    return {"tip_px": _summary(np.concatenate(tip)), "puck_px": _summary(np.concatenate(puck)), "episodes": len(paths)}


def main(argv: list[str] | None = None) -> None:
    from rlvr_sim.envs.arm.env import arrival_errors

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="an arm episode folder to check the judges on (from training/collect.py --task arm)")
    parser.add_argument("--runs", type=int, default=200, help="far-target runs for the arrival table")
    args = parser.parse_args(argv)
    errors = arrival_errors(runs=args.runs, steps=4, seed=0)
    report = {"arrival": {f"after_{step + 1}_steps": _summary(errors[:, step]) for step in range(errors.shape[1])}}
    if args.data:
        report["judge"] = judge_accuracy(args.data)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
