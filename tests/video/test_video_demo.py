"""The README demo: rolls out the embedded RLVRWorld-Video-v0 and writes a truth-vs-prediction GIF."""

import importlib.util

import pytest


@pytest.mark.skipif(importlib.util.find_spec("imageio") is None, reason="imageio (the [video] extra) is not installed")
def test_run_demo_writes_gif_and_reports(tmp_path):
    import imageio.v2 as imageio
    from rlvr_sim.envs.video.demo import run_demo

    out = tmp_path / "demo.gif"
    text = run_demo(str(out), steps=3, seed=0, results_path=tmp_path / "missing.json")
    frames = imageio.mimread(out)
    assert len(frames) == 4 and frames[0].shape[1] > frames[0].shape[0]  # truth | prediction side by side
    assert "RLVRWorld-Video-v0" in text and "frame MSE" in text and "evaluations/video.py" in text
