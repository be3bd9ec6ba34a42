"""Why token world models plan PushT no better than a still T: numbers given as tokens, one row per bin.

The learned PushT simulators rank a planner's candidate pushes no better than a T that never moves
(`evaluations/pusht_plan_ranking.py`), yet the T's motion is predictable from what they see
(`evaluations/video_predictability.py`). This diagnostic isolates the difference. One small MLP predicts the T's
per-step body-frame displacement from exactly the codec's relational inputs (the agent's previous and current
position and the commanded target in the T's body frame, the T's position and angle, all quantised as the
tokens quantise them), trained by cross-entropy over the codec's displacement bins as the transformer is, on
the training episodes of `--data` (every 10th episode held out). Only the way the numbers enter differs:

- `values`: as numbers (what an MLP is usually given);
- `one-hot`: one row of the first layer per bin, which is what a token embedding is;
- `one-hot, value-linear rows`: the same, each group's rows projected back onto a line in the bin's value after
  every Adam step (`rlvr_sim.models.ordinal.project_ordinal`; projected gradient descent);
- `one-hot, value-linear rows, parametrised`: the same constraint, the table trained as each group's line's
  coefficients (`rlvr_sim.models.ordinal.ValueLinearRows`), which is what `ordinal_embeddings: true` does to a
  world model's input embeddings.

Each MLP then predicts the T along candidate plans drawn around the oracle planner's plan on held-out goals (the
plan-ranking protocol, spread `--spread`), the agent following its true path, the T moved step by step by the
expected displacement. Reported: the T's position and angle error after the last step, and the Spearman
correlation of the planner cost with the true cost, mean over goals with bootstrap 95% intervals, beside the
T-still ranking.

    python evaluations/pusht_token_inputs.py --goals 24 --out evaluations/results/pusht_token_inputs
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from rlvr_sim.evaluations.video_predictability import (  # the pose tokenizer's quantisation
    ANGLE_BINS,
    POSITION_BIN,
)

from rlvr_sim.metrics.stats import bootstrap_ci
from rlvr_sim.reporting import add_out_argument, write_report
from rlvr_sim.resources import results_dir

REL_STEP, REL_BINS = 2.0, 161  # body-frame bins of the relational layout (2 units, [-160, 160])
LIMITS = (96, 96, 32)  # displacement bins: du, dv in world units, dtheta in angle bins
KINDS = ("values", "one-hot", "one-hot, value-linear rows", "one-hot, value-linear rows, parametrised")
STILL = "T-still (true agent, T never moves)"
ANGLE_STEP = 2 * np.pi / ANGLE_BINS


def quantise(states: np.ndarray) -> np.ndarray:
    """(..., 5) states at the pose tokenizer's bin centres."""
    out = (np.floor(states / POSITION_BIN) + 0.5) * POSITION_BIN
    out[..., 4] = (np.floor((states[..., 4] + np.pi) / ANGLE_STEP) + 0.5) * ANGLE_STEP - np.pi
    return out


def inputs(prev_agent: np.ndarray, agent: np.ndarray, target: np.ndarray, tee: np.ndarray) -> np.ndarray:
    """(N, 10) the relational layout's inputs as numbers: previous agent, agent and target in the T's body frame
    (world units / 128), the T's position (/ 256 - 1), cos and sin of its angle. Inputs are quantised states."""
    c, s = np.cos(tee[:, 2]), np.sin(tee[:, 2])

    def body(point: np.ndarray) -> np.ndarray:
        dx, dy = point[:, 0] - tee[:, 0], point[:, 1] - tee[:, 1]
        return np.stack([c * dx + s * dy, -s * dx + c * dy], 1)

    return np.concatenate([body(prev_agent), body(agent), body(target), tee[:, :2] / 256.0 - 1.0,
                           np.stack([c, s], 1)], 1) / np.array([128.0] * 6 + [1.0] * 4)


