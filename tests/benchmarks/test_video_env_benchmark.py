"""benchmarks/video_env.py: the visual PushT env measured beside the pose env in one run (equal work, alternating
rounds), and the keypoint tokenizer's reuse of its anchor across decode calls (the speed-up it measures) keeping
the frames exact."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_script(name: str):
    """Import a benchmark script by path (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def within(value: float, raw: list[float], rounding: float = 0.0) -> bool:
    """A summary (a median) lies within its positive per-round measurements (`rounding`: its rounding step)."""
    low, high = min(raw) * (1 - 1e-9) - rounding / 2, max(raw) * (1 + 1e-9) + rounding / 2
    return min(raw) > 0 and low <= value <= high


def ratio_within(ratio: float, numerators: list[float], denominators: list[float], rounding: float = 0.0) -> bool:
    """A ratio of two summaries lies between the extreme ratios of their rounds (an inverted one falls outside)."""
    return within(ratio, [n / d for n in numerators for d in denominators], rounding)


def test_video_env_measures_the_visual_env_beside_the_pose_env(tmp_path):
    pytest.importorskip("gym_pusht", reason="gym-pusht is the benchmark's ground-truth rate")
    bench = load_script("video_env")
    out = tmp_path / "video_env.json"
    result = bench.main(["--steps", "1", "--rounds", "2", "--pusht-steps", "5", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(result))
    assert written["visual_checkpoint"] == "pusht_visual_base"
    runs = written["runs"]
    assert set(runs) == {f"{m}batch{n}_{kind}" for n in (1, 16) for m, kind in
                         [("", "lean"), ("visual_", "lean"), ("", "transformers_forward")]}
    assert all(len(v) == 2 for v in runs.values())
    for n in (1, 16):
        pose, visual = runs[f"batch{n}_lean"], runs[f"visual_batch{n}_lean"]
        assert within(written["world_model_fps"][f"batch{n}"], pose, rounding=0.01)
        assert within(written["visual_world_model_fps"][f"batch{n}"], visual, rounding=0.01)
        # visual over pose (not inverted), from the rounds it claims
        assert ratio_within(written["visual_vs_pose_fps"][f"batch{n}"], visual, pose, rounding=0.002)
        for model in ("pose", "visual"):
            share = written["step_time_shares"][f"{model}_batch{n}"]
            assert set(share) == {"tokenizer_decode", "task_signal", "lm_decoding_and_rest"}
            assert all(0 < v <= 1 for v in share.values()) and abs(sum(share.values()) - 1) < 0.005
    assert written["visual_meets_target_batch1"] == (written["visual_vs_pose_fps"]["batch1"] >= 0.25)
    assert written["gym_pusht_fps_64px"] > 0


def test_keypoint_decode_reuses_the_anchor_exactly():
    """The keypoint tokenizer's decode reuses its anchor's half of the U-Net input across calls (the env decodes
    every step over one anchor): the frames must be exactly those of `draw`, and a new anchor, new weights or a
    second chunk must never see another call's cached anchor."""
    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer, KeypointTokenizerConfig

    torch.manual_seed(0)
    tok = KeypointTokenizer(KeypointTokenizerConfig(image_size=16, keypoints=2, bins=16, width=8)).eval()
    with torch.no_grad():
        tok.background.fill_(0.5)
        tok.out[0].bias.zero_()  # an open mask: every pixel is drawn by the U-Net, so any difference shows
    rng = np.random.default_rng(0)

    def reference(codes, context):  # decode as it was: draw() from scratch
        with torch.no_grad():
            ctx = tok._to_tensor(context)
            ctx_points, _ = tok.quantise(tok.points(ctx))
            points = tok.codes_to_points(torch.from_numpy(codes).long().reshape(-1, 2, 2))
            frames = tok.draw(ctx, ctx_points, points).clamp(0, 1)
        return (frames.permute(0, 2, 3, 1).numpy() * 255.0 + 0.5).astype(np.uint8)

    def frames(n):
        return rng.integers(0, 256, (n, 16, 16, 3), dtype=np.uint8)

    context = frames(5)
    for context_now in (context, context, frames(5), context):  # repeated, replaced, back again
        codes = rng.integers(0, 16, (5, 4))
        assert np.array_equal(tok.decode(codes, context_now, batch_size=2), reference(codes, context_now))
    changed = context.copy()
    changed[3, 4, 4] ^= 1  # one pixel of one anchor: that chunk recomputes
    codes = rng.integers(0, 16, (5, 4))
    assert np.array_equal(tok.decode(codes, changed, batch_size=2), reference(codes, changed))
    with torch.no_grad():
        tok.encoder[-1].weight.mul_(1.5)  # new weights in place (an optimiser step): no stale anchor points
    assert np.array_equal(tok.decode(codes, changed, batch_size=2), reference(codes, changed))
    tok.load_state_dict(KeypointTokenizer(tok.config).state_dict())
    assert np.array_equal(tok.decode(codes, changed, batch_size=2), reference(codes, changed))
