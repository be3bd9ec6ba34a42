"""What a keypoint world model draws its frames over. Without `draw_gap` (checkpoints before it) every frame is
drawn over the rolling anchor, so once the context rolls (every `horizon // 2` steps) the frames are drawn over
predicted frames and drawing errors compound; with `draw_gap` G every frame is drawn over one canvas, the start
frame, re-based on the latest predicted frame every G steps."""

from __future__ import annotations

import numpy as np


def _drive(draw_gap: int, steps: int = 9):
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel
    from rlvr_sim.models.visual_tokenizer import CONDITIONAL

    world = VideoWorldModel("pusht_visual_mixed")
    world.tokenizer.config.draw_gap = draw_gap
    start = world.start_frames[:2]
    world.start(start, [0, 1])
    actions = np.array([[100.0, 100.0], [400.0, 300.0]])
    out, canvases = [], []
    for _ in range(steps):
        frames = world.step(actions, temperature=0.0, median=True)
        canvas = world.canvas if draw_gap else world.anchor
        assert np.array_equal(frames, world.tokenizer.decode(world.last_codes, canvas, CONDITIONAL))
        out.append(frames)
        canvases.append(canvas.copy())
    return start, out, canvases


def test_frames_are_drawn_over_a_canvas_rebased_every_draw_gap_steps():
    start, frames, canvases = _drive(draw_gap=3)
    for step, canvas in enumerate(canvases, start=1):  # steps 1-3 over the start frame, 4-6 over frame 3, ...
        expected = start if step <= 3 else frames[3 * ((step - 1) // 3) - 1]
        assert np.array_equal(canvas, expected), f"step {step}"


def test_without_draw_gap_frames_are_drawn_over_the_rolling_anchor():
    start, frames, canvases = _drive(draw_gap=0)
    assert all(np.array_equal(c, start) for c in canvases[:8])  # the anchor until the context rolls (horizon 8)
    assert np.array_equal(canvases[8], frames[3])  # then the frame horizon // 2 steps back: a predicted one
