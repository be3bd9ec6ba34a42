"""Real2Sim policy evaluation: does a simulator rank policies the way the real world does?

`--table`: read per-policy success rates (real world and one or more simulators) from a result table and
write SIMPLER's metrics per task and averaged over tasks: Pearson correlation (higher is better) and
MMRV, the mean maximum rank violation (lower is better). See `rlvr_sim.metrics.real2sim` for the
definitions and table layouts (CSV/TSV, markdown, JSON as simpler-env keeps its numbers).

    python evaluations/real2sim.py --table results.csv --out runs/real2sim
    python evaluations/real2sim.py --table paper_table.md --percent --out runs/real2sim

`--rollout`: measure the rates on PushT. "Real" is gym-pusht; simulators are the hand-built MuJoCo
PushT (`mujoco`) and learned video simulators (`learned:<checkpoint>`). Every policy x episode x
simulator is one seeded task (Ray by default, `--no-ray` in-process: same numbers), every simulator
starts from the same `NearGoalTask` start state (the learned one from gym-pusht's 64x64 frame of it),
every policy sees frames only, and success is judged on frames by the same pixel judge everywhere
(its agreement with gym-pusht's true state is reported). Success rates carry bootstrap 95% intervals
over episodes, Pearson/MMRV per simulator bootstrap intervals over the (paired) episodes.
`tokenizer:<checkpoint>` is gym-pusht's own dynamics with every frame shown as that checkpoint's tokenizer draws
it back (over the frames the served env draws over): the ceiling its tokenizer puts on a learned simulator.

    python evaluations/real2sim.py --rollout
    python evaluations/real2sim.py --rollout --sims real,mujoco,learned:assets/pusht_pose_rlvr --episodes 20
    python evaluations/real2sim.py --rollout --sims real,tokenizer:pusht_visual_mixed   # the tokenizer's ceiling
    python evaluations/real2sim.py --rollout --ray-address ray://head:10001   # a Ray cluster
    python evaluations/real2sim.py --perturb-sweep                           # MuJoCo gaps vs ranking
    python evaluations/real2sim.py --simpler PutCarrotOnPlateInScene-v1      # ManiSkill3, if installed
    python evaluations/real2sim.py --build-support assets/pusht_pose_rlvr    # write its support.npz

`--policies` names scripted skills, `bc` / `bc:<dir>`, or your own `package.module:Class`: any class with
the `FramePolicy` protocol (`Class(seed=...)`, `reset(seed)`, `act(frame) -> (x, y)`; docs/real2sim.md).

    python evaluations/real2sim.py --rollout --policies expert,random,mypkg.policy:MyPolicy --episodes 20

Learned simulators also report, per policy, the share of predicted frames out of the training data's
support (`rlvr_sim.metrics.support.DataSupport`, the checkpoint's `support.npz`), and flag policies above
`--support-flag`. The parts live beside this script: `real2sim_episodes` (one seeded episode, policies by
name), `real2sim_fanout` (Ray / in-process, resumable), `real2sim_report` (rates, metrics, markdown,
plots), `real2sim_simpler` (SIMPLER tables and scenes); the detector in `rlvr_sim.metrics.support`, its
builder in `rlvr_sim.data.support`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rlvr_sim.evaluations.real2sim_episodes import (
    EpisodeSpec,
    format_level,
    is_user_policy,
    make_policy,
    rollout_specs,
)
from rlvr_sim.evaluations.real2sim_fanout import run_episodes
from rlvr_sim.evaluations.real2sim_report import plot_rollout, plot_sweep, rollout_markdown, summarise
from rlvr_sim.evaluations.real2sim_simpler import evaluate_table, run_simpler, write_report

from rlvr_sim.data.support import build_support
from rlvr_sim.metrics.support import SUPPORT_FILE, SUPPORT_FLAG_SHARE, DataSupport
from rlvr_sim.reporting import add_out_argument

DEFAULT_POLICIES = ("expert", "good", "laggy", "mediocre", "poor", "bc", "random")
DEFAULT_SIMS = "real,mujoco,learned:pusht_pose_base,learned:pusht_pose_rlvr"
DEFAULT_OUT = "evaluations/results/real2sim_pusht"
# --perturb-sweep: for each gap of the MuJoCo sim to gym-pusht, the levels charted (the first is none).
PERTURBATIONS: dict[str, list[Any]] = {
    "friction": [0.0, 0.3, 1.0],
    "damping": [0.0, 0.5, 0.9],
    "block_mass": [1.0, 3.0, 10.0],
    "colour_offset": [(0.0, 0.0, 0.0), (30.0, 30.0, 30.0), (60.0, 60.0, 60.0)],
    "camera_offset": [(0.0, 0.0), (12.0, 0.0), (32.0, 0.0)],
}


def _settings(args: argparse.Namespace, argv: Sequence[str] | None, seconds: float) -> dict[str, Any]:
    from rlvr_sim.policies.pusht import NearGoalTask

    return {
        "task": asdict(NearGoalTask(horizon=args.horizon)),
        "seed": args.seed,
        "episodes": args.episodes,
        "command": "python evaluations/real2sim.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "backend": "in-process" if args.no_ray else f"ray ({args.ray_address or f'local, {args.num_cpus} CPUs'})",
        "seconds": seconds,
    }


def _episode_log(args: argparse.Namespace) -> Path:
    """`<out>/episodes.jsonl`, emptied unless `--resume`: its records do not know which code or which
    checkpoint contents produced them, so only the user can say they still hold."""
    log = Path(args.out) / "episodes.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    if not args.resume:
        log.write_text("")
    return log


def _policies(args: argparse.Namespace) -> list[str]:
    """`--policies` as a list; a user's `module:Class` is built once here, so a policy that cannot load
    fails before any episode runs (and before Ray starts)."""
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if len(set(policies)) != len(policies):
        raise SystemExit("--policies must not repeat a name")
    for name in policies:
        if is_user_policy(name):
            make_policy(name, seed=args.seed)
    return policies


def rollout(args: argparse.Namespace, argv: Sequence[str] | None) -> dict[str, Any]:
    """`--rollout`: every policy x episode x simulator, then rates, metrics, table, plot."""
    sims = [s.strip() for s in args.sims.split(",") if s.strip()]
    if len(set(sims)) != len(sims):
        raise SystemExit("--sims must not repeat a name")
    policies = _policies(args)
    start = time.perf_counter()
    specs = rollout_specs(sims, policies, args.episodes, args.seed, args.horizon)
    out = Path(args.out)
    results = run_episodes(specs, not args.no_ray, args.ray_address, args.num_cpus, not args.quiet, _episode_log(args))
    summary = summarise(results, sims, policies, seed=args.seed, flag_share=args.support_flag)
    for sim, entry in summary["support"].items():  # where each support came from, and its calibration
        entry.update(_support_details(sim))
    report = {"settings": _settings(args, argv, time.perf_counter() - start), **summary, "episodes_detail": results}
    # real2sim.md: the name evaluations/report.py puts in the README's results section
    (out / "real2sim.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "real2sim.md").write_text(rollout_markdown(summary, report["settings"]))
    plot = plot_rollout(summary, out / "real2sim_pusht.png")
    print((out / "real2sim.md").read_text())
    print(f"wrote {out / 'real2sim.json'}, {out / 'real2sim.md'}" + (f", {plot}" if plot else ""))
    return report


def _support_details(sim: str) -> dict[str, Any]:
    """The checkpoint directory of a `learned:` simulator and, where it ships one, its support's calibration."""
    from rlvr_sim.envs.video.world_model_env import resolve_checkpoint

    from rlvr_sim.resources import display_path

    checkpoint = resolve_checkpoint(sim.split(":", 1)[1] or None)
    path = checkpoint / SUPPORT_FILE
    if not path.is_file():
        return {"checkpoint": display_path(checkpoint)}
    support = DataSupport.load(path)
    return {"checkpoint": display_path(checkpoint), "threshold": support.threshold, "calibration": support.info}


