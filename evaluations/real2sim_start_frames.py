"""What a learned simulator makes of its start frame: gym-pusht's direct 64x64 picture vs the frame made as the
training frames were (96x96 resized by `resize_frames`, what `make_ground_truth` shows since 2026-12-07).

One Real2Sim start (`NearGoalTask`, episode 1 of seed 0), the frame-only `expert` acting on the learned
simulator's own frames for 24 steps; every 4th frame, one row per start frame (top: direct, bottom: data-made).
docs/real2sim.md, "Start frames", shows the picture.

    python evaluations/real2sim_start_frames.py --checkpoint pusht_visual_mixed --out docs/images/real2sim_start_frames.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def strips(checkpoint: str, episode: int = 1, steps: int = 24, every: int = 4, scale: int = 3) -> np.ndarray:
    """(2 rows of frames) uint8 image: the learned simulator from each start frame under the same policy."""
    import gym_pusht  # noqa: F401  (registers gym_pusht/PushT-v0)
    import gymnasium as gym
    import torch
    from rlvr_sim.envs.worlds import make_ground_truth, make_world_model
    from rlvr_sim.policies.pusht import NearGoalTask, PixelPushTPolicy

    from rlvr_sim.metrics.pusht_pixels import estimate_state

    torch.set_num_threads(1)
    state = NearGoalTask().sample_start(np.random.default_rng([0, episode]))
    world = make_world_model(checkpoint=checkpoint)
    size = int(world.observation_space.shape[0])
    direct = gym.make("gym_pusht/PushT-v0", obs_type="pixels", observation_width=size, observation_height=size)
    rows = []
    for source in (direct, make_ground_truth(size, size)):
        start, _ = source.reset(options={"reset_to_state": state})
        frame, _ = world.reset(seed=0, options={"frame": start})
        policy, frames = PixelPushTPolicy("expert", seed=episode), [frame]
        for _ in range(steps):
            frame, *_ = world.step(policy.act(frame, estimate_state(frame)))
            frames.append(frame)
        rows.append(np.concatenate([np.pad(f, ((1, 1), (1, 1), (0, 0)), constant_values=255) for f in frames[::every]], 1))
        source.close()
    world.close()
    return np.kron(np.concatenate(rows, 0), np.ones((scale, scale, 1), np.uint8))


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", default="pusht_visual_mixed")
    parser.add_argument("--episode", type=int, default=1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--out", default="runs/eval/real2sim_start_frames.png")
    args = parser.parse_args(argv)
    import imageio.v2 as imageio

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(out, strips(args.checkpoint, args.episode, args.steps))
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    main()
