"""The README's video demo: drive `RLVRWorld-Video-v0` and look.

Two things a user checks first: (1) send the agent toward each of the four edges (target held 3 steps,
where gym-pusht puts it on the target) and see where the learned simulator puts it; (2) replay a held-out
sequence's recorded actions and compare with the recorded frames, for the agent *and* the pushed T (the
agent is easy to follow; the T is where a world model shows what it learned). Writes a GIF with labelled
panels (four-edge test, then "true" | "predicted") and returns printable text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

FRAME_MS = 500  # each GIF frame shows for half a second: one env step per beat, slow enough to follow
HOLD_MS = 1500  # the last frame of each part stays longer, so the end state can be read before the loop
SCALE = 3  # 64x64 frames drawn at 192x192
CAPTION_PX, LABEL_PX, GAP_PX = 22, 18, 6


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _canvas(panels: list[np.ndarray], labels: list[str], caption: str, width: int,
            marks: list[tuple[float, float] | None] | None = None) -> np.ndarray:
    """One GIF frame: a caption line, then the panels side by side, each with its label above it.

    `marks` are per-panel target points in 64x64 pixels, drawn as a red cross (the four-edge targets).
    The caption carries the step number, so consecutive frames always differ and no GIF writer merges them.
    """
    from PIL import Image, ImageDraw

    side = panels[0].shape[0] * SCALE
    image = Image.new("RGB", (width, CAPTION_PX + LABEL_PX + side), "white")
    draw = ImageDraw.Draw(image)
    draw.text((4, 3), caption, fill="black", font=_font(14))
    for i, (panel, label) in enumerate(zip(panels, labels)):
        x = i * (side + GAP_PX)
        draw.text((x + 2, CAPTION_PX + 1), label, fill=(40, 40, 160), font=_font(12))
        image.paste(Image.fromarray(np.repeat(np.repeat(panel, SCALE, axis=0), SCALE, axis=1)),
                    (x, CAPTION_PX + LABEL_PX))
        mark = (marks or [None] * len(panels))[i]
        if mark is not None:
            cx, cy = x + mark[0] * SCALE, CAPTION_PX + LABEL_PX + mark[1] * SCALE
            draw.line([(cx - 6, cy - 6), (cx + 6, cy + 6)], fill="red", width=2)
            draw.line([(cx - 6, cy + 6), (cx + 6, cy - 6)], fill="red", width=2)
    return np.asarray(image)


def write_gif(path: str | Path, frames: list[np.ndarray], durations_ms: list[int]) -> None:
    """Write `frames` as a looping GIF with one duration per frame, in milliseconds (imageio >= 2.28 with
    Pillow reads `duration` in ms; GIF stores centiseconds)."""
    import imageio.v3 as iio

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(path, np.stack(frames), extension=".gif", duration=durations_ms, loop=0)


def run_demo(out_gif: str, steps: int = 8, seed: int = 0, checkpoint: str | None = None) -> str:
    """Four-edge test and a held-out replay through `gym.make("RLVRWorld-Video-v0")`; writes `out_gif`."""
    import gymnasium as gym

    import rlvr_sim  # noqa: F401  (registers RLVRWorld-Video-v0)
    from rlvr_sim.metrics.pusht_pixels import EDGE_TARGETS, PIXELS_PER_WORLD, judge_states, object_errors
    from rlvr_sim.metrics.video import mse

    kwargs = {} if checkpoint is None else {"checkpoint": checkpoint}
    env = gym.make("RLVRWorld-Video-v0", **kwargs)
    world = env.unwrapped.world
    with np.load(world.checkpoint / "start_frames.npz") as data:
        sequence = int(np.random.default_rng(seed).integers(len(data["image"])))
        start, future, actions = data["image"][sequence], data["future"][sequence], data["action"][sequence]
    lines = [f"RLVRWorld-Video-v0 ({world.checkpoint.name}), start frame: held-out sequence {sequence}",
             "four-edge test (target held 3 steps; gym-pusht puts the agent on the target):"]
    names = ("left", "right", "top", "bottom")
    edge_runs = []
    for name, target in zip(names, EDGE_TARGETS):
        frames = [env.reset(seed=seed, options={"frame": start})[0]]
        for _ in range(3):
            frames.append(env.step(np.array(target, np.float32))[0])
        edge_runs.append(frames)
        agent = judge_states(frames[-1][None])[0, :2]
        where = "not visible" if not np.isfinite(agent).all() else (
            f"({agent[0] * PIXELS_PER_WORLD:.1f}, {agent[1] * PIXELS_PER_WORLD:.1f}) px, "
            f"{np.linalg.norm(agent - target) * PIXELS_PER_WORLD:.1f} px from the target")
        lines.append(f"  sent {name} to ({target[0] * PIXELS_PER_WORLD:.1f}, {target[1] * PIXELS_PER_WORLD:.1f}) px: "
                     f"agent at {where}")
    steps = min(steps, len(actions))
    frame, _ = env.reset(seed=seed, options={"frame": start})
    predicted = [frame]
    for t in range(steps):
        frame, *_ = env.step(actions[t])
        predicted.append(frame)
    env.close()
    truth, pred = np.concatenate([start[None], future[:steps]]), np.stack(predicted)

    side = start.shape[0] * SCALE
    width = 4 * side + 3 * GAP_PX
    marks = [tuple(t * PIXELS_PER_WORLD) for t in EDGE_TARGETS]
    gif = [_canvas([run[k] for run in edge_runs], [f"predicted: sent {n}" for n in names],
                   f"four-edge test: target (red x) held, step {k}/3", width, marks) for k in range(4)]
    gif += [_canvas([truth[t], pred[t]], ["true (recorded)", "predicted (world model)"],
                    f"replay of recorded actions, step {t}/{steps}", width) for t in range(steps + 1)]
    durations = [HOLD_MS if k == 3 else FRAME_MS for k in range(4)]
    durations += [HOLD_MS if t == steps else FRAME_MS for t in range(steps + 1)]
    write_gif(out_gif, gif, durations)

    model = object_errors(judge_states(pred[1:]), judge_states(truth[1:]))
    copy = object_errors(judge_states(np.repeat(truth[:1], steps, axis=0)), judge_states(truth[1:]))
    frame_mse, copy_mse = mse(pred[1:], truth[1:]), mse(np.repeat(truth[:1], steps, axis=0), truth[1:])
    lines += [f"replay of the recorded actions, {steps} steps (mean over steps; copying the start frame in brackets):",
              f"  agent error {model['agent_px'].mean():.2f} px ({copy['agent_px'].mean():.2f})",
              f"  T error     {model['block_px'].mean():.2f} px, {model['angle_deg'].mean():.1f} deg "
              f"({copy['block_px'].mean():.2f} px, {copy['angle_deg'].mean():.1f} deg); at the last step "
              f"{model['block_px'][-1]:.2f} px ({copy['block_px'][-1]:.2f})",
              f"  frame MSE   {frame_mse.mean():.5f} ({copy_mse.mean():.5f})",
              f"GIF ({len(gif)} frames, {FRAME_MS} ms each, last of each part {HOLD_MS} ms; four-edge test, then "
              f"true | predicted) -> {out_gif}"]
    return "\n".join(lines)
