"""Does a PushT model rank candidate plans as gym-pusht does? The planner only ever compares plans.

A planner picks the plan its model scores best, so a model is as good for planning as its ranking of the
plans the planner weighs. For each held-out goal of `evaluations/pusht_planning.py` (same starts, same
goals, rebuilt exactly in gym-pusht), the oracle planner (CEM in gym-pusht from the true state, the
evaluation's CPU budget) finds a plan; `--candidates` plans are drawn around it with spread `--spreads`
(world units per target; a small spread is the choice CEM faces when it has nearly converged, a large one
its first iteration). Every candidate's cost (`GoalCost`: the planner's own cost against the goal) is
computed in gym-pusht (the truth) and in each model (learned models from the 64x64 frame, physics models
from the true state, as in the planning evaluation). Reported per model and spread, mean over goals with a
bootstrap 95% interval:

- Spearman rank correlation of the model's costs with the true ones (1: the same order);
- regret: the true cost of the model's pick minus the best true cost (0: it picks the truly best plan);
- beside the **T-still** row: the true agent motion with the T never moving, the ranking a block-blind
  planner gets from a perfect agent model. A model that does not beat it plans no better than ignoring the T.

    python evaluations/pusht_plan_ranking.py --goals 32 --out runs/eval/pusht_plan_ranking
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from rlvr_sim.evaluations.pusht_planning import RealPushT, load_goals

from rlvr_sim.metrics.stats import bootstrap_ci
from rlvr_sim.reporting import add_out_argument, write_report
from rlvr_sim.resources import results_dir

STILL = "T-still (true agent, T never moves)"


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation (average ranks for ties); NaN when either side is constant."""
    from scipy.stats import spearmanr

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def rank_goal(goal: Any, real: RealPushT, models: dict[str, Any], spreads: Sequence[float], candidates: int,
              seed: int) -> dict[str, Any]:
    """One goal: the oracle's plan, candidates around it, every model's costs against the true costs."""
    from rlvr_sim.policies.pusht_mpc import CPU_BUDGET, GoalCost, GymPushTModel, MPCPlanner, PlanStart

    frame = real.start(goal)
    state = real.state()
    start, cost, oracle = PlanStart(frame=frame, state=state), GoalCost(goal.goal), GymPushTModel()
    plan = MPCPlanner(oracle, CPU_BUDGET["config"], seed).plan(start, cost)
    rng = np.random.default_rng([seed, goal.index])
    out: dict[str, Any] = {"goal": goal.index}
    for spread in spreads:
        actions = np.clip(plan.actions[None] + rng.normal(0.0, spread, (candidates, *plan.actions.shape)), 0, 512)
        true_states = oracle.rollout(start, actions)
        truth = cost(true_states)
        still = true_states.copy()
        still[:, :, 2:] = state[2:5]
        predicted = {STILL: cost(still)}
        for name, model in models.items():
            predicted[name] = cost(model.rollout(start, actions))  # learned models read the frame only
        out[str(spread)] = {name: {"spearman": spearman(costs, truth),
                                   "regret": float(truth[int(np.argmin(costs))] - truth.min())}
                            for name, costs in predicted.items()}  # fmt: skip
    return out


def summarise(records: list[dict[str, Any]], names: Sequence[str], spreads: Sequence[float],
              seed: int) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for spread in spreads:
        rows: dict[str, Any] = {}
        for name in names:
            entry: dict[str, Any] = {}
            for metric in ("spearman", "regret"):
                values = np.array([r[str(spread)][name][metric] for r in records], dtype=np.float64)
                values = values[np.isfinite(values)]
                low, high = bootstrap_ci(values, seed=seed) if len(values) else (float("nan"), float("nan"))
                entry[metric] = {"mean": float(values.mean()) if len(values) else float("nan"),
                                 "ci95": [float(low), float(high)], "n": int(len(values))}
            if name != STILL:  # paired against the T-still ranking, goal by goal
                diff = np.array([r[str(spread)][name]["regret"] - r[str(spread)][STILL]["regret"] for r in records])
                low, high = bootstrap_ci(diff, seed=seed)
                entry["regret_minus_still"] = {"mean": float(diff.mean()), "ci95": [float(low), float(high)]}
            rows[name] = entry
        summary[str(spread)] = rows
    return summary


