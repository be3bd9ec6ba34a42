"""Steps per second of the text-game envs on this machine: the ground-truth games, and the world-model env
RLVRWorld-TextGame-v0 at batch 1 (env.step) and batched (one KV-cached generation for B envs).

    python benchmarks/textgame_env.py --steps 20 --batch-size 16 --out benchmarks/results/textgame_env.json
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import torch
from rlvr_sim.envs.textgame.env import TextGameEnv, game_state
from rlvr_sim.envs.textgame.games import GAMES, make_game
from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModel, TextGameWorldModelEnv
from rlvr_sim.policies.textgame_agents import RandomTextGameAgent

from rlvr_sim.data.bytesized32 import TextGameTransition
from rlvr_sim.reporting import emit_json


def ground_truth_steps_per_second(steps: int, seed: int) -> float:
    env = TextGameEnv()
    env.reset(seed=seed)
    agent = RandomTextGameAgent(seed)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(agent.act(env.game))
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def world_model_batch1_steps_per_second(world_model: TextGameWorldModel, steps: int, seed: int) -> float:
    env = TextGameWorldModelEnv(world_model=world_model, game="boil-water")
    _, info = env.reset(seed=seed)
    agent_actions = info["valid_actions"]
    start = time.perf_counter()
    for i in range(steps):
        _, _, terminated, truncated, info = env.step(agent_actions[i % len(agent_actions)])
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def world_model_batched_steps_per_second(world_model: TextGameWorldModel, batch_size: int, rounds: int,
                                         seed: int) -> float:
    """B games advanced together: one batched prediction per round (what a vectorised env would do)."""
    games = [make_game(sorted(GAMES)[i % len(GAMES)], seed=seed + i) for i in range(batch_size)]
    agent = RandomTextGameAgent(seed)
    transitions = [
        TextGameTransition(game_state(g), game_state(g), agent.act(g), g.max_uuid, g.task_description, g.game_id)
        for g in games
    ]
    start = time.perf_counter()
    for _ in range(rounds):
        predictions = world_model.predict(transitions)
        transitions = [
            TextGameTransition(p.state or t.current_state, t.gold_state, t.action, t.uuid_base, t.task_description,
                               t.game)
            for p, t in zip(predictions, transitions)
        ]
    return batch_size * rounds / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=None, help="default: the embedded RLVR task-specific checkpoint")
    parser.add_argument("--steps", type=int, default=20, help="world-model env steps at batch 1")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="batched rounds")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    world_model = TextGameWorldModel(args.checkpoint)
    batch1 = world_model_batch1_steps_per_second(world_model, args.steps, args.seed)
    batched = world_model_batched_steps_per_second(world_model, args.batch_size, args.rounds, args.seed)
    result = {
        "benchmark": "textgame_env",
        "checkpoint": world_model.checkpoint,
        "parameters": sum(p.numel() for p in world_model.model.parameters()),
        "torch_threads": args.threads,
        "ground_truth_env_steps_per_s": round(ground_truth_steps_per_second(2000, args.seed), 1),
        "world_model_env_steps_per_s_batch1": round(batch1, 3),
        f"world_model_steps_per_s_batch{args.batch_size}": round(batched, 3),
        "batched_speedup": round(batched / batch1, 2),
        "machine": {"python": platform.python_version(), "torch": torch.__version__, "cpu": platform.processor()},
    }
    emit_json(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
