"""Steps per second of RLVRWorld-Web-v0, new env path vs the old one, side by side in one run.

As benchmarks/textgame_env.py (whose driver this reuses): the old path is the env module as committed at
`--baseline-rev`, both sides run the same checkpoint greedily from the same recorded start pages with
the same actions (clicks on the page's first links), the run checks that they predict identical text,
and the ratios are medians of per-round ratios of alternating rounds.

    python benchmarks/web_env.py --out benchmarks/results/web_env.json
"""

from __future__ import annotations

import re
import sys
from typing import Any

import torch
from rlvr_sim.envs.web.world_model_env import DEFAULT_CHECKPOINT, LMWebWorldModel, WebWorldModelEnv
from textgame_env import (
    baseline_module,
    env_benchmark,
    env_benchmark_parser,
    env_cases,
)

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
    old = baseline_module("envs/web/world_model_env.py", args.baseline_rev)
    old_model = old.LMWebWorldModel.from_checkpoint(args.checkpoint, temperature=0.0)
    new_model = LMWebWorldModel.from_checkpoint(args.checkpoint, temperature=0.0)

    def old_env() -> Any:
        return old.WebWorldModelEnv(world_model=old_model)

    def new_env() -> Any:
        return WebWorldModelEnv(world_model=new_model)

    actions = start_actions(new_env(), args.seed, max(args.num_envs))
    cases = env_cases("RLVRWorld-Web-v0", old_env, new_env, new_model, actions, args, "raw_prediction")
    result = env_benchmark("web_env", cases, args, argv, args.checkpoint, new_model.model,
                           "greedy (temperature 0) on both sides")
    emit_json(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
