"""SIMPLER's side of Real2Sim: result tables in its formats (`--table`) and its ManiSkill3 scenes (`--simpler`).

`evaluate_table` reads per-policy real and simulated success rates from a CSV/TSV, markdown or JSON table
(`rlvr_sim.metrics.real2sim.read_success_table`: simpler-env's JSON with metadata entries beside the rates
is read, those entries skipped and listed) and scores every simulator with SIMPLER's Pearson and MMRV.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.real2sim import read_success_table, real2sim_report, report_markdown


def evaluate_table(table: str | Path, percent: bool = False, task: str | None = None) -> dict[str, Any]:
    """Pearson and MMRV of every simulator in a result table, per task and averaged over tasks; `skipped`
    lists the table's entries read as metadata rather than rates."""
    read = read_success_table(table, percent=percent, task=task)
    report = real2sim_report(read.tasks)
    report["source"], report["skipped"] = str(table), read.skipped
    report["metric_definitions"] = {
        "pearson": "Pearson correlation of per-policy success rates, simpler-env formula (higher is better)",
        "mmrv": "mean over policies i of max_j |real_i - real_j| where sim and real order (i, j) "
        "differently, strict >, as simpler-env (lower is better)",
    }
    return report


def write_report(report: dict[str, Any], out_dir: str | Path, name: str = "real2sim") -> tuple[Path, Path]:
    """Write `<name>.json` and `<name>.md` (a `--table` report) into `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    skipped = "".join(f"\nSkipped as metadata, not rates: {entry}" for entry in report.get("skipped", []))
    markdown_path.write_text(f"Real2Sim policy evaluation ({report['source']})\n\n" + report_markdown(report) + skipped
                             + ("\n" if skipped else ""))
    return json_path, markdown_path


def run_simpler(task: str, episodes: int = 2, seed: int = 0, max_steps: int = 60) -> dict[str, Any]:
    """Roll a seeded random policy in a ManiSkill3 SIMPLER scene (e.g. PutCarrotOnPlateInScene-v1), to
    show the scene runs here; a clear skip when ManiSkill3 (mani-skill, SAPIEN 3) is not importable."""
    try:
        import gymnasium as gym
        import mani_skill.envs  # noqa: F401  (registers the ManiSkill3 / SIMPLER ids)
    except ImportError as error:
        message = (f"SIMPLER skipped: ManiSkill3 is not importable here ({error}). Install `mani-skill` "
                   "(SAPIEN 3, a Vulkan driver) to run its Bridge/WidowX scenes; see docs/real2sim.md.")  # fmt: skip
        print(message)
        return {"skipped": message, "task": task}
    env = gym.make(task, obs_mode="rgb", num_envs=1)
    rng = np.random.default_rng(seed)
    successes = []
    try:
        for episode in range(episodes):
            env.reset(seed=seed + episode)
            success = False
            for _ in range(max_steps):
                action = rng.uniform(env.action_space.low, env.action_space.high).astype(np.float32)
                _, _, terminated, truncated, info = env.step(action)
                success = success or bool(np.asarray(info.get("success", False)).any())
                if np.asarray(terminated).any() or np.asarray(truncated).any():
                    break
            successes.append(success)
    finally:
        env.close()
    result = {"task": task, "policy": "random", "episodes": episodes, "success_rate": float(np.mean(successes))}
    print(json.dumps(result))
    return result