def markdown(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    lines = ["# Do PushT models rank plans as gym-pusht does?", "",
             f"`{settings['command']}`", "",
             f"{settings['goals']} held-out goals ({settings['offset']} env steps ahead, the planning evaluation's); "
             f"{settings['candidates']} candidate plans around the oracle's plan per goal and spread. Mean over goals "
             "[bootstrap 95% interval]; regret in planner cost units (1 = the success tolerance). "
             f"Wall time {settings['seconds']:.0f} s.", ""]  # fmt: skip
    for spread, rows in summary.items():
        lines += [f"## Candidates within {float(spread):g} world units of the oracle's plan", "",
                  "| model | Spearman with true cost | regret of its pick | regret minus T-still's |", "|---|---:|---:|---:|"]
        for name, entry in rows.items():
            s, r = entry["spearman"], entry["regret"]
            paired = entry.get("regret_minus_still")
            paired_text = f"{paired['mean']:+.3f} [{paired['ci95'][0]:+.3f}, {paired['ci95'][1]:+.3f}]" if paired else "-"
            lines.append(f"| {name} | {s['mean']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}] "
                         f"| {r['mean']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] | {paired_text} |")
        lines.append("")
    return "\n".join(lines)


def evaluate(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict[str, Any]:
    import torch
    from rlvr_sim.policies.pusht_mpc import make_model
    from tqdm.auto import tqdm

    torch.set_num_threads(args.threads)
    spreads = [float(s) for s in str(args.spreads).split(",") if s.strip()]
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    if not spreads or min(spreads) <= 0 or not names or args.candidates < 2:
        raise SystemExit("--spreads must be positive, --models name at least one model, --candidates >= 2")
    models = {name: make_model(name) for name in names}
    goals = load_goals(args.data, args.goals, [args.offset], seed=args.seed)[args.offset]
    real, began, records = RealPushT(), time.perf_counter(), []
    for goal in tqdm(goals, desc="plan ranking", unit="goal", disable=args.quiet):
        records.append(rank_goal(goal, real, models, spreads, args.candidates, args.seed))
    settings = {"command": "python evaluations/pusht_plan_ranking.py " + " ".join(sys.argv[1:] if argv is None else argv),
                "data": str(args.data), "goals": args.goals, "offset": args.offset, "candidates": args.candidates,
                "spreads": spreads, "models": names, "seed": args.seed, "seconds": time.perf_counter() - began}  # fmt: skip
    summary = summarise(records, [STILL, *names], spreads, args.seed)
    out = results_dir(args.out) if args.out is not None else results_dir(None) / "pusht_plan_ranking"
    report = {"settings": settings, "results": summary, "goals": records}
    write_report(out, "pusht_plan_ranking", report, markdown(summary, settings), args.quiet)
    return report


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Does a PushT model rank candidate plans as gym-pusht does?")
    p.add_argument("--data", default="data/pusht2", help="PushT episodes with recorded states (training/collect.py --task pusht)")
    p.add_argument("--goals", type=int, default=32, help="held-out goals (the planning evaluation's, same seed)")
    p.add_argument("--offset", type=int, default=25, help="goal = the recorded state this many env steps later")
    p.add_argument("--models", default="learned:pusht_pose_base,learned:pusht_pose_rlvr,mujoco",
                   help="comma-separated planner models: learned:<checkpoint>, mujoco, gym-pusht")
    p.add_argument("--spreads", default="15,60", help="candidate spreads around the oracle's plan (world units)")
    p.add_argument("--candidates", type=int, default=32, help="candidate plans per goal and spread")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--quiet", action="store_true", help="no progress bar or table print")
    add_out_argument(p, help="output folder (default runs/eval/pusht_plan_ranking)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return evaluate(parser().parse_args(argv), argv)


if __name__ == "__main__":
    main()
