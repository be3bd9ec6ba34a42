"""Collect PushT episodes with pixel observations: `python training/collect.py --task pusht --out DIR`.

Rolls out scripted policies of graded skill plus noisy/random ones (`rlvr_sim.policies.pusht`, named by
`--policy`, module:Class: the collector imports no policy) in
`gym_pusht/PushT-v0` and writes one compressed `.npz` per episode in the Open-X / RT-1 style that
RLVR-World's converter uses: `image` (T, H, W, 3) uint8 and `action` (T, A) float32, where action[t] is
the command issued at frame t (the last one is issued but its outcome is not recorded), plus `state`
(T, 5: agent x, y, block x, y, angle) and metadata (`env_id`, `policy`, `seed`, `action_repeat`, `fps`).
The policy is queried every `action_repeat` env steps and its command held in between, so a model that
skips `action_repeat` frames sees exactly one action per transition.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from rlvr_sim.envs.collecting import collector_parser, load_class
from tqdm import tqdm

ENV_ID = "gym_pusht/PushT-v0"
DEFAULT_MIX = "expert:2,good:3,mediocre:3,poor:2,jitter:1,random:1"
DEFAULT_POLICY = "rlvr_sim.policies.pusht:PushTPolicy"  # Policy(skill, seed=...) with act(info) -> target


def parse_mix(spec: str, policy: str = DEFAULT_POLICY) -> list[tuple[str, int]]:
    """Parse 'skill:weight,...' into [(skill, weight)], validating weights and skill names (each must build
    a `policy`)."""
    policy_class = load_class(policy, "policy")
    mix = []
    for part in spec.split(","):
        name, _, weight = part.strip().partition(":")
        try:
            policy_class(name, seed=0)
        except ValueError as err:
            raise ValueError(f"unknown policy {name!r} in --mix: {err}") from err
        if not weight.isdigit() or int(weight) <= 0:
            raise ValueError(f"--mix weight for {name!r} must be a positive integer, got {weight!r}")
        mix.append((name, int(weight)))
    return mix


def rollout_episode(
    policy_name: str, seed: int, max_steps: int, action_repeat: int, image_size: int,
    policy_class: type[Any] | str = DEFAULT_POLICY,
) -> dict[str, np.ndarray]:
    """Roll one episode of `policy_class(policy_name, seed=seed)` and return its arrays (image, action, state)."""
    import gym_pusht  # noqa: F401  (registers gym_pusht/PushT-v0)
    import gymnasium as gym

    env = gym.make(
        ENV_ID, obs_type="pixels", observation_width=image_size, observation_height=image_size,
        max_episode_steps=max_steps,
    )
    if isinstance(policy_class, str):
        policy_class = load_class(policy_class, "policy")
    policy = policy_class(policy_name, seed=seed)
    obs, info = env.reset(seed=seed)
    images, actions, states = [], [], []
    action = None
    for step in range(max_steps + 1):
        if step % action_repeat == 0:
            action = policy.act(info)
        images.append(obs)
        actions.append(action)
        states.append(np.concatenate([info["pos_agent"], info["block_pose"]]))
        if step == max_steps:
            break
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            images.append(obs)
            actions.append(policy.act(info) if (step + 1) % action_repeat == 0 else action)
            states.append(np.concatenate([info["pos_agent"], info["block_pose"]]))
            break
    env.close()
    return {
        "image": np.stack(images).astype(np.uint8),
        "action": np.stack(actions).astype(np.float32),
        "state": np.stack(states).astype(np.float32),
    }


def collect(
    out: str | Path, episodes: int, seed: int = 0, max_steps: int = 200, action_repeat: int = 4,
    image_size: int = 96, mix: str = DEFAULT_MIX, policy: str = DEFAULT_POLICY,
) -> list[Path]:
    """Write `episodes` episode files to `out` (skills drawn from `mix` with a seeded generator, each played
    by the `policy` class)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    mix_pairs = parse_mix(mix, policy)
    policy_class = load_class(policy, "policy")
    names = [name for name, _ in mix_pairs]
    weights = np.array([w for _, w in mix_pairs], dtype=np.float64)
    rng = np.random.default_rng(seed)
    paths = []
    for index in tqdm(range(episodes), desc="collect pusht", unit="episode", leave=False):
        policy_name = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        episode_seed = int(rng.integers(0, 2**31 - 1))
        arrays = rollout_episode(policy_name, episode_seed, max_steps, action_repeat, image_size, policy_class)
        path = out / f"pusht_{index:05d}.npz"
        np.savez_compressed(
            path, **arrays, env_id=np.array(ENV_ID), policy=np.array(policy_name),
            seed=np.array(episode_seed), action_repeat=np.array(action_repeat), fps=np.array(10),
        )
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = collector_parser(__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--max-steps", type=int, default=200, help="env steps per episode (10 Hz)")
    parser.add_argument("--action-repeat", type=int, default=4, help="env steps each policy command is held")
    parser.add_argument("--image-size", type=int, default=96, help="rendered frame size (square)")
    parser.add_argument("--mix", default=DEFAULT_MIX, help="policy mixture 'skill:weight,...'")
    parser.add_argument("--policy", default=DEFAULT_POLICY, help="the policy class playing each skill, package.module:Class")
    parser.add_argument("--task", default="pusht", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    start = time.time()
    paths = collect(args.out, args.episodes, args.seed, args.max_steps, args.action_repeat, args.image_size,
                    args.mix, args.policy)
    summary = {"episodes": len(paths), "out": str(args.out), "seconds": round(time.time() - start, 1)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