def perturb_sweep(args: argparse.Namespace, argv: Sequence[str] | None) -> dict[str, Any]:
    """`--perturb-sweep`: Pearson/MMRV of the MuJoCo sim vs real as each of its gaps to gym-pusht grows."""
    policies = _policies(args)
    start = time.perf_counter()
    configs = [()] + [((kind, level),) for kind, levels in PERTURBATIONS.items() for level in levels[1:]]
    specs = rollout_specs(["real"], policies, args.episodes, args.seed, args.horizon)
    for perturb in configs:
        specs += rollout_specs(["mujoco"], policies, args.episodes, args.seed, args.horizon, perturb)
    specs.sort(key=lambda spec: spec.episode)  # episode by episode, as rollout_specs
    out = Path(args.out)
    results = run_episodes(specs, not args.no_ray, args.ray_address, args.num_cpus, not args.quiet, _episode_log(args))
    names = ["real"] + [EpisodeSpec("mujoco", "", 0, perturb=p).sim_name for p in configs]
    summary = summarise(results, names, policies, seed=args.seed)
    sweep = {
        kind: [{"level": level, **summary["metrics"][EpisodeSpec("mujoco", "", 0, perturb=((kind, level),) if i else ()).sim_name]}
               for i, level in enumerate(levels)]
        for kind, levels in PERTURBATIONS.items()
    }  # fmt: skip
    report = {"settings": _settings(args, argv, time.perf_counter() - start), **summary, "sweep": sweep}
    lines = ["# Real2Sim on PushT: MuJoCo perturbation sweep", "", rollout_markdown(summary, report["settings"]), "",
             "| perturbation | level | Pearson | MMRV |", "|---|---:|---:|---:|"]  # fmt: skip
    for kind, rows in sweep.items():
        for r in rows:
            lines.append(f"| {kind} | {format_level(r['level'])} | {r['pearson']:.3f} [{r['pearson_ci95'][0]:.3f}, "
                         f"{r['pearson_ci95'][1]:.3f}] | {r['mmrv']:.3f} [{r['mmrv_ci95'][0]:.3f}, {r['mmrv_ci95'][1]:.3f}] |")  # fmt: skip
    (out / "perturb_sweep.json").write_text(json.dumps(report, indent=2, default=list) + "\n")
    (out / "perturb_sweep.md").write_text("\n".join(lines) + "\n")
    plot_sweep(sweep, out / "perturb_sweep.png")
    print((out / "perturb_sweep.md").read_text())
    return report


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="Real2Sim: Pearson/MMRV from a table, or measured PushT rollouts.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", help="CSV/TSV, markdown or JSON table of success rates")
    source.add_argument("--rollout", action="store_true", help="measure PushT rates: real vs simulators")
    source.add_argument("--perturb-sweep", action="store_true", help="MuJoCo sim vs real as its gaps grow")
    source.add_argument("--simpler", metavar="TASK", help="a ManiSkill3 SIMPLER task id (skips if not installed)")
    source.add_argument("--build-support", metavar="CHECKPOINT",
                        help=f"write CHECKPOINT/{SUPPORT_FILE} (training frames' pose codes, calibrated threshold)")
    parser.add_argument("--percent", action="store_true", help="numbers in the table are percentages")
    parser.add_argument("--task", help="task name of a single-task table (default: the file name)")
    add_out_argument(parser, help=f"output folder (default: runs/real2sim for --table, {DEFAULT_OUT} otherwise)")
    rollout_args = parser.add_argument_group("rollout")
    rollout_args.add_argument("--sims", default=DEFAULT_SIMS, help="comma-separated: real (first), mujoco, learned:<checkpoint>, "
                              "tokenizer:<checkpoint> (gym-pusht seen through the checkpoint's tokenizer)")
    rollout_args.add_argument("--policies", default=",".join(DEFAULT_POLICIES), help="comma-separated PushT policies: skills, bc, bc:<dir>, "
                              "package.module:Class (a FramePolicy, docs/real2sim.md)")
    rollout_args.add_argument("--episodes", type=int, default=20, help="episodes per policy and simulator")
    rollout_args.add_argument("--horizon", type=int, default=48, help="model steps per episode (4 env steps each)")
    rollout_args.add_argument("--seed", type=int, default=0)
    rollout_args.add_argument("--no-ray", action="store_true", help="run every episode in this process")
    rollout_args.add_argument("--ray-address", help="a running Ray cluster (default: start a local instance)")
    rollout_args.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance")
    rollout_args.add_argument("--quiet", action="store_true", help="no progress bar")
    rollout_args.add_argument("--resume", action="store_true", help="keep episodes already in <out>/episodes.jsonl")
    rollout_args.add_argument("--support-flag", type=float, default=SUPPORT_FLAG_SHARE,
                              help="flag policies out of the data's support on more than this share of learned steps")
    parser.add_argument("--data", help="--build-support: episode folder (default: the checkpoint's data_dir)")
    args = parser.parse_args(argv)
    if args.build_support:
        support = build_support(args.build_support, args.data)
        return {"threshold": support.threshold, **support.info}
    if args.simpler:
        return run_simpler(args.simpler, seed=args.seed)
    if args.table:
        report = evaluate_table(args.table, percent=args.percent, task=args.task)
        json_path, markdown_path = write_report(report, args.out or "runs/real2sim")
        print(markdown_path.read_text())
        print(f"wrote {json_path} and {markdown_path}")
        return report
    args.out = args.out or DEFAULT_OUT
    return rollout(args, argv) if args.rollout else perturb_sweep(args, argv)


if __name__ == "__main__":
    main()
