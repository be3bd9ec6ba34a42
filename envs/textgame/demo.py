"""A printable side-by-side of RLVRWorld-TextGame-v0 and the real game (for the project's `demo` command,
which adds the committed accuracy table)."""

from __future__ import annotations

import json

from rlvr_sim.envs.textgame.env import game_state
from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModelEnv

from rlvr_sim.metrics.textgame import make_diff


def _changes(before: dict, after: dict) -> str:
    """A one-line summary of a diff: changed objects with their properties, removals, new score."""
    diff = make_diff(before, after)
    parts = [f"{o['name']}{json.dumps(o['properties'], separators=(',', ':'))}"
             + (f" holds {o['contains']}" if o["contains"] else "") for o in diff["modified"]]
    parts += [f"removed uuid {u}" for u in diff["removed"]]
    if diff["score"]:
        parts.append(f"score {diff['score']}")
    return "; ".join(parts) or "(no change)"


def run_demo(steps: int = 5, seed: int = 0, game: str = "boil-water", checkpoint: str | None = None) -> str:
    """Play `steps` expert actions in RLVRWorld-TextGame-v0 with the real game as shadow; return the text."""
    env = TextGameWorldModelEnv(checkpoint=checkpoint, game=game, shadow=True)
    _, info = env.reset(seed=seed)
    lines = [f"RLVRWorld-TextGame-v0 ({env.world_model.checkpoint}) next to the real game '{game}' (seed {seed})",
             f"Task: {env.real_game.task_description}"]
    for step in range(1, steps + 1):
        action = env.real_game.expert_action()
        before, real_before = info["state"], game_state(env.real_game)
        _, reward, terminated, _, info = env.step(action)
        shadow = info["shadow"]
        lines.append(f"\nstep {step}: > {action}")
        lines.append(f"  world model : {_changes(before, info['state']) if info['parse_ok'] else 'unparseable: ' + str(info['parse_error'])}"
                     f"  (reward {reward:+g})")
        lines.append(f"  real game   : {_changes(real_before, shadow['real_state'])}  (reward {shadow['real_reward']:+g})")
        lines.append(f"  exact match : {'yes' if shadow['exact_match'] else 'no'}"
                     f"   running accuracy {100 * shadow['accuracy']:.0f}%")
        if terminated or shadow["real_terminated"]:
            lines.append("  game over" + (" (world model)" if terminated else "") + (" (real)" if shadow["real_terminated"] else ""))
            break
    return "\n".join(lines)
