"""The README demo's video part: drives the embedded RLVRWorld-Video-v0 (four-edge test, held-out replay) into a
GIF that plays at the intended rate, one GIF frame per env step, with labelled panels; and prints the T's error
beside the agent's."""

import importlib.util
import re

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("imageio") is None,
                                reason="imageio (the [video] extra) is not installed")


def _gif_frames(path):
    """Every frame of a GIF as Pillow stores it, with its duration in ms (read back, not as written)."""
    from PIL import Image, ImageSequence

    with Image.open(path) as image:
        return [(frame.info["duration"], frame.convert("RGB").copy()) for frame in ImageSequence.Iterator(image)]


def test_run_demo_writes_gif_and_reports(tmp_path):
    from rlvr_sim.envs.video.demo import FRAME_MS, HOLD_MS, run_demo

    out = tmp_path / "demo.gif"
    text = run_demo(str(out), steps=3, seed=0)
    frames = _gif_frames(out)
    # 4 four-edge frames (start + 3 steps), then 4 replay frames: none merged, each at the intended duration
    assert [ms for ms, _ in frames] == [FRAME_MS] * 3 + [HOLD_MS] + [FRAME_MS] * 3 + [HOLD_MS]
    assert FRAME_MS >= 100  # a GIF duration read as seconds by an old writer would be 0 ms here
    width, height = frames[0][1].size
    assert width > 3 * (height - 40)  # four panels side by side under the caption and label rows
    assert "RLVRWorld-Video-v0" in text and text.count("sent ") == 4 and "agent error" in text
    assert re.search(r"T error\s+[\d.]+ px, [\d.]+ deg", text), text  # the pushed T's error, beside the agent's
    # the core promise, read back from the frames: the embedded simulator puts the agent where it is sent
    misses = [float(m) for m in re.findall(r"([\d.]+) px from the target", text)]
    assert len(misses) == 4 and max(misses) < 3.0, text


def test_gif_panels_are_labelled(tmp_path):
    """The caption and panel labels are drawn: the label rows hold dark text pixels above the replay panels."""
    import numpy as np
    from rlvr_sim.envs.video.demo import CAPTION_PX, LABEL_PX, run_demo

    out = tmp_path / "demo.gif"
    run_demo(str(out), steps=1, seed=1)  # fewer replay frames than four-edge frames
    frames = _gif_frames(out)
    assert len(frames) == 4 + 2
    replay = np.asarray(frames[-1][1])
    caption, labels = replay[:CAPTION_PX], replay[CAPTION_PX: CAPTION_PX + LABEL_PX]
    assert (caption.min(axis=2) < 100).sum() > 50 and (labels.min(axis=2) < 200).sum() > 50


def test_write_gif_reads_durations_as_milliseconds(tmp_path):
    import numpy as np
    from rlvr_sim.envs.video.demo import write_gif

    same = np.zeros((8, 8, 3), np.uint8)
    write_gif(tmp_path / "same.gif", [same, same, same], [500, 500, 1500])
    durations = [ms for ms, _ in _gif_frames(tmp_path / "same.gif")]
    # Pillow merges identical consecutive frames (adding their durations): the total time is kept either way,
    # so the demo's frames differ by their step caption; here the total must be what was asked
    assert sum(durations) == 2500
