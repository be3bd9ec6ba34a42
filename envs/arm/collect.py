"""Collect ArmReach episodes with pixel observations: `python training/collect.py --task arm --out DIR`.

Plays a seeded mixture of target-commanding behaviours in `ArmReachEnv` (see envs/arm/env.py) and writes
one compressed `.npz` per episode in the Open-X / RT-1 style of the PushT collector: `image` (T, S, S, 3)
uint8 and `action` (T, 2) float32 (the tip target in 512-unit scene coordinates issued at frame t; the
last one is issued but its outcome is not recorded), plus `tip_px` / `puck_px` (T, 2) (the MuJoCo sites
projected into the frame, continuous pixel coordinates), `state` (T, 6: tip x, y, puck x, y, shoulder,
elbow; scene units and radians) and metadata (`env_id`, `policy`, `seed`, `action_repeat`, `fps`,
`world_size`). An episode is a chain of segments, each drawn from `--mix`:

- `far`: a target anywhere in the reachable disc (area-uniform; 1 in 10 anywhere in the square, so
  unreachable commands appear too), held for 1-6 steps;
- `sweep`: a smooth straight sweep of the target to a new point over 4-12 steps;
- `jitter`: 3-8 steps of small moves (about 1.5 px at 64x64) around the tip;
- `push`: a target beyond the puck on the line from the tip through it, held 2-5 steps (the puck moves).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from rlvr_sim.envs.collecting import collector_parser
from tqdm import tqdm

ENV_ID = "RLVRSim/ArmReach-v0"
SEGMENTS = ("far", "sweep", "jitter", "push")
DEFAULT_MIX = "far:3,sweep:2,jitter:1,push:2"


def parse_mix(spec: str) -> tuple[list[str], np.ndarray]:
    """'segment:weight,...' -> (segment names, probabilities); names must be among SEGMENTS."""
    names, weights = [], []
    for part in spec.split(","):
        name, _, weight = part.strip().partition(":")
        if name not in SEGMENTS:
            raise ValueError(f"unknown segment {name!r} in --mix (known: {', '.join(SEGMENTS)})")
        if not weight.isdigit() or int(weight) <= 0:
            raise ValueError(f"--mix weight for {name!r} must be a positive integer, got {weight!r}")
        names.append(name)
        weights.append(int(weight))
    probabilities = np.array(weights, dtype=np.float64)
    return names, probabilities / probabilities.sum()


def _far_target(rng: np.random.Generator) -> np.ndarray:
    from rlvr_sim.envs.arm.env import BASE, REACH_MAX, REACH_MIN

    if rng.random() < 0.1:
        return rng.uniform(0.0, 512.0, size=2)
    radius = np.sqrt(rng.uniform(REACH_MIN**2, REACH_MAX**2))
    angle = rng.uniform(-np.pi, np.pi)
    return BASE + radius * np.array([np.cos(angle), np.sin(angle)])


def segment_targets(name: str, rng: np.random.Generator, info: dict, last_target: np.ndarray) -> list[np.ndarray]:
    """The targets of one segment, planned from the state at its start (scene units, within [0, 512])."""
    tip, puck = info["tip"], info["puck"]
    if name == "far":
        targets = [_far_target(rng)] * int(rng.integers(1, 7))
    elif name == "sweep":
        end, steps = _far_target(rng), int(rng.integers(4, 13))
        targets = [last_target + (end - last_target) * (k + 1) / steps for k in range(steps)]
    elif name == "jitter":
        targets = [tip + rng.normal(0.0, 12.0, size=2) for _ in range(int(rng.integers(3, 9)))]
    elif name == "push":
        direction = puck - tip
        direction = direction / max(float(np.hypot(*direction)), 1e-6)
        target = puck + direction * rng.uniform(30.0, 90.0)
        targets = [target] * int(rng.integers(2, 6))
    else:
        raise ValueError(f"unknown segment {name!r}")
    return [np.clip(t, 0.0, 512.0) for t in targets]


def rollout_episode(env, seed: int, max_steps: int, mix: str = DEFAULT_MIX) -> dict[str, np.ndarray]:
    """Roll one episode of `max_steps` steps (max_steps + 1 frames) in an `ArmReachEnv`."""
    names, probabilities = parse_mix(mix)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    images, actions, tips, pucks, states = [], [], [], [], []
    plan: list[np.ndarray] = []
    last_target = info["tip"].copy()
    for step in range(max_steps + 1):
        if not plan:
            plan = segment_targets(names[int(rng.choice(len(names), p=probabilities))], rng, info, last_target)
        action = plan.pop(0).astype(np.float32)
        images.append(obs)
        actions.append(action)
        tips.append(info["tip_px"])
        pucks.append(info["puck_px"])
        states.append(np.concatenate([info["tip"], info["puck"], info["joints"]]))
        if step == max_steps:
            break
        obs, _, _, _, info = env.step(action)
        last_target = action.astype(np.float64)
    return {
        "image": np.stack(images).astype(np.uint8),
        "action": np.stack(actions).astype(np.float32),
        "tip_px": np.stack(tips).astype(np.float32),
        "puck_px": np.stack(pucks).astype(np.float32),
        "state": np.stack(states).astype(np.float32),
    }


def collect(out: str | Path, episodes: int, seed: int = 0, max_steps: int = 80, image_size: int = 64,
            mix: str = DEFAULT_MIX) -> list[Path]:
    """Write `episodes` episode files `arm_00000.npz`, ... to `out`; episode seeds drawn from `seed`."""
    from rlvr_sim.envs.arm.env import CONTROL_HZ, ArmReachEnv

    if episodes < 1 or max_steps < 1:
        raise ValueError(f"need episodes >= 1 and max_steps >= 1, got {episodes}, {max_steps}")
    parse_mix(mix)  # fail before any work
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    env = ArmReachEnv(observation_size=image_size, render_mode=None)
    paths = []
    try:
        for index in tqdm(range(episodes), desc="collect arm", unit="episode", leave=False):
            episode_seed = int(rng.integers(0, 2**31 - 1))
            arrays = rollout_episode(env, episode_seed, max_steps, mix)
            path = out / f"arm_{index:05d}.npz"
            np.savez_compressed(
                path, **arrays, env_id=np.array(ENV_ID), policy=np.array(mix), seed=np.array(episode_seed),
                action_repeat=np.array(1), fps=np.array(CONTROL_HZ), world_size=np.array(512.0),
            )
            paths.append(path)
    finally:
        env.close()
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = collector_parser(__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--max-steps", type=int, default=80, help="env steps per episode (10 Hz); frames = steps + 1")
    parser.add_argument("--image-size", type=int, default=64, help="rendered frame size (square)")
    parser.add_argument("--mix", default=DEFAULT_MIX, help=f"segment mixture 'name:weight,...' of {', '.join(SEGMENTS)}")
    args = parser.parse_args(argv)
    start = time.time()
    paths = collect(args.out, args.episodes, args.seed, args.max_steps, args.image_size, args.mix)
    seconds = time.time() - start
    frames = len(paths) * (args.max_steps + 1)
    print(json.dumps({"episodes": len(paths), "out": str(args.out), "seconds": round(seconds, 1),
                      "frames_per_second": round(frames / max(seconds, 1e-9), 1)}))


if __name__ == "__main__":
    main()
