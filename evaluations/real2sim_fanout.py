"""Real2Sim's fan-out: every `EpisodeSpec` as a Ray task (local or a cluster) or in this process, resumable.

Episodes are deterministic, so where they run does not change a number; results come back in the order
of the specs either way, and an append-only JSON-lines log lets an interrupted run resume exactly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr_sim.evaluations.real2sim_episodes import JUDGE_VERSION, EpisodeSpec, run_episode


def _spec_key(spec: EpisodeSpec) -> str:
    """What decides an episode's outcome, and the judge's version (episodes judged by an older one are re-run)."""
    return json.dumps([spec.sim_name, spec.policy, spec.episode, spec.seed, spec.horizon, list(spec.task_overrides),
                       JUDGE_VERSION])


def run_episodes(
    specs: Sequence[EpisodeSpec], use_ray: bool = True, ray_address: str | None = None, num_cpus: int = 2,
    progress: bool = True, log: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Run every spec, as Ray tasks (a local instance with `num_cpus`, or the cluster at `ray_address`)
    or in this process; results in the order of `specs` either way. With `log`, every finished episode
    is appended to that JSON-lines file at once and episodes already there are not run again: episodes
    are deterministic, so an interrupted run resumes exactly."""
    from tqdm.auto import tqdm

    done: dict[str, dict[str, Any]] = {}
    if log is not None and Path(log).is_file():
        for line in Path(log).read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                done[record.pop("key")] = record
    todo = [s for s in specs if _spec_key(s) not in done]
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), desc="real2sim rollouts", unit="episode",
               disable=not progress)  # fmt: skip
    handle = open(log, "a") if log is not None else None  # noqa: SIM115 (closed below; appended per episode)

    def finish(spec: EpisodeSpec, result: dict[str, Any]) -> None:
        done[_spec_key(spec)] = result
        if handle is not None:
            handle.write(json.dumps({"key": _spec_key(spec), **result}) + "\n")
            handle.flush()
        bar.update()

    try:
        if not use_ray:
            for spec in todo:
                finish(spec, run_episode(spec))
        elif todo:
            import ray

            if not ray.is_initialized():
                if ray_address:
                    ray.init(address=ray_address)
                else:
                    # Ray renices its workers by +15 unless told otherwise: on a busy machine they would then
                    # only get idle CPU. Keep them at this process's priority (run under `nice` for less).
                    os.environ.setdefault("RAY_worker_niceness", "0")
                    ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level="warning")
            remote = ray.remote(num_cpus=1)(run_episode)
            pending = {remote.remote(spec): spec for spec in todo}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    finish(pending.pop(ref), ray.get(ref))
    finally:
        bar.close()
        if handle is not None:
            handle.close()
    return [done[_spec_key(s)] for s in specs]
