"""evaluations/video_visual_tail.py: the per-window distribution behind a visual model's mean object error."""

import json
import os

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # must precede the first `import mujoco` (headless rendering)
pytest.importorskip("mujoco")

from rlvr_sim.evaluations.video_visual_tail import CAP, main, tail_stats  # noqa: E402


def test_tail_stats_separate_a_few_lost_windows_from_a_typical_one():
    errors = np.array([0.5] * 18 + [CAP, CAP])
    stats = tail_stats(errors, far=5.0)
    assert stats["median"] == 0.5 and stats["mean"] == pytest.approx((18 * 0.5 + 2 * CAP) / 20)
    assert stats["lost_share"] == pytest.approx(0.1) and stats["far_share"] == pytest.approx(0.1)
    assert stats["low"] <= stats["mean"] <= stats["high"] and stats["windows"] == 20


def test_cli_on_arm_episodes_reports_each_checkpoint_and_draws_the_worst(tmp_path):
    from rlvr_sim.envs.arm.collect import collect

    collect(tmp_path / "data", episodes=6, seed=2, max_steps=40)
    out = tmp_path / "tail" / "arm"
    report = main(["--data", str(tmp_path / "data"), "--checkpoints", "arm_visual_base,arm_visual_rlvr",
                   "--windows", "6", "--worst", "2", "--out", str(out)])
    assert report["scene"] == "arm" and report["object"] == "tip" and report["horizon"] == 8
    assert set(report["results"]) == {"arm_visual_base", "arm_visual_rlvr"}
    base = report["results"]["arm_visual_base"]
    assert 1 <= base["windows"] <= 6 and 0.0 <= base["median"] <= CAP and len(base["worst_windows"]) == 2
    assert json.loads(out.with_suffix(".json").read_text())["results"] == report["results"]
    assert "| arm_visual_rlvr |" in out.with_suffix(".md").read_text()
    import imageio.v2 as imageio

    strip = imageio.imread(out.with_suffix(".png"))
    assert strip.shape == (2 * 2 * 64, 9 * 64, 3)  # 2 worst windows x (true, predicted) rows of 1 + 8 frames
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path / "data"), "--checkpoints", "arm_visual_base", "--horizon", "9",
              "--out", str(out)])
