"""PushT goal reaching on stable-worldmodel's protocol: does planning with our world model reach goals?

Starts are states of held-out expert episodes of our own collection (`data/pusht2`, the test split the
PushT checkpoints were trained without: 10% of episodes, split seed 0). Each start is rebuilt exactly in
gym-pusht by replaying its episode from the recorded reset seed and actions (agent velocity included; the
replay matches the recorded states to 2e-5 world units). The goal is the recorded state `offset` env steps
later (25, and the longer 50); the budget is `--budget-factor` x offset env steps (50 and 100 by default);
success, judged at every env step in the real gym-pusht, is stable-worldmodel's test: |(agent xy, block xy)
- goal| < 20 and the block angle within pi/9.

Rows (`--rows`, comma-separated):
- `mpc:<model>`: the planner of `rlvr_sim.policies.pusht_mpc` (CEM by default) with `<model>` =
  `gym-pusht` (the oracle: the real simulator from the true state), `learned:<checkpoint>` (the learned
  simulator from the 64x64 frame; its predicted frames read by the pixel judge) or `mujoco` (the twin);
- `blind:<model>`: the same planner whose cost sees the agent only (the block-blind floor);
- frame-only policies that do not see the goal: `bc`, the scripted skills (`expert` ... `random`; they push
  toward gym-pusht's fixed goal T, as in the data), or your own `package.module:Class` (a `FramePolicy`).

Every policy acts every `frame_skip` env steps (4, the learned simulator's step); a planner replans every
`--replan-every` of its actions. Reported per row: success rate with a bootstrap 95% interval over goals,
seconds per planner decision, and paired differences (RLVR vs base model, learned vs gym-pusht). JSON and
markdown to `--out` (default runs/eval/pusht_planning), each finished goal appended to `pusht_planning_episodes.jsonl`
(`--resume` keeps those of the same settings).

    python evaluations/pusht_planning.py --goals 50
    python evaluations/pusht_planning.py --goals 2 --samples 8 --iterations 1 --rows mpc:gym-pusht,random
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.stats import bootstrap_ci
from rlvr_sim.reporting import add_out_argument
from rlvr_sim.resources import results_dir

DEFAULT_ROWS = ("mpc:gym-pusht", "mpc:learned:pusht_pose_base", "mpc:learned:pusht_pose_rlvr", "mpc:mujoco",
                "blind:gym-pusht", "bc", "expert", "good", "mediocre", "poor", "laggy", "jitter", "random")
PLANNER_PREFIXES = ("mpc:", "blind:")
FRAME_SIZE, DATA_FRAME_SIZE = 64, 96  # the models' frames, resized from gym-pusht's 96x96 as the data were


@dataclass(frozen=True)
class Goal:
    """One goal-reaching problem: the episode to replay, its first `start` recorded actions, and the goal."""

    index: int
    episode: str
    seed: int
    start: int
    actions: np.ndarray  # the recorded actions replayed to reach the start
    start_state: np.ndarray  # (5,) recorded state at `start`
    goal: np.ndarray  # (5,) recorded state `offset` env steps later
    offset: int


def held_out_episodes(data: str | Path, policies: Sequence[str] = ("expert",), test_fraction: float = 0.1,
                      split_seed: int = 0) -> list[Path]:
    """The test split's episode files (the checkpoints' split) played by one of `policies`."""
    from rlvr_sim.data.episodes import episode_paths, split_paths

    test = split_paths(episode_paths(data), test_fraction, split_seed)["test"]
    chosen = []
    for path in test:
        with np.load(path) as arrays:
            if "state" not in arrays or "seed" not in arrays:
                raise ValueError(f"{path} holds no recorded `state` / `seed`: collect with training/collect.py --task pusht")
            if str(arrays["policy"]) in policies:
                chosen.append(path)
    if not chosen:
        raise ValueError(f"no held-out episode of {data} was played by {', '.join(policies)}")
    return chosen


def load_goals(data: str | Path, count: int, offsets: Sequence[int], seed: int = 0, stride: int = 4,
               policies: Sequence[str] = ("expert",)) -> dict[int, list[Goal]]:
    """`count` seeded starts (every `stride` env steps of the held-out episodes, room left for the longest
    offset), the same starts for every offset: {offset: [Goal]}."""
    if count < 1:
        raise ValueError(f"--goals must be >= 1, got {count}")
    longest = max(offsets)
    candidates = []
    for path in held_out_episodes(data, policies):
        with np.load(path) as arrays:
            states, actions, episode_seed = arrays["state"], arrays["action"], int(arrays["seed"])
        for start in range(0, len(states) - longest, stride):
            candidates.append((path.name, episode_seed, start, actions, states))
    if count > len(candidates):
        raise ValueError(f"asked for {count} goals; the held-out {'/'.join(policies)} episodes hold {len(candidates)} "
                         f"starts {longest} steps from their end (lower --stride or --goals)")
    picks = sorted(np.random.default_rng(seed).choice(len(candidates), size=count, replace=False))
    goals: dict[int, list[Goal]] = {offset: [] for offset in offsets}
    for index, pick in enumerate(picks):
        name, episode_seed, start, actions, states = candidates[pick]
        for offset in offsets:
            goals[offset].append(Goal(index, name, episode_seed, start, actions[:start].astype(np.float32),
                                      states[start].astype(np.float64), states[start + offset].astype(np.float64),
                                      offset))
    return goals


class RealPushT:
    """gym-pusht at the data's 96x96, its frames resized to the models' 64x64 as the training data were."""

    def __init__(self) -> None:
        import gym_pusht  # noqa: F401  (registers gym_pusht/PushT-v0)
        import gymnasium as gym

        self.env = gym.make("gym_pusht/PushT-v0", obs_type="pixels", observation_width=DATA_FRAME_SIZE,
                            observation_height=DATA_FRAME_SIZE).unwrapped

    def start(self, goal: Goal) -> np.ndarray:
        """Replay the goal's episode to its start; the frame there (64x64)."""
        observation, _ = self.env.reset(seed=goal.seed)
        for action in goal.actions:
            observation, *_ = self.env.step(action)
        error = float(np.abs(self.state()[:5] - goal.start_state).max())
        if error > 0.01:
            raise RuntimeError(f"replaying {goal.episode} to step {goal.start} ends {error:.3f} units from the "
                               "recorded state: the episode was not recorded with this gym-pusht")
        return self.frame(observation)

    def state(self) -> np.ndarray:
        """(7,) agent x, y, block x, y, angle, agent vx, vy."""
        env = self.env
        return np.array([*env.agent.position, *env.block.position, env.block.angle, *env.agent.velocity])

    def step(self, action: np.ndarray) -> np.ndarray:
        observation, *_ = self.env.step(np.asarray(action, dtype=np.float32))
        return observation

    @staticmethod
    def frame(observation: np.ndarray) -> np.ndarray:
        from rlvr_sim.data.episodes import resize_frames

        return resize_frames(observation[None], FRAME_SIZE)[0]


