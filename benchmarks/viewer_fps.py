"""Frames per second of the pygame viewer in play mode (headless), with a breakdown of where time goes.

Each frame is one full viewer tick: a synthetic mouse move (the target circles the frame), one world-model
step, the ground-truth step when gym-pusht runs alongside, per-frame scoring (SSIM, LPIPS), drawing and
the display flip; frame-rate cap off, torch on one thread. Writes JSON (stdout, and --out when given).

    python benchmarks/viewer_fps.py                          # embedded model, beside gym-pusht
    python benchmarks/viewer_fps.py --frames 300 --out viewer_fps.json -- --ground-truth off --lpips off
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from collections.abc import Callable, Sequence
from typing import Any

from rlvr_sim.reporting import emit_json

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


def _timed(function: Callable, bucket: list[float]) -> Callable:
    """`function`, appending the seconds each call takes to `bucket`."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            bucket.append(time.perf_counter() - start)

    return wrapper


def measure(viewer_argv: Sequence[str], frames: int = 200, warmup: int = 10) -> dict[str, Any]:
    """Run the viewer that `viewer_argv` describes for `warmup + frames` ticks; report the last `frames`."""
    import pygame
    import torch

    from rlvr_sim.viewer.app import build_parser, build_viewer

    torch.set_num_threads(1)
    args = build_parser().parse_args([*viewer_argv, "--fps", "0", "--mode", "play", "--no-help"])
    viewer = build_viewer(args)
    session = viewer.session
    buckets: dict[str, list[float]] = {"world_model_step": [], "ground_truth_step": [], "scoring": []}
    session.world.step = _timed(session.world.step, buckets["world_model_step"])
    if session.truth is not None:
        session.truth.step = _timed(session.truth.step, buckets["ground_truth_step"])
    if session.scorer is not None:
        session.scorer.score = _timed(session.scorer.score, buckets["scoring"])
    left, top = viewer.layout.panels[0]
    width, height = viewer.frame_pixels
    tick_seconds = []
    for index in range(warmup + frames):
        angle = 2 * math.pi * index / 50
        position = (
            int(left + width * (0.5 + 0.35 * math.cos(angle))),
            int(top + height * (0.5 + 0.35 * math.sin(angle))),
        )
        pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=position, rel=(0, 0), buttons=(0, 0, 0)))
        start = time.perf_counter()
        viewer.tick()
        tick_seconds.append(time.perf_counter() - start)
    steps = session.step_index
    viewer.close()
    measured = tick_seconds[warmup:]
    result: dict[str, Any] = {
        "frames_per_second": round(len(measured) / sum(measured), 2),
        "frame_ms": round(1000 * sum(measured) / len(measured), 3),
    }
    for name, values in buckets.items():
        kept = values[warmup:]
        result[f"{name}_ms"] = round(1000 * sum(kept) / len(kept), 3) if kept else None
    result.update(
        {
            "frames": frames,
            "warmup": warmup,
            "world_steps_in_last_episode": steps,
            "ground_truth": session.truth is not None,
            "lpips": session.scorer.lpips_name if session.scorer is not None else None,
            "frame_size": list(session.world_frame.shape[:2]),
            "model": viewer.model_label,
            "viewer_args": list(viewer_argv),
        }
    )
    return result


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200, help="timed frames")
    parser.add_argument("--warmup", type=int, default=10, help="untimed frames first (model loading, caches)")
    parser.add_argument("--out", help="also write the JSON here")
    parser.add_argument(
        "viewer_args", nargs="*", help="arguments for the viewer (after --), e.g. --checkpoint DIR"
    )
    args = parser.parse_args(argv)
    result = {
        "benchmark": "viewer play-mode frames per second (headless, no frame cap)",
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_1min_at_start": round(os.getloadavg()[0], 2),  # a shared CPU slows every figure
        },
        **measure(args.viewer_args, args.frames, args.warmup),
    }
    emit_json(result, args.out)
    return result


if __name__ == "__main__":
    main()
