"""The README's video demo: drive `RLVRWorld-Video-v0` and look.

Two things a user checks first: (1) send the agent toward each of the four edges (target held 3 steps,
where gym-pusht puts it on the target) and see where the learned simulator puts it; (2) replay a held-out
sequence's recorded actions and compare with the recorded frames. Writes a GIF (four-edge panels, then
truth | prediction) and returns printable text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def run_demo(out_gif: str, steps: int = 8, seed: int = 0, checkpoint: str | None = None) -> str:
    """Four-edge test and a held-out replay through `gym.make("RLVRWorld-Video-v0")`; writes `out_gif`."""
    import gymnasium as gym
    import imageio.v2 as imageio

    import rlvr_sim  # noqa: F401  (registers RLVRWorld-Video-v0)
    from rlvr_sim.metrics.pusht_pixels import EDGE_TARGETS, PIXELS_PER_WORLD, judge_states
    from rlvr_sim.metrics.video import mse

    kwargs = {} if checkpoint is None else {"checkpoint": checkpoint}
    env = gym.make("RLVRWorld-Video-v0", **kwargs)
    world = env.unwrapped.world
    with np.load(world.checkpoint / "start_frames.npz") as data:
        sequence = int(np.random.default_rng(seed).integers(len(data["image"])))
        start, future, actions = data["image"][sequence], data["future"][sequence], data["action"][sequence]
    lines = [f"RLVRWorld-Video-v0 ({world.checkpoint.name}), start frame: held-out sequence {sequence}",
             "four-edge test (target held 3 steps; gym-pusht puts the agent on the target):"]
    edge_panels = []
    for target in EDGE_TARGETS:
        frames = [env.reset(seed=seed, options={"frame": start})[0]]
        for _ in range(3):
            frames.append(env.step(np.array(target, np.float32))[0])
        edge_panels.append(np.stack(frames))
        agent = judge_states(frames[-1][None])[0, :2]
        where = "not visible" if not np.isfinite(agent).all() else (
            f"({agent[0] * PIXELS_PER_WORLD:.1f}, {agent[1] * PIXELS_PER_WORLD:.1f}) px, "
            f"{np.linalg.norm(agent - target) * PIXELS_PER_WORLD:.1f} px from the target")
        lines.append(f"  sent to ({target[0] * PIXELS_PER_WORLD:.1f}, {target[1] * PIXELS_PER_WORLD:.1f}) px: agent at {where}")
    steps = min(steps, len(actions))
    frame, _ = env.reset(seed=seed, options={"frame": start})
    predicted = [frame]
    for t in range(steps):
        frame, *_ = env.step(actions[t])
        predicted.append(frame)
    env.close()
    truth = np.concatenate([start[None], future[:steps]])
    pred = np.stack(predicted)
    gap = np.full((max(len(truth), 4), truth.shape[1], 2, 3), 255, np.uint8)  # a white column between panels
    replay = np.concatenate([truth, gap[: len(truth)], pred], axis=2)
    edges = np.concatenate([x for panel in edge_panels for x in (panel, gap[:4])][:-1], axis=2)
    width = max(replay.shape[2], edges.shape[2])
    clip = np.concatenate([np.pad(c, ((0, 0), (0, 0), (0, width - c.shape[2]), (0, 0)), constant_values=255)
                           for c in (edges, replay)])
    Path(out_gif).parent.mkdir(parents=True, exist_ok=True)
    imageio.mimsave(out_gif, list(np.repeat(np.repeat(clip, 4, axis=1), 4, axis=2)), duration=0.5, loop=0)
    frame_mse = mse(pred[1:], truth[1:])
    copy_mse = mse(np.repeat(truth[:1], steps, axis=0), truth[1:])
    truth_agent = judge_states(truth[1:])[:, :2]
    model_error = np.nan_to_num(np.linalg.norm(truth_agent - judge_states(pred[1:])[:, :2], axis=1), nan=256.0)
    copy_error = np.linalg.norm(truth_agent - judge_states(start[None])[0, :2], axis=1)
    lines += [f"replay of the recorded actions, {steps} steps: agent error {model_error.mean() * PIXELS_PER_WORLD:.2f} px "
              f"(copying the start frame: {copy_error.mean() * PIXELS_PER_WORLD:.2f} px), "
              f"frame MSE {frame_mse.mean():.5f} (copying: {copy_mse.mean():.5f})",
              f"GIF (four-edge panels, then truth | prediction) -> {out_gif}"]
    return "\n".join(lines)
