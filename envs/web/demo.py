"""One MPC web-agent episode in the real browser with the embedded web world model (for the project's
`demo` command, which adds the committed web tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlvr_sim.resources import asset_path


def episode_text(result: dict[str, Any], base_url: str, objective: str) -> str:
    """A printable trace of one MPC episode (`policies.web_mpc.run_episode`'s result)."""
    lines = [f"site {base_url} | task {result['task_id']}: {objective}"]
    for step in result["trace"]:
        scores = ", ".join(f"{action}: {value:.2f}" for action, value in step["scores"].items())
        lines.append(f"  {step['action']:<32} imagined values: {scores}")
    lines.append(f"  success: {result['success']} in {result['steps']} steps")
    return "\n".join(lines)


def run_episode_text(checkpoint: str | Path | None = None, task_id: int = 0, seed: int = 0,
                     max_steps: int = 8) -> tuple[str, dict[str, Any]]:
    """Start the local site and Chromium, run one MPC episode with a learned world model (greedy); return
    (trace text, result)."""
    from rlvr_sim.envs.web.browser_env import BrowserEnv
    from rlvr_sim.envs.web.world_model_env import LMWebWorldModel
    from rlvr_sim.policies.web_mpc import (
        HeuristicValueFunction,
        HeuristicWebPolicy,
        LearnedWorldModel,
        MPCWebAgent,
        run_episode,
    )

    checkpoint = Path(checkpoint) if checkpoint is not None else asset_path("web_rlvr")
    world_model = LearnedWorldModel(LMWebWorldModel.from_checkpoint(checkpoint, temperature=0.0))
    env = BrowserEnv(max_steps=max_steps)
    try:
        agent = MPCWebAgent(HeuristicWebPolicy(), HeuristicValueFunction(), world_model)
        result = run_episode(env, agent, task_id, seed=seed, max_steps=max_steps)
        text = episode_text(result, env.base_url, env.task.objective if env.task else "")
    finally:
        env.close()
    return f"MPC agent, world model {checkpoint.name}, real Chromium:\n{text}", result


def run_demo(seed: int = 0, task_id: int = 0, checkpoint: str | Path | None = None) -> str:
    """The `demo` section's episode: one real-browser MPC episode with the embedded world model."""
    return run_episode_text(checkpoint, task_id=task_id, seed=seed)[0]