def is_planner(row: str) -> bool:
    return row.startswith(PLANNER_PREFIXES)


def make_actor(row: str, seed: int, config: Any, replan_every: int, frame_skip: int, readout: str,
               mean_weight: float = 0.0, context_steps: int = 0, combine: str = "sum", last_weight: float = 1.0) -> Any:
    """The row's policy: a planner (`mpc:` / `blind:` + model) or a frame-only policy by Real2Sim's names."""
    if is_planner(row):
        from rlvr_sim.policies.pusht_mpc import PushTMPCPolicy

        kind, _, model = row.partition(":")
        return PushTMPCPolicy(seed=seed, model=model, goal=np.zeros(5), config=config, replan_every=replan_every,
                              blind=kind == "blind", readout=readout, frame_skip=frame_skip, mean_weight=mean_weight,
                              context_steps=context_steps, combine=combine, last_weight=last_weight)
    from rlvr_sim.evaluations.real2sim_episodes import make_policy

    return make_policy(row, seed=seed)


def run_goal(row: str, goal: Goal, real: RealPushT, budget: int, actor: Any, frame_skip: int) -> dict[str, Any]:
    """One row on one goal: act every `frame_skip` env steps for `budget` env steps, success checked each step."""
    from rlvr_sim.evaluations.real2sim_episodes import checked_action, is_user_policy
    from rlvr_sim.policies.pusht_mpc import reached

    from rlvr_sim.metrics.pusht_pixels import estimate_state

    frame = real.start(goal)
    planner, user = is_planner(row), is_user_policy(row) and not is_planner(row)
    learned = planner and row.partition(":")[2].startswith("learned")
    if planner:
        actor.set_goal(goal.goal)
    success_step, best, action = None, np.inf, None
    for step in range(budget):
        if step % frame_skip == 0:
            if planner:  # a learned model plans from the frame alone; a physics model from the true state
                action = actor.act(frame, state=None if learned else real.state())
            elif user:
                action = checked_action(actor, frame, row)
            else:
                action = actor.act(frame, estimate_state(frame))
        frame = real.frame(real.step(action))
        state = real.state()[:5]
        best = min(best, float(np.linalg.norm(state[:4] - goal.goal[:4])))
        if reached(state, goal.goal):
            success_step = step + 1
            break
    record = {"row": row, "offset": goal.offset, "goal": goal.index, "episode": goal.episode, "start": goal.start,
              "success": success_step is not None, "success_step": success_step, "min_distance": best,
              "block_motion": float(np.linalg.norm(goal.goal[2:4] - goal.start_state[2:4]))}  # fmt: skip
    if planner:
        record["decision_seconds"] = list(actor.decision_seconds)
    return record


