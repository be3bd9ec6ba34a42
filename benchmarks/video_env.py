"""Frames per second of RLVRWorld-Video-v0 on CPU (batch 1 and 16; KV-cached decoding through the sampler's
`DecodeSession`) beside the ground-truth gym-pusht step rate; JSON out.

    python benchmarks/video_env.py --out benchmarks/results/video_env.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch


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
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/video_env.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    results: dict = {"threads": args.threads, "machine": platform.processor() or platform.machine(),
                     "cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg()[0],
                     "steps": args.steps, "world_model_fps": {}}
    for num_envs in (1, 16):
        key = f"batch{num_envs}"
        results["world_model_fps"][key] = round(world_model_fps(num_envs, args.steps, args.checkpoint), 2)
        print(key, results["world_model_fps"][key], flush=True)
    results["gym_pusht_fps_64px"] = round(pusht_fps(300, 64), 1)
    results["load_average_at_end"] = os.getloadavg()[0]  # shared machine: other jobs slow every figure
    fps = results["world_model_fps"]
    results["batch16_vs_batch1"] = round(fps["batch16"] / fps["batch1"], 2)
    results["gym_pusht_vs_world_model_batch16"] = round(results["gym_pusht_fps_64px"] / fps["batch16"], 2)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