def one_hot(x: np.ndarray) -> np.ndarray:
    """The same inputs as a token model gets them: one active row per number (6 body-frame bins, 2 x 128 T
    position bins, 128 angle bins)."""
    body = np.clip(np.round(x[:, :6] * 128 / REL_STEP), -(REL_BINS // 2), REL_BINS // 2).astype(np.int64) + REL_BINS // 2
    position = np.clip(np.floor((x[:, 6:8] + 1) * 64), 0, 127).astype(np.int64)
    angle = np.round(np.arctan2(x[:, 9], x[:, 8]) / ANGLE_STEP).astype(np.int64) % ANGLE_BINS
    columns = [body[:, i] + REL_BINS * i for i in range(6)]
    base = 6 * REL_BINS
    columns += [base + position[:, 0], base + 128 + position[:, 1], base + 256 + angle]
    out = np.zeros((len(x), base + 384), np.float32)
    for column in columns:
        out[np.arange(len(x)), column] = 1.0
    return out


def groups() -> list:
    from rlvr_sim.models.ordinal import OrdinalGroup

    base = 6 * REL_BINS
    return ([OrdinalGroup(REL_BINS * i, REL_BINS) for i in range(6)]
            + [OrdinalGroup(base, 128), OrdinalGroup(base + 128, 128), OrdinalGroup(base + 256, 128, circular=True)])


def training_set(data: str) -> tuple[np.ndarray, np.ndarray]:
    """(inputs (N, 10), displacement bins (N, 3)) of every training-episode model step: the codec's targets, the
    difference of the quantised poses in the quantised T's body frame."""
    from rlvr_sim.evaluations.video_predictability import transitions

    t = transitions(data, 4)
    train = t["episode"] % 10 != 0
    prev, cur, nxt = (quantise(t[k][train]) for k in ("prev", "cur", "next"))
    x = inputs(prev[:, :2], cur[:, :2], quantise(np.c_[t["action"][train], np.zeros((train.sum(), 3))])[:, :2],
               cur[:, 2:])
    c, s = np.cos(cur[:, 4]), np.sin(cur[:, 4])
    dx, dy = nxt[:, 2] - cur[:, 2], nxt[:, 3] - cur[:, 3]
    dtheta = ((nxt[:, 4] - cur[:, 4] + np.pi) % (2 * np.pi) - np.pi) / ANGLE_STEP
    y = np.stack([c * dx + s * dy, -s * dx + c * dy, dtheta], 1)
    return x, np.clip(np.round(y), -np.array(LIMITS), np.array(LIMITS)).astype(np.int64) + np.array(LIMITS)


def fit(kind: str, x: np.ndarray, y: np.ndarray, steps: int, seed: int):  # noqa: ANN201 - a predictor
    """One MLP (3 x 256, GELU), cross-entropy over each displacement slot's bins; returns x -> expected
    displacement (N, 3) in world units and angle bins."""
    from rlvr_sim.models.ordinal import project_ordinal

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    encode = (lambda v: v.astype(np.float32)) if kind == "values" else one_hot
    xt, yt = torch.tensor(encode(x)), torch.tensor(y)
    sizes = [2 * limit + 1 for limit in LIMITS]
    width = 256
    net = torch.nn.Sequential(torch.nn.Linear(xt.shape[1], width), torch.nn.GELU(), torch.nn.Linear(width, width),
                              torch.nn.GELU(), torch.nn.Linear(width, width), torch.nn.GELU(),
                              torch.nn.Linear(width, sum(sizes)))
    constrained = kind == "one-hot, value-linear rows"
    if constrained:  # the first layer's columns are the rows of an embedding table
        project_ordinal(net[0].weight.data.T, groups())
    if kind == "one-hot, value-linear rows, parametrised":  # the same table, trained as its coefficients
        net[0] = _TableLinear(net[0])
    optimiser = torch.optim.Adam(net.parameters(), 1e-3)
    for _ in range(steps):
        batch = torch.randint(len(xt), (512,), generator=generator)
        logits, lo, loss = net(xt[batch]), 0, 0.0
        for k, n in enumerate(sizes):
            loss = loss + torch.nn.functional.cross_entropy(logits[:, lo : lo + n], yt[batch, k])
            lo += n
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if constrained:
            project_ordinal(net[0].weight.data.T, groups())

    @torch.no_grad()
    def predict(v: np.ndarray) -> np.ndarray:
        logits, lo, out = net(torch.tensor(encode(v))), 0, []
        for limit, n in zip(LIMITS, sizes):
            probs = torch.softmax(logits[:, lo : lo + n], -1)
            out.append((probs * (torch.arange(n) - limit)).sum(-1).numpy())
            lo += n
        return np.stack(out, 1)

    return predict


class _TableLinear(torch.nn.Module):
    """A linear layer on one-hot inputs written as an embedding table (its weight's columns), the table trained as
    `ValueLinearRows` (what `ordinal_embeddings: true` does to a transformer's input embeddings)."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        from rlvr_sim.models.ordinal import parametrise_ordinal

        super().__init__()
        self.table = torch.nn.Embedding.from_pretrained(linear.weight.data.T.contiguous(), freeze=False)
        self.bias = torch.nn.Parameter(linear.bias.data.clone())
        parametrise_ordinal(self.table, groups())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.table.weight + self.bias


def roll(predict: Any, start: np.ndarray, agents: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """(N, H, 5) states: the agent on its given path, the T moved by the predicted expected displacement from
    quantised inputs, carried between steps unquantised."""
    n, horizon = actions.shape[:2]
    tee = np.repeat(np.asarray(start, dtype=np.float64)[None, 2:5], n, 0)
    prev = agent = np.repeat(np.asarray(start, dtype=np.float64)[None, :2], n, 0)
    out = np.zeros((n, horizon, 5))
    for h in range(horizon):
        q = quantise(np.c_[agent, tee])
        d = predict(inputs(quantise(np.c_[prev, tee])[:, :2], q[:, :2],
                           quantise(np.c_[actions[:, h], tee])[:, :2], q[:, 2:]))
        c, s = np.cos(tee[:, 2]), np.sin(tee[:, 2])
        tee = tee + np.stack([c * d[:, 0] - s * d[:, 1], s * d[:, 0] + c * d[:, 1], d[:, 2] * ANGLE_STEP], 1)
        prev, agent = agent, agents[:, h]
        out[:, h, :2], out[:, h, 2:] = agent, tee
    return out


def evaluate(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict[str, Any]:
    from rlvr_sim.evaluations.pusht_plan_ranking import spearman
    from rlvr_sim.evaluations.pusht_planning import RealPushT, load_goals
    from rlvr_sim.policies.pusht_mpc import CPU_BUDGET, GoalCost, GymPushTModel, MPCPlanner, PlanStart

    torch.set_num_threads(args.threads)
    began = time.perf_counter()
    x, y = training_set(args.data)
    kinds = [k for k in KINDS if k in args.kinds]
    models = {kind: fit(kind, x, y, args.steps, args.seed) for kind in kinds}
    goals = load_goals(args.data, args.goals, [args.offset], seed=args.seed)[args.offset]
    real, oracle, records = RealPushT(), GymPushTModel(), []
    for goal in goals:
        frame = real.start(goal)
        state = real.state()
        start, cost = PlanStart(frame=frame, state=state), GoalCost(goal.goal)
        plan = MPCPlanner(oracle, CPU_BUDGET["config"], args.seed).plan(start, cost)
        rng = np.random.default_rng([args.seed, goal.index])
        actions = np.clip(plan.actions[None] + rng.normal(0.0, args.spread, (args.candidates, *plan.actions.shape)), 0, 512)
        truth_states = oracle.rollout(start, actions)
        truth = cost(truth_states)
        still = truth_states.copy()
        still[:, :, 2:] = state[2:5]
        predicted = {STILL: still, **{k: roll(m, state[:5], truth_states[:, :, :2], actions) for k, m in models.items()}}
        record = {"goal": goal.index}
        for name, states in predicted.items():
            error = states[:, -1] - truth_states[:, -1]
            record[name] = {"position_error": float(np.hypot(error[:, 2], error[:, 3]).mean()),
                            "angle_error_deg": float(np.degrees(np.abs((error[:, 4] + np.pi) % (2 * np.pi) - np.pi)).mean()),
                            "spearman": spearman(cost(states), truth)}
        records.append(record)
    summary = {}
    for name in (STILL, *kinds):
        summary[name] = {}
        for metric in ("position_error", "angle_error_deg", "spearman"):
            values = np.array([r[name][metric] for r in records], dtype=np.float64)
            values = values[np.isfinite(values)]
            low, high = bootstrap_ci(values, seed=args.seed)
            summary[name][metric] = {"mean": float(values.mean()), "ci95": [float(low), float(high)]}
    settings = {"command": "python evaluations/pusht_token_inputs.py " + shlex.join(sys.argv[1:] if argv is None else argv),
                "data": args.data, "goals": args.goals, "offset": args.offset, "spread": args.spread,
                "candidates": args.candidates, "steps": args.steps, "training_steps": int(len(x)),
                "seed": args.seed, "seconds": round(time.perf_counter() - began, 1)}
    out = results_dir(args.out) if args.out is not None else results_dir(None) / "pusht_token_inputs"
    report = {"settings": settings, "results": summary, "goals": records}
    write_report(out, "pusht_token_inputs", report, markdown(summary, settings), args.quiet)
    return report


def markdown(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    def cell(entry: dict[str, Any], digits: int) -> str:
        return f"{entry['mean']:.{digits}f} [{entry['ci95'][0]:.{digits}f}, {entry['ci95'][1]:.{digits}f}]"

    lines = ["# The same T model, its inputs as numbers or as tokens", "", f"`{settings['command']}`", "",
             f"An MLP trained on {settings['training_steps']} model steps of `{settings['data']}` (cross-entropy over the "
             f"codec's displacement bins, {settings['steps']} Adam steps) predicts the T along {settings['candidates']} "
             f"candidate plans within {settings['spread']:g} world units of the oracle's plan on {settings['goals']} "
             f"held-out goals, the agent on its true path. Errors after the plan's last step; mean over goals "
             f"[bootstrap 95% interval]. Wall time {settings['seconds']:.0f} s.", "",
             "| inputs | T position error (world units) | T angle error (degrees) | Spearman with true cost |",
             "|---|---:|---:|---:|"]
    for name, entry in summary.items():
        lines.append(f"| {name} | {cell(entry['position_error'], 1)} | {cell(entry['angle_error_deg'], 1)} "
                     f"| {cell(entry['spearman'], 3)} |")
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="The same PushT T model given its inputs as numbers or as tokens.")
    p.add_argument("--data", default="data/pusht2", help="PushT episodes with recorded states")
    p.add_argument("--goals", type=int, default=24, help="held-out goals (the planning evaluation's, same seed)")
    p.add_argument("--offset", type=int, default=25, help="goal = the recorded state this many env steps later")
    p.add_argument("--spread", type=float, default=15.0, help="candidate spread around the oracle's plan (world units)")
    p.add_argument("--candidates", type=int, default=32)
    p.add_argument("--steps", type=int, default=4000, help="Adam steps per MLP (batch 512)")
    p.add_argument("--kinds", type=lambda v: [k.strip() for k in v.split(";")], default=list(KINDS),
                   help=f"which input versions to train, ';'-separated (default all: {'; '.join(KINDS)})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quiet", action="store_true")
    add_out_argument(p, help="output folder (default runs/eval/pusht_token_inputs)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    if args.goals < 1 or args.candidates < 2 or args.steps < 1 or args.spread <= 0:
        raise SystemExit("--goals and --steps must be >= 1, --candidates >= 2 and --spread > 0")
    unknown = [k for k in args.kinds if k not in KINDS]
    if unknown or not args.kinds:
        raise SystemExit(f"--kinds: unknown {unknown}; choose among {'; '.join(KINDS)}")
    return evaluate(args, argv)


if __name__ == "__main__":
    main()
