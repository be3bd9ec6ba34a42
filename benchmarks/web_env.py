"""Steps per second of RLVRWorld-Web-v0 with today's code: side by side in one run, at equal work.

As benchmarks/textgame_env.py (whose driver this reuses), on the web world model, greedy, from the same
recorded start pages with the same actions (clicks on the page's first links); each run checks that both
sides predict identical text, and the ratios are medians of per-round ratios of alternating rounds:

- batch N (`cases`): N single envs stepped in a loop vs `gym.make_vec(..., num_envs=N)` (one batched
  generation per step);
- batch 1 (`lean_decode_batch1`): one env, decode steps through transformers' forward vs the lean step.

    python benchmarks/web_env.py --steps 3 --num-envs 8 --vec-steps 2 --rounds 2 --out benchmarks/results/web_env.json
"""

from __future__ import annotations

import re
import sys
from typing import Any

import torch
from rlvr_sim.envs.web.world_model_env import DEFAULT_CHECKPOINT, LMWebWorldModel, WebWorldModelEnv
from textgame_env import env_benchmark, env_benchmark_parser

import rlvr_sim  # noqa: F401  (registers the env ids)
from rlvr_sim.reporting import emit_json


def start_actions(env: WebWorldModelEnv, seed: int, count: int, per_world: int = 3) -> list[list[str]]:
    """Each world's action cycle: clicks on the first links of its start page (world i reset with seed + i)."""
    actions = []
    for i in range(count):
        tree, _ = env.reset(seed=seed + i)
        links = re.findall(r"\[(\d+)\] link ", tree)[:per_world] or ["1"]
        actions.append([f"click [{link}]" for link in links])
    return actions


def main(argv: list[str] | None = None) -> int:
    parser = env_benchmark_parser(__doc__, str(DEFAULT_CHECKPOINT), None, steps=3, num_envs=[8], vec_steps=2, rounds=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    world_model = LMWebWorldModel.from_checkpoint(args.checkpoint, temperature=0.0)

    def single_env() -> Any:
        return WebWorldModelEnv(world_model=world_model)

    actions = start_actions(single_env(), args.seed, max(args.num_envs))
    result = env_benchmark("web_env", "RLVRWorld-Web-v0", world_model, single_env, actions, args, argv,
                           "raw_prediction", "greedy (temperature 0)")
    emit_json(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
