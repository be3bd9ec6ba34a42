"""Real2Sim policy evaluation: does a simulator rank policies the way the real world does?

Reads per-policy success rates (real world and one or more simulators) from a result table and writes
SIMPLER's metrics per task and averaged over tasks: Pearson correlation (higher is better) and MMRV, the
mean maximum rank violation (lower is better). See `rlvr_sim.metrics.real2sim` for the definitions and
the table layouts (CSV/TSV, markdown, JSON as simpler-env keeps its numbers).

    python evaluations/real2sim.py --table results.csv --out-dir runs/real2sim
    python evaluations/real2sim.py --table paper_table.md --percent --out-dir runs/real2sim

Or measure the rates by rolling policies out (PushT): each scripted policy, perceiving from pixels
(`rlvr_sim.metrics.pusht_pixels`), plays episodes in gym-pusht (the "real" world; success = gym-pusht's
own coverage > threshold at any step) and in the learned simulator started from the same first frame
(success judged from its frames by pixel coverage). The same pixel judge applied to the real frames is
reported as a third column, so judge error and simulator error can be told apart.

    python evaluations/real2sim.py --rollout --episodes 8 --horizon 40 --out-dir runs/real2sim
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.real2sim import TaskSuccessRates, load_success_table, real2sim_report, report_markdown

DEFAULT_POLICIES = ("expert", "good", "mediocre", "poor", "jitter", "random")


def evaluate_table(table: str | Path, percent: bool = False, task: str | None = None) -> dict[str, Any]:
    """Pearson and MMRV of every simulator in a result table, per task and averaged over tasks."""
    report = real2sim_report(load_success_table(table, percent=percent, task=task))
    report["source"] = str(table)
    report["metric_definitions"] = {
        "pearson": "Pearson correlation of per-policy success rates, simpler-env formula (higher is better)",
        "mmrv": "mean over policies i of max_j |real_i - real_j| where sim and real order (i, j) "
        "differently, strict >, as simpler-env (lower is better)",
    }
    return report


class PixelPushTPolicy:
    """A scripted PushT policy that sees only frames: it acts on the state estimated from pixels, keeping
    the last estimate of anything that is not visible (e.g. the agent hidden by a blurry prediction)."""

    def __init__(self, skill: str, seed: int = 0) -> None:
        from rlvr_sim.policies.pusht import PushTPolicy

        self.policy = PushTPolicy(skill, seed=seed)
        self.last: dict[str, Any] = {
            "pos_agent": np.array([256.0, 256.0]),
            "block_pose": np.array([256.0, 256.0, 0.0]),
        }

    def act(self, frame: np.ndarray) -> np.ndarray:
        from rlvr_sim.metrics.pusht_pixels import estimate_state

        estimate = estimate_state(frame)
        for key, value in estimate.items():
            if value is not None:
                self.last[key] = value
        return self.policy.act(self.last)


def _episode(
    env: Any,
    policy: PixelPushTPolicy,
    frame: np.ndarray,
    horizon: int,
    judge: Callable[[np.ndarray, dict], float],
    action_repeat: int = 1,
) -> tuple[float, list[np.ndarray]]:
    """Roll `policy` from `frame` for `horizon` decisions (each held `action_repeat` env steps); the best
    judged coverage and the frames seen."""
    from rlvr_sim.viewer.worlds import repeat_step

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
    policies: Sequence[str] = DEFAULT_POLICIES,
    episodes: int = 8,
    horizon: int = 40,
    threshold: float = 0.95,
    seed: int = 0,
    frame_size: int = 64,
) -> dict[str, Any]:
    """Per-policy success rates in gym-pusht ("real") and in the learned simulator from the same first frames."""
    from rlvr_sim.metrics.pusht_pixels import pixel_coverage
    from rlvr_sim.viewer.worlds import make_ground_truth, model_frame_skip

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


def write_report(report: dict[str, Any], out_dir: str | Path, name: str = "real2sim") -> tuple[Path, Path]:
    """Write `<name>.json` and `<name>.md` into `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    text = f"Real2Sim policy evaluation ({report['source']})\n\n" + report_markdown(report)
    if "rollout" in report:
        settings = report["rollout"]["settings"]
        text += (
            f"\nSuccess rates (goal coverage > {settings['threshold']} within {settings['horizon']} steps, "
            f"{settings['episodes']} episodes per policy):\n\n| policy | real | world model | real, pixel judge |\n"
            "|---|---:|---:|---:|\n"
        )
        for skill, rates in report["rollout"]["rates"].items():
            text += f"| {skill} | {rates['real']:.2f} | {rates['world_model']:.2f} | {rates['real_pixel_judge']:.2f} |\n"
    if "coverage" in report:
        text += "\nThe same metrics on each policy's mean best goal coverage (continuous; ranks policies even when few succeed):\n\n"
        text += report_markdown(report["coverage"])
        for skill, real, model, judge in zip(
            report["coverage"]["tasks"][0]["policies"],
            report["coverage"]["tasks"][0]["real"],
            report["coverage"]["tasks"][0]["sims"]["world_model"],
            report["coverage"]["tasks"][0]["sims"]["real_pixel_judge"],
        ):
            text += f"\n- {skill}: real {real:.3f}, world model {model:.3f}, pixel judge on real frames {judge:.3f}"
        text += "\n"
    markdown_path.write_text(text)
    return json_path, markdown_path


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description="Real2Sim metrics (Pearson, MMRV) from a success-rate table."
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", help="CSV/TSV, markdown or JSON table of success rates")
    source.add_argument(
        "--rollout", action="store_true", help="measure PushT rates: gym-pusht vs learned simulator"
    )
    parser.add_argument("--percent", action="store_true", help="numbers in the table are percentages")
    parser.add_argument("--task", help="task name of a single-task table (default: the file name)")
    parser.add_argument("--out-dir", default="runs/real2sim", help="where real2sim.json and real2sim.md go")
    rollout = parser.add_argument_group("rollout")
    rollout.add_argument(
        "--env-id", default="RLVRWorld-Video-v0", help="the learned simulator's Gymnasium id"
    )
    rollout.add_argument("--checkpoint", help="video world-model checkpoint (default: the embedded one)")
    rollout.add_argument(
        "--policies", default=",".join(DEFAULT_POLICIES), help="comma-separated PushT skills"
    )
    rollout.add_argument("--episodes", type=int, default=8, help="episodes per policy")
    rollout.add_argument("--horizon", type=int, default=40, help="steps per episode")
    rollout.add_argument("--threshold", type=float, default=0.95, help="success: goal coverage above this")
    rollout.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.rollout:
        import torch

        from rlvr_sim.viewer.worlds import make_world_model

        torch.set_num_threads(1)
        measured = measure_rollout_rates(
            lambda: make_world_model(args.env_id, args.checkpoint),
            policies=[p.strip() for p in args.policies.split(",") if p.strip()],
            episodes=args.episodes,
            horizon=args.horizon,
            threshold=args.threshold,
            seed=args.seed,
        )
        table = write_rates_table(measured["rates"], Path(args.out_dir) / "pusht_rollout_rates.csv")
        report = evaluate_table(table, task="pusht")
        report["rollout"] = measured
        report["coverage"] = real2sim_report([coverage_table(measured)])
    else:
        report = evaluate_table(args.table, percent=args.percent, task=args.task)
    json_path, markdown_path = write_report(report, args.out_dir)
    print(markdown_path.read_text())
    print(f"wrote {json_path} and {markdown_path}")
    return report


if __name__ == "__main__":
    main()
