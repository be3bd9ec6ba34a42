"""The README's video demo: roll `RLVRWorld-Video-v0` out from a held-out start frame with the recorded
actions and write a GIF of ground truth beside prediction; return printable text with the video table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import rlvr_sim.evaluations

# the committed table, found wherever the package is installed
RESULTS_JSON = Path(rlvr_sim.evaluations.__file__).parent / "results" / "video.json"


def _table(results_path: Path) -> str:
    if not results_path.is_file():
        return f"(no {results_path}: run `python evaluations/video.py` for the video table)"
    from rlvr_sim.evaluations.video import markdown

    return markdown(json.loads(results_path.read_text()))


def run_demo(out_gif: str, steps: int = 8, seed: int = 0, checkpoint: str | None = None,
             results_path: str | Path = RESULTS_JSON) -> str:
    """Roll out the embedded model for `steps` steps (at most the embedded sequence length) and write the GIF."""
    import gymnasium as gym
    import imageio.v2 as imageio

    import rlvr_sim  # noqa: F401  (registers RLVRWorld-Video-v0)
    from rlvr_sim.metrics.video import mse

    kwargs = {} if checkpoint is None else {"checkpoint": checkpoint}
    env = gym.make("RLVRWorld-Video-v0", **kwargs)
    world = env.unwrapped.world
    with np.load(world.checkpoint / "start_frames.npz") as data:
        sequence = int(np.random.default_rng(seed).integers(len(data["image"])))
        start, future, actions = data["image"][sequence], data["future"][sequence], data["action"][sequence]
    steps = min(steps, len(actions))
    frame, _ = env.reset(seed=seed, options={"frame": start})
    predicted = [frame]
    for t in range(steps):
        frame, *_ = env.step(actions[t])
        predicted.append(frame)
    env.close()
    truth = np.concatenate([start[None], future[:steps]])
    pred = np.stack(predicted)
    gap = np.full((len(truth), truth.shape[1], 2, 3), 255, np.uint8)
    panels = np.repeat(np.repeat(np.concatenate([truth, gap, pred], axis=2), 4, axis=1), 4, axis=2)
    Path(out_gif).parent.mkdir(parents=True, exist_ok=True)
    imageio.mimsave(out_gif, list(panels), duration=0.5, loop=0)
    frame_mse = mse(pred[1:], truth[1:])
    copy_mse = mse(np.repeat(truth[:1], steps, axis=0), truth[1:])
    lines = [
        f"RLVRWorld-Video-v0 ({world.checkpoint.name}): {steps} steps from held-out sequence {sequence}, "
        f"GIF (left truth, right prediction) -> {out_gif}",
        f"mean frame MSE {frame_mse.mean():.5f} (copying the start frame: {copy_mse.mean():.5f})",
        "",
        _table(Path(results_path)),
    ]
    return "\n".join(lines)