def _ci(values: Sequence[float], seed: int) -> dict[str, float]:
    values = np.asarray(values, dtype=np.float64)
    low, high = bootstrap_ci(values, seed=seed)
    return {"mean": float(values.mean()), "low": low, "high": high}


def summarise(records: list[dict[str, Any]], rows: Sequence[str], offsets: Sequence[int], seed: int) -> dict[str, Any]:
    """Per offset and row: success rate [95% CI], seconds per decision, min distance; paired differences."""
    table: dict[str, Any] = {}
    for offset in offsets:
        by_row = {row: sorted((r for r in records if r["row"] == row and r["offset"] == offset),
                              key=lambda r: r["goal"]) for row in rows}
        entry: dict[str, Any] = {"rows": {}, "paired": {}}
        for row, items in by_row.items():
            if not items:
                continue
            seconds = [s for r in items for s in r.get("decision_seconds", [])]
            entry["rows"][row] = {
                "goals": len(items),
                "success": _ci([r["success"] for r in items], seed),
                "seconds_per_decision": float(np.mean(seconds)) if seconds else None,
                "decisions_per_goal": float(np.mean([len(r["decision_seconds"]) for r in items])) if seconds else None,
                "median_min_distance": float(np.median([r["min_distance"] for r in items])),
            }
        pairs = [(a, b) for a in rows for b in rows if a != b and (a, b) in _PAIRS_OF_INTEREST(rows)]
        for candidate, baseline in pairs:
            a, b = by_row.get(candidate, []), by_row.get(baseline, [])
            if a and b and [r["goal"] for r in a] == [r["goal"] for r in b]:
                diff = np.array([x["success"] for x in a], float) - np.array([y["success"] for y in b], float)
                low, high = bootstrap_ci(diff, seed=seed)
                entry["paired"][f"{candidate} - {baseline}"] = {"difference": float(diff.mean()), "low": low, "high": high,
                                                                 "excludes_zero": bool(low > 0 or high < 0)}
        goals = by_row[rows[0]] if by_row.get(rows[0]) else next((v for v in by_row.values() if v), [])
        if goals:
            motion = np.array([r["block_motion"] for r in goals])
            entry["block_still_share"] = float(np.mean(motion < POSITION_STILL))
        table[str(offset)] = entry
    return table


POSITION_STILL = 10.0  # world units: a goal whose block moved less than this is within reach of a block-blind plan


