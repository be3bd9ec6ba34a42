"""Where a visual world model's object error comes from: the per-window distribution behind a mean.

`evaluations/video_visual.py` reports mean object errors with bootstrap intervals; a mean over windows can sit
on a handful of windows where the model loses the object. This script rolls the same held-out windows out as
the env serves them (greedy, median-decoded where the checkpoint is) and reports, per checkpoint, the tracked
object's error at one horizon as mean, median, 90th percentile, the share of windows off by more than
`--far` px and the share where the object is lost (not found, or off by the cap), and draws the worst windows
(true rows above predicted rows, the start frame first) into a PNG.

    python evaluations/video_visual_tail.py --data data/arm --checkpoints arm_visual_base,arm_visual_rlvr \
        --windows 400 --out runs/eval/arm_tail
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import numpy as np
import torch
from rlvr_sim.envs.video.world_model_env import VideoWorldModel
from rlvr_sim.evaluations.video_visual import MISSING_PX, TRACKED, held_out_task, scene_objects
from tqdm import tqdm

from rlvr_sim.metrics.stats import bootstrap_ci

CAP = MISSING_PX  # px: an object the judge cannot find (or finds this far off) counts as lost


def tail_stats(errors: np.ndarray, far: float) -> dict[str, Any]:
    """Mean (with its bootstrap interval), median, p90, share over `far` px and share lost (at the cap)."""
    low, high = bootstrap_ci(errors)
    return {"mean": float(errors.mean()), "low": low, "high": high, "median": float(np.median(errors)),
            "p90": float(np.percentile(errors, 90)), "far_share": float((errors > far).mean()),
            "lost_share": float((errors >= CAP).mean()), "windows": int(len(errors))}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="episode folder the checkpoints were trained on")
    parser.add_argument("--checkpoints", required=True, help="comma-separated checkpoints (asset names or paths)")
    parser.add_argument("--windows", type=int, default=400, help="held-out windows (at most what the split holds)")
    parser.add_argument("--horizon", type=int, default=8, help="predicted step to measure (1-based)")
    parser.add_argument("--far", type=float, default=5.0, help="px: a window off by more counts as far")
    parser.add_argument("--worst", type=int, default=4, help="worst windows of the first checkpoint to draw")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/eval/video_visual_tail", help="output stem (.json, .md, .png)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.time()
    names = [c.strip() for c in args.checkpoints.split(",") if c.strip()]
    if not names:
        parser.error("--checkpoints names no checkpoint")
    worlds = {name: VideoWorldModel(name) for name in names}
    task, scene = held_out_task(worlds[names[0]], args.data, args.windows)
    if scene not in TRACKED:
        parser.error(f"checkpoint {names[0]} simulates scene {scene!r}, which has no pixel judge (arm, pusht)")
    if not 1 <= args.horizon <= task.horizon:
        parser.error(f"--horizon must be in [1, {task.horizon}] for these checkpoints, got {args.horizon}")
    tracked = TRACKED[scene]
    w = task.windows["test"]
    n = min(args.windows, len(w.context))
    context, future = w.context[:n], w.future[:n]
    actions = task.action_bins.decode(w.action_bins[:n])
    truth = scene_objects(scene, future[:, args.horizon - 1])[tracked]
    results, worst_frames = {}, None
    for name in tqdm(names, desc="rollouts", unit="checkpoint"):
        world = worlds[name]
        pred = world.rollout(context, actions, [args.seed + i for i in range(n)], temperature=0.0,
                             median=world.serves_median)
        found = scene_objects(scene, pred[:, args.horizon - 1])[tracked]
        errors = np.minimum(np.nan_to_num(np.linalg.norm(found - truth, axis=1), nan=CAP), CAP)
        results[name] = tail_stats(errors, args.far)
        if worst_frames is None:
            worst = np.argsort(-errors, kind="stable")[: args.worst]
            results[name]["worst_windows"] = [int(i) for i in worst]
            rows = [np.concatenate([np.concatenate([context[i], *future[i]], 1),
                                    np.concatenate([context[i], *pred[i]], 1)], 0) for i in worst]
            worst_frames = np.concatenate(rows, 0)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = "python evaluations/video_visual_tail.py " + " ".join(sys.argv[1:] if argv is None else argv)
    report = {"scene": scene, "object": tracked, "horizon": args.horizon, "far_px": args.far, "cap_px": CAP,
              "data": args.data, "results": results, "seconds": round(time.time() - start, 1), "command": command}
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# {tracked} error at step {args.horizon}, per held-out window ({n} windows of `{args.data}`)", "",
             f"| checkpoint | mean [95% CI] | median | p90 | > {args.far:g} px | lost (>= {CAP:g} px) |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['mean']:.2f} [{r['low']:.2f}, {r['high']:.2f}] | {r['median']:.2f} | "
                     f"{r['p90']:.2f} | {100 * r['far_share']:.1f}% | {100 * r['lost_share']:.1f}% |")
    lines += ["", f"Worst {len(results[names[0]]['worst_windows'])} windows of {names[0]} (true row above predicted "
              f"row, start frame first): `{out.with_suffix('.png').name}`."]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    if worst_frames is not None and len(worst_frames):
        imageio.imwrite(out.with_suffix(".png"), worst_frames)
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    main()
