"""Planning cost of the PushT planner (`rlvr_sim.policies.pusht_mpc`): decisions/s and model frames/s with
all samples of a CEM iteration as the rows of one batched `VideoWorldModel.rollout` (the planner's path),
beside the same rollouts issued one sample at a time (batch 1); JSON out.

Equal work: the planner plans once from each start with the learned model on its batched path (seeded, the
evaluation's CPU budget by default: CEM 32 samples x 3 iterations, top 6, horizon 6); every action set it
rolls out is recorded. The batch-1 side runs the same planner (same seed, same starts and goals) on a model
that rolls out the *recorded* action sets row by row, so both sides generate the same frames for the same
action sequences (`checks`: the frames counted on each side, whether the batch-1 planner asked for the very
sets recorded, i.e. whether the batched and the one-row predictions steer the search alike, and the largest
difference between their predicted states). Starts are held-out start frames of the checkpoint
(`start_frames.npz`: held-out test-split frames with their true next frames), the goal the judged true state
`--goal-steps` model steps later (6 x 4 env steps: the evaluation's 25-step goals). Warm-up, untimed: the
recording decisions, two rows at batch 1 and one gym-pusht decision; then `--repeats` rounds, the sides in
alternating order. Per round a side's rate is its starts' decisions (frames) over their summed seconds; the
median round is reported, and the ratios are of the medians.

Per side: decisions/s, model frames/s (frames over the seconds inside `VideoWorldModel.rollout`: encoding
the start, decoding, drawing the frames) and frames/s over the whole decision (with the pixel judge that
reads every predicted frame, the cost and the CEM refit). gym-pusht as the planner's model (the oracle, the
true state set exactly) is timed on the same starts, goals and budget for reference. On a shared machine
read the ratios (measured side by side in one run), not the absolute rates.

    python benchmarks/pusht_planning.py --starts 3 --repeats 3 --threads 1 --out benchmarks/results/pusht_planning.json
    python benchmarks/pusht_planning.py --model learned:pusht_pose_rlvr --quick     # any PushT checkpoint; tiny
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import numpy as np
import torch

from rlvr_sim.reporting import emit_json, machine_record

DEFAULT_MODEL = "learned:pusht_pose_base"
SIDES = ("batched", "batch1", "gym_pusht")
QUICK = {"samples": 4, "iterations": 1, "elites": 2, "horizon": 2, "starts": 1, "repeats": 1}


class RecordedModel:
    """A learned planner model whose `rollout` is timed and counted: `batch=None` rolls every sample of a call
    as the rows of one batched rollout (the planner's path), `batch=1` one sample at a time. Without `script`
    it rolls out what the planner asks and records it (`calls`); with `script` (the calls recorded on the
    batched side) its k-th call rolls out `script[k]` whatever the planner asked, and notes whether the
    planner asked for exactly that (`followed`)."""

    def __init__(self, model: Any, batch: int | None, script: list[np.ndarray] | None = None) -> None:
        self.model, self.batch, self.script = model, batch, script
        self.name, self.frame_skip = model.name, model.frame_skip
        self.calls: list[np.ndarray] = []
        self.states: list[np.ndarray] = []
        self.followed = True
        self.frames = 0
        self.rollout_seconds = 0.0

    def rollout(self, start: Any, actions: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions, dtype=np.float64)
        if self.script is not None:
            recorded = self.script[len(self.calls)]
            self.followed = self.followed and actions.shape == recorded.shape and bool(np.array_equal(actions, recorded))
            actions = recorded
        began = time.perf_counter()
        if self.batch is None:
            states = self.model.rollout(start, actions)
        else:
            states = np.concatenate([self.model.rollout(start, actions[i:i + self.batch])
                                     for i in range(0, len(actions), self.batch)])
        self.rollout_seconds += time.perf_counter() - began
        self.calls.append(actions.copy())
        self.states.append(states)
        self.frames += actions.shape[0] * actions.shape[1]
        return states


def timed_world(model: Any) -> dict[str, float]:
    """Add the wall time of `model.world.rollout` (the generation itself) to the returned dict's "seconds"."""
    spent = {"seconds": 0.0}
    inner = model.world.rollout

    def rollout(*args, **kwargs):
        began = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent["seconds"] += time.perf_counter() - began

    model.world.rollout = rollout  # an instance attribute shadowing the method, this process only
    return spent


def load_starts(world: Any, count: int, goal_steps: int) -> list[dict[str, Any]]:
    """The first `count` held-out start frames of the checkpoint whose start and goal frame (`goal_steps`
    model steps later) the pixel judge reads: {index, frame, state, goal}."""
    from rlvr_sim.metrics.pusht_pixels import judge_states

    path = world.checkpoint / "start_frames.npz"
    if not path.is_file():
        raise SystemExit(f"{world.checkpoint} has no start_frames.npz to start the planner from")
    with np.load(path) as data:
        images, future = data["image"], data["future"]
    if not 1 <= goal_steps <= future.shape[1]:
        raise SystemExit(f"--goal-steps must be in 1..{future.shape[1]} (the recorded future frames)")
    starts = []
    for index in range(len(images)):
        state, goal = judge_states(np.stack([images[index], future[index, goal_steps - 1]]))
        if np.isfinite(state).all() and np.isfinite(goal).all():
            starts.append({"index": index, "frame": images[index], "state": state, "goal": goal})
        if len(starts) == count:
            return starts
    raise SystemExit(f"only {len(starts)} of {world.checkpoint}'s start frames can be read with their goal")


def decide(model: Any, config: Any, seed: int, start: dict[str, Any], physics: bool) -> float:
    """One planner decision from `start` toward its goal (seeded); its wall seconds."""
    from rlvr_sim.policies.pusht_mpc import GoalCost, MPCPlanner, PlanStart

    planner = MPCPlanner(model, config, seed=seed)
    began = time.perf_counter()
    planner.plan(PlanStart(frame=start["frame"], state=start["state"] if physics else None), GoalCost(start["goal"]))
    return time.perf_counter() - began


def summary(rounds: list[dict[str, float]], decisions: int) -> dict[str, Any]:
    """A side's rounds -> median rates (each round: its decisions over their summed seconds)."""
    out: dict[str, Any] = {"decisions_per_s": round(statistics.median(decisions / r["seconds"] for r in rounds), 4),
                           "seconds_per_decision": round(statistics.median(r["seconds"] / decisions for r in rounds), 4)}
    if "frames" in rounds[0]:
        out["model_frames_per_s"] = round(statistics.median(r["frames"] / r["world_seconds"] for r in rounds), 2)
        out["decision_frames_per_s"] = round(statistics.median(r["frames"] / r["seconds"] for r in rounds), 2)
        out["frames_per_round"] = [int(r["frames"]) for r in rounds]
    # rounds keep 7 decimals: a quick round lasts ~0.04 s, and a rate recomputed from 4-decimal seconds is off by 0.2%
    out["rounds"] = [{k: round(v, 7) if isinstance(v, float) else v for k, v in r.items()} for r in rounds]
    return out


def difference(batched: list[np.ndarray], one: list[np.ndarray]) -> tuple[float, int]:
    """Batch-1 against batched predicted states of the same action sets: the largest |difference| (world units)
    where the judge reads both, and the number of state values it reads on one side only."""
    worst, missing = 0.0, 0
    for a, b in zip(batched, one):
        missing += int((np.isnan(a) != np.isnan(b)).sum())
        both = ~(np.isnan(a) | np.isnan(b))
        if both.any():
            worst = max(worst, float(np.abs(a[both] - b[both]).max()))
    return worst, missing


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the learned simulator, learned:<checkpoint>")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--elites", type=int, default=6)
    parser.add_argument("--horizon", type=int, default=6)
    parser.add_argument("--method", default="cem", choices=("cem", "mppi"))
    parser.add_argument("--starts", type=int, default=3, help="held-out start frames, one decision each per round")
    parser.add_argument("--goal-steps", type=int, default=6, help="the goal: the true state this many model steps on")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds (alternating order); medians reported")
    parser.add_argument("--no-oracle", action="store_true", help="skip the gym-pusht reference")
    parser.add_argument("--quick", action="store_true",
                        help="smoke-test sizes (options given still win): " +
                        ", ".join(f"{k} {v}" for k, v in QUICK.items()))
    parser.add_argument("--seed", type=int, default=0, help="the planner's seed")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/pusht_planning.json")
    argv = sys.argv[1:] if argv is None else list(argv)
    if parser.parse_known_args(argv)[0].quick:  # the quick sizes as defaults: options given still win
        parser.set_defaults(**QUICK)
    args = parser.parse_args(argv)
    if not args.model.startswith("learned"):
        raise SystemExit(f"--model must be a learned simulator (learned:<checkpoint>), got {args.model!r}")
    torch.set_num_threads(args.threads)
    from rlvr_sim.policies.pusht_mpc import PlannerConfig, PlanStart, make_model

    config = PlannerConfig(samples=args.samples, iterations=args.iterations, elites=args.elites,
                           horizon=args.horizon, method=args.method)
    load_start = os.getloadavg()[0]
    model = make_model(args.model)
    world_seconds = timed_world(model)
    starts = load_starts(model.world, args.starts, args.goal_steps)
    oracle = None if args.no_oracle else make_model("gym-pusht", frame_skip=model.frame_skip)

    # warm-up, untimed: one batched decision per start, which records the action sets both sides roll out
    scripts, batched_states = [], []
    for start in starts:
        recorder = RecordedModel(model, batch=None)
        decide(recorder, config, args.seed, start, physics=False)
        scripts.append(recorder.calls)
        batched_states.append(recorder.states)
    RecordedModel(model, batch=1).rollout(PlanStart(frame=starts[0]["frame"]), scripts[0][0][:2])  # two rows
    if oracle is not None:
        decide(oracle, config, args.seed, starts[0], physics=True)

    sides = [s for s in SIDES if s != "gym_pusht" or oracle is not None]
    rounds: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    followed, state_difference, read_on_one_side, same_batched_actions = True, 0.0, 0, True
    for r in range(args.repeats):
        for side in (sides if r % 2 == 0 else sides[::-1]):
            if side == "gym_pusht":
                seconds = sum(decide(oracle, config, args.seed, start, physics=True) for start in starts)
                rounds[side].append({"seconds": seconds})
                print(f"round {r} {side}: {seconds:.2f} s", flush=True)
                continue
            frames = spent = generation = rollout = 0.0
            for start, script, expected in zip(starts, scripts, batched_states):
                recorder = RecordedModel(model, batch=None if side == "batched" else 1,
                                         script=None if side == "batched" else script)
                before = world_seconds["seconds"]
                spent += decide(recorder, config, args.seed, start, physics=False)
                generation += world_seconds["seconds"] - before
                frames, rollout = frames + recorder.frames, rollout + recorder.rollout_seconds
                if side == "batched":  # the seeded planner repeats its warm-up search exactly
                    same_batched_actions = same_batched_actions and all(
                        np.array_equal(a, b) for a, b in zip(recorder.calls, script)) and len(recorder.calls) == len(script)
                else:
                    followed = followed and recorder.followed
                    worst, missing = difference(expected, recorder.states)
                    state_difference, read_on_one_side = max(state_difference, worst), read_on_one_side + missing
            rounds[side].append({"seconds": spent, "world_seconds": generation, "rollout_seconds": rollout,
                                 "frames": frames})
            print(f"round {r} {side}: {spent:.2f} s, {frames:.0f} frames, {frames / generation:.1f} model frames/s",
                  flush=True)

    decisions = len(starts)
    figures = {side: summary(rounds[side], decisions) for side in sides}
    b, one = figures["batched"], figures["batch1"]
    frames_per_decision = args.samples * args.iterations * args.horizon
    results: dict[str, Any] = {
        "command": "python " + " ".join(["benchmarks/pusht_planning.py", *argv]),
        "machine": machine_record("2 shared cores, a training job running: read the ratios (both sides measured "
                                  "in the same rounds), not the absolute rates"),
        "cpu_count": os.cpu_count(), "threads": args.threads,
        "load_average_at_start": round(load_start, 2),
        "settings": {"model": args.model, "checkpoint": model.world.checkpoint.name,
                     "planner": {"method": args.method, "samples": args.samples, "iterations": args.iterations,
                                 "elites": args.elites, "horizon": args.horizon, "frame_skip": model.frame_skip},
                     "seed": args.seed, "starts": [s["index"] for s in starts], "goal_steps": args.goal_steps,
                     "repeats": args.repeats, "warmup": "untimed: one batched decision per start, two rows "
                     "at batch 1, one gym-pusht decision", "readout": model.readout},
        "frames_per_decision": frames_per_decision,
        "batched_rows": args.samples,
        "batched": figures["batched"],
        "batch1": figures["batch1"],
        "batched_over_batch1": {  # ratios of the medians
            "decisions_per_s": round(b["decisions_per_s"] / one["decisions_per_s"], 3),
            "model_frames_per_s": round(b["model_frames_per_s"] / one["model_frames_per_s"], 3),
        },
        # each round's batched over batch-1 rate, the two sides measured next to each other (the load they met
        # more alike than across rounds); median
        "batched_over_batch1_paired_rounds": {
            "decisions_per_s": round(statistics.median(x["seconds"] / y["seconds"] for x, y in
                                                       zip(rounds["batch1"], rounds["batched"])), 3),
            "model_frames_per_s": round(statistics.median(x["world_seconds"] / y["world_seconds"] for x, y in
                                                          zip(rounds["batch1"], rounds["batched"])), 3),
        },
        "checks": {
            "equal_frames": b["frames_per_round"] == one["frames_per_round"],
            "frames_per_round": decisions * frames_per_decision,
            "batched_search_repeats_exactly": same_batched_actions,
            "batch1_planner_asked_for_the_recorded_sets": followed,
            "max_state_difference_batch1_vs_batched": round(state_difference, 4),
            "state_values_read_on_one_side_only": read_on_one_side,
        },
    }
    if oracle is not None:
        results["gym_pusht"] = figures["gym_pusht"]
        results["batched_over_gym_pusht_decisions_per_s"] = round(
            b["decisions_per_s"] / figures["gym_pusht"]["decisions_per_s"], 4)
    results["load_average_at_end"] = round(os.getloadavg()[0], 2)
    emit_json(results, args.out)
    return results


if __name__ == "__main__":
    main()