def _PAIRS_OF_INTEREST(rows: Sequence[str]) -> list[tuple[str, str]]:  # noqa: N802
    """(candidate, baseline): RLVR vs base learned model, each learned / MuJoCo planner vs gym-pusht, each
    planner vs the block-blind floor."""
    learned = [r for r in rows if r.startswith("mpc:learned:")]
    pairs = [(a, b) for a in learned for b in learned if "rlvr" in a and "rlvr" not in b]
    pairs += [(r, "mpc:gym-pusht") for r in rows if r.startswith("mpc:") and r != "mpc:gym-pusht"]
    pairs += [(r, b) for r in rows if r.startswith("mpc:") for b in rows if b.startswith("blind:")]
    return pairs


def markdown(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    lines = ["# PushT goal reaching (stable-worldmodel's protocol)", "",
             f"`{settings['command']}`", "",
             f"{settings['goals']} goals from held-out expert episodes of `{settings['data']}`; success: |(agent xy, "
             "block xy) - goal| < 20 and block angle within pi/9 at any env step, in gym-pusht. Planner budget: "
             f"{settings['planner']['method'].upper()} {settings['planner']['samples']} samples x "
             f"{settings['planner']['iterations']} iterations (top {settings['planner']['elites']}), horizon "
             f"{settings['planner']['horizon']} actions of {settings['frame_skip']} env steps, replanning every "
             f"{settings['replan_every']} action(s)"
             + (f", noise colour beta {settings['planner']['noise_beta']:g}" if settings["planner"].get("noise_beta") else "")
             + (f", {settings['planner']['keep_elites']:g} of the elites kept" if settings["planner"].get("keep_elites") else "")
             + (f", spread {settings['planner']['warm_std']:g} when warm-started" if settings["planner"].get("warm_std") else "")
             + (f", learned models with {settings['context_steps']} past frame(s) as context" if settings.get("context_steps") else "")
             + "; cost: best step + " + (f"{settings.get('last_weight', 1.0):g} x " if settings.get("last_weight", 1.0) != 1 else "")
             + "last step" + (", each step the larger of its position and angle terms" if settings.get("cost_combine", "sum") == "max" else "")
             + (f" + {settings['mean_weight']:g} x mean step" if settings.get("mean_weight") else "")
             + f". Wall time {settings['seconds']:.0f} s on {settings['machine']}.", ""]
    for offset, entry in summary.items():
        budget = int(offset) * settings["budget_factor"]
        lines += [f"## Goal {offset} env steps ahead, budget {budget} env steps", ""]
        if "block_still_share" in entry:
            lines += [f"Goals whose block moves < {POSITION_STILL:g} units: {entry['block_still_share']:.0%}.", ""]
        lines += ["| row | success | 95% CI | s / decision | median min distance |", "|---|---:|---:|---:|---:|"]
        for row, r in entry["rows"].items():
            seconds = "" if r["seconds_per_decision"] is None else f"{r['seconds_per_decision']:.2f}"
            s = r["success"]
            lines.append(f"| {row} | {s['mean']:.1%} ({r['goals']}) | [{s['low']:.1%}, {s['high']:.1%}] | {seconds} | "
                         f"{r['median_min_distance']:.1f} |")
        if entry["paired"]:
            lines += ["", "| paired difference | success points | 95% CI |", "|---|---:|---:|"]
            for name, p in entry["paired"].items():
                lines.append(f"| {name} | {100 * p['difference']:+.1f} | [{100 * p['low']:+.1f}, {100 * p['high']:+.1f}] |")
        lines.append("")
    return "\n".join(lines)


LATER_PLANNER_OPTIONS = ("noise_beta", "keep_elites", "warm_std")


def _settings_key(settings: dict[str, Any]) -> str:
    """What decides a goal's outcome besides the row: a resumed record must share it."""
    keep = {k: settings[k] for k in ("data", "goals", "seed", "stride", "offsets", "budget_factor", "frame_skip",
                                     "replan_every", "planner", "readout")}
    # options added later count only when set, so logs written before them still resume
    keep["planner"] = {k: v for k, v in keep["planner"].items() if not (k in LATER_PLANNER_OPTIONS and not v)}
    for option in ("mean_weight", "context_steps"):
        if settings.get(option):
            keep[option] = settings[option]
    for option, default in (("cost_combine", "sum"), ("last_weight", 1.0)):
        if settings.get(option, default) != default:
            keep[option] = settings[option]
    return hashlib.sha1(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:12]


def evaluate(args: argparse.Namespace, argv: Sequence[str] | None = None) -> dict[str, Any]:
    import platform

    import torch
    from rlvr_sim.policies.pusht_mpc import PlannerConfig
    from tqdm.auto import tqdm

    torch.set_num_threads(args.threads)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    if not rows or len(set(rows)) != len(rows):
        raise SystemExit("--rows must name at least one row, none twice")
    offsets = sorted({int(o) for o in str(args.offsets).split(",")})
    if min(offsets) < 1 or args.budget_factor < 1:
        raise SystemExit("--offsets must be positive and --budget-factor >= 1")
    if not args.mean_weight >= 0:
        raise SystemExit(f"--mean-weight must be >= 0, got {args.mean_weight}")
    if not (np.isfinite(args.last_weight) and args.last_weight >= 0):
        raise SystemExit(f"--last-weight must be a finite number >= 0, got {args.last_weight}")
    if args.context_steps < 0:
        raise SystemExit(f"--context-steps must be >= 0, got {args.context_steps}")
    config = PlannerConfig(samples=args.samples, iterations=args.iterations, elites=min(args.elites, args.samples),
                           horizon=args.horizon, init_std=args.init_std, method=args.method,
                           noise_beta=args.noise_beta, keep_elites=args.keep_elites, warm_std=args.warm_std)
    settings = {"command": "python evaluations/pusht_planning.py " + " ".join(sys.argv[1:] if argv is None else argv),
                "data": str(args.data), "goals": args.goals, "seed": args.seed, "stride": args.stride,
                "offsets": offsets, "budget_factor": args.budget_factor, "frame_skip": args.frame_skip,
                "replan_every": args.replan_every, "planner": asdict(config), "readout": args.readout,
                "mean_weight": args.mean_weight, "cost_combine": args.cost_combine, "last_weight": args.last_weight,
                "context_steps": args.context_steps, "rows": rows, "machine": f"{platform.processor() or platform.machine()}, torch threads {args.threads}"}  # fmt: skip
    actor_options = {"config": config, "replan_every": args.replan_every, "frame_skip": args.frame_skip,
                     "readout": args.readout, "mean_weight": args.mean_weight, "context_steps": args.context_steps,
                     "combine": args.cost_combine, "last_weight": args.last_weight}
    for row in rows:  # a row that cannot be built (unknown model, broken user policy) fails before any goal
        make_actor(row, args.seed, **actor_options)
    goals = load_goals(args.data, args.goals, offsets, seed=args.seed, stride=args.stride)
    out = results_dir(args.out if args.out is not None else None)
    out = out if args.out is not None else out / "pusht_planning"
    out.mkdir(parents=True, exist_ok=True)
    log, key = out / "pusht_planning_episodes.jsonl", _settings_key(settings)
    done: dict[tuple[str, int, int], dict[str, Any]] = {}
    if args.resume and log.is_file():
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if record.get("settings_key") == key:
                done[(record["row"], record["offset"], record["goal"])] = record
    elif log.exists():
        log.write_text("")
    real = RealPushT()
    began = time.perf_counter()
    records = []
    todo = [(row, offset, goal) for row in rows for offset in offsets for goal in goals[offset]]
    bar = tqdm(todo, desc="pusht planning", unit="goal", disable=args.quiet)
    for row, offset, goal in bar:
        bar.set_postfix_str(f"{row} +{offset}")
        if (row, offset, goal.index) in done:
            records.append(done[(row, offset, goal.index)])
            continue
        actor_seed = int(np.random.SeedSequence([args.seed, goal.index, offset, *row.encode()]).generate_state(1)[0])
        actor = make_actor(row, actor_seed, **actor_options)
        record = run_goal(row, goal, real, offset * args.budget_factor, actor, args.frame_skip)
        record["settings_key"] = key
        records.append(record)
        with log.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
    settings["seconds"] = time.perf_counter() - began
    summary = summarise(records, rows, offsets, args.seed)
    report = {"settings": settings, "results": summary, "episodes": records}
    (out / "pusht_planning.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "pusht_planning.md").write_text(markdown(summary, settings))
    if not args.quiet:
        print((out / "pusht_planning.md").read_text())
        print(f"wrote {out / 'pusht_planning.json'} and {out / 'pusht_planning.md'}")
    return report


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="PushT goal reaching: planning with gym-pusht / learned simulators vs policies.")
    p.add_argument("--data", default="data/pusht2", help="PushT episodes with recorded states (training/collect.py --task pusht)")
    p.add_argument("--goals", type=int, default=50, help="held-out starts (each used for every offset)")
    p.add_argument("--offsets", default="25,50", help="goal = the recorded state this many env steps after the start")
    p.add_argument("--budget-factor", type=int, default=2, help="env steps allowed = factor x offset (2: 50 for 25)")
    p.add_argument("--stride", type=int, default=4, help="candidate starts every this many env steps")
    p.add_argument("--rows", default=",".join(DEFAULT_ROWS), help="mpc:<model>, blind:<model> (model: gym-pusht, "
                   "mujoco, learned:<checkpoint>), bc, scripted skills, package.module:Class")
    p.add_argument("--samples", type=int, default=64, help="planner samples per iteration (paper: 300)")
    p.add_argument("--iterations", type=int, default=3, help="planner iterations (paper: 30)")
    p.add_argument("--elites", type=int, default=8, help="CEM elites (paper: 30)")
    p.add_argument("--horizon", type=int, default=6, help="planned actions, each held --frame-skip env steps (paper: 5 x 5)")
    p.add_argument("--init-std", type=float, default=60.0, help="initial sampling spread of targets (world units)")
    p.add_argument("--method", default="cem", choices=("cem", "mppi"))
    p.add_argument("--replan-every", type=int, default=3, help="planner actions executed between plans")
    p.add_argument("--frame-skip", type=int, default=4, help="env steps each action is held (the learned model's 4)")
    p.add_argument("--readout", default="judge", choices=("judge", "pose"),
                   help="learned model: pixel judge on predicted frames, or its predicted pose tokens")
    p.add_argument("--noise-beta", type=float, default=0.0,
                   help="colour of the sampling noise along the horizon (iCEM): 0 white, 2 brown (PlannerConfig)")
    p.add_argument("--warm-std", type=float, default=None,
                   help="sampling spread of a search warm-started from the last plan (default: --init-std)")
    p.add_argument("--keep-elites", type=float, default=0.0,
                   help="share of CEM's elites carried into the next iteration's samples (PlannerConfig)")
    p.add_argument("--context-steps", type=int, default=0,
                   help="learned models plan from the frame with up to this many earlier frames and actions as context")
    p.add_argument("--mean-weight", type=float, default=0.0,
                   help="planners' cost: add this times the mean step cost (GoalCost.mean_weight; 0 = best + last step)")
    p.add_argument("--cost-combine", default="sum", choices=("sum", "max"),
                   help="planners' per-step cost: position + angle terms, or the larger of the two (GoalCost.combine)")
    p.add_argument("--last-weight", type=float, default=1.0,
                   help="planners' cost: best step + this times the last step (GoalCost.last_weight)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--resume", action="store_true", help="keep finished goals of the same settings in <out>/pusht_planning_episodes.jsonl")
    p.add_argument("--quiet", action="store_true", help="no progress bar or table print")
    add_out_argument(p, help="output folder (default runs/eval/pusht_planning)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parser().parse_args(argv)
    return evaluate(args, argv)


if __name__ == "__main__":
    main()
