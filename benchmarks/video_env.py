"""Frames per second of RLVRWorld-Video-v0 on CPU (batch 1 and 16; KV-cached decoding through the sampler's
`DecodeSession`) beside the ground-truth gym-pusht step rate, each with the sampler's lean decode step and with its decode
steps through transformers' own forward (`RLVR_SIM_LEAN_DECODE=0`); JSON out.

    python benchmarks/video_env.py --out benchmarks/results/video_env.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

from rlvr_sim.models.lean_decode import lean_decode


def world_model_fps(num_envs: int, steps: int, checkpoint: str | None) -> float:
    """Predicted frames per second (all envs together) over `steps` vector steps after one warm-up step."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModelVectorEnv

    env = VideoWorldModelVectorEnv(num_envs, checkpoint=checkpoint, max_episode_steps=10_000)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.step(env.action_space.sample())
    start = time.perf_counter()
    for _ in range(steps):
        env.step(rng.uniform(env.single_action_space.low, env.single_action_space.high,
                             (num_envs, env.single_action_space.shape[0])).astype(np.float32))
    return num_envs * steps / (time.perf_counter() - start)


def pusht_fps(steps: int, size: int) -> float:
    """gym-pusht steps per second with pixel observations at the world model's frame size."""
    import gym_pusht  # noqa: F401
    import gymnasium as gym

    env = gym.make("gym_pusht/PushT-v0", obs_type="pixels", observation_width=size, observation_height=size)
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=None, help="default: the embedded RLVR PushT model")
    parser.add_argument("--steps", type=int, default=10, help="vector steps per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating measurements of each setting")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/video_env.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    results: dict = {"command": "python " + shlex.join(["benchmarks/video_env.py", *(sys.argv[1:] if argv is None else argv)]),
                     "threads": args.threads, "machine": platform.processor() or platform.machine(),
                     "cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg()[0],
                     "steps": args.steps, "rounds": args.rounds}
    # (batch, lean decode step on?) measured in alternating order, round after round; medians reported
    settings = [(n, lean) for n in (1, 16) for lean in (True, False)]
    runs: dict[tuple[int, bool], list[float]] = {s: [] for s in settings}
    for r in range(args.rounds):
        for num_envs, lean in (settings if r % 2 == 0 else settings[::-1]):
            with lean_decode(lean):
                runs[(num_envs, lean)].append(world_model_fps(num_envs, args.steps, args.checkpoint))
            print(num_envs, lean, round(runs[(num_envs, lean)][-1], 1), flush=True)
    fps = {f"batch{n}": round(statistics.median(runs[(n, True)]), 2) for n in (1, 16)}
    slow = {f"batch{n}": round(statistics.median(runs[(n, False)]), 2) for n in (1, 16)}
    results["world_model_fps"] = fps
    results["world_model_fps_transformers_forward"] = slow
    results["lean_decode_speedup"] = {k: round(fps[k] / slow[k], 2) for k in fps}
    results["runs"] = {f"batch{n}_{'lean' if lean else 'transformers_forward'}": [round(v, 2) for v in values]
                       for (n, lean), values in runs.items()}
    results["gym_pusht_fps_64px"] = round(pusht_fps(300, 64), 1)
    results["load_average_at_end"] = os.getloadavg()[0]  # shared machine: other jobs slow every figure
    results["batch16_vs_batch1"] = round(fps["batch16"] / fps["batch1"], 2)
    results["gym_pusht_vs_world_model_batch16"] = round(results["gym_pusht_fps_64px"] / fps["batch16"], 2)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
