"""The README demo: drives the embedded RLVRWorld-Video-v0 (four-edge test, held-out replay) into a GIF."""

import importlib.util

import pytest


@pytest.mark.skipif(importlib.util.find_spec("imageio") is None, reason="imageio (the [video] extra) is not installed")
def test_run_demo_writes_gif_and_reports(tmp_path):
    import imageio.v2 as imageio
    from rlvr_sim.envs.video.demo import run_demo

    out = tmp_path / "demo.gif"
    text = run_demo(str(out), steps=3, seed=0)
    frames = imageio.mimread(out)
    # 4 edge-test frames, then 4 replay frames (a GIF writer may merge identical consecutive frames)
    assert 5 <= len(frames) <= 8 and frames[0].shape[1] > 3 * frames[0].shape[0]  # 4 edge panels side by side
    assert "RLVRWorld-Video-v0" in text and text.count("sent to") == 4 and "agent error" in text
    # the core promise, read back from the frames: the embedded simulator puts the agent where it is sent
    import re

    misses = [float(m) for m in re.findall(r"([\d.]+) px from the target", text)]
    assert len(misses) == 4 and max(misses) < 3.0, text


@pytest.mark.skipif(importlib.util.find_spec("imageio") is None, reason="imageio (the [video] extra) is not installed")
def test_run_demo_with_a_short_replay(tmp_path):
    from rlvr_sim.envs.video.demo import run_demo

    text = run_demo(str(tmp_path / "demo.gif"), steps=1, seed=1)  # fewer replay frames than edge-test frames
    assert "1 steps" in text or "1 step" in text
