"""Memory of a video task's training data: frames stored once per episode frame and examples made on demand,
beside the per-window copies and the eager example list they replaced, at equal data; JSON out.

On the same episodes and settings (the pose model's: horizon 16, train stride 2, the arena's symmetries with
translated copies), measured in one run:

- true-frame store: bytes of `WindowFrames` (each episode frame once, plus the window index) vs the dense
  (W, T, S, S, 3) array each window's frames made before (`frames_ratio`: dense / stored);
- examples: Python heap allocated (tracemalloc) to hold every training example as a list, as `examples()` once
  returned, vs the on-demand sequence it returns now plus one drawn batch of 32 (`examples_ratio`);
- the cost of laziness: seconds to draw one batch of 32 from each (`batch_draw_seconds`, median of 7 rounds;
  a training step of the pose model takes about a second on this CPU).

    python benchmarks/video_data_memory.py --out benchmarks/results/video_data_memory.json
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.reporting import emit_json, machine_record


def build_task(data: str, cache: str) -> Any:
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer
    from rlvr_sim.tasks import make_task

    PoseTokenizer().save(Path(cache) / "tok")
    return make_task("pusht", data_dir=data, tokenizer_dir=str(Path(cache) / "tok"), mode="multi", horizon=16,
                     train_stride=2, test_stride=4, augment="d4_shift", layout="relational", lpips="st-lpips",
                     cache_dir=str(Path(cache) / "windows"),
                     action_bins={"low": [0.0, 0.0], "high": [512.0, 512.0], "num_bins": 256})


def heap_bytes(make: Any) -> tuple[int, Any]:
    """Python heap still allocated after `make()` (what holding its result costs) and the result."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = make()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before, result


def measure(data: str, seed: int = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        task = build_task(data, cache)
        future = task.windows["train"].future
        stored = future.frames.nbytes + future.index.nbytes
        dense = int(np.prod(future.shape)) * future.dtype.itemsize
        rng = np.random.default_rng(seed)

        def on_demand() -> tuple[Any, list[Any]]:  # the sequence and one drawn batch, both held
            examples = task.examples("train")
            return examples, [examples[int(i)] for i in rng.integers(0, len(examples), 32)]

        lazy_bytes, (lazy, batch) = heap_bytes(on_demand)
        eager_bytes, eager = heap_bytes(lambda: list(task.examples("train")))
        draws: dict[str, list[float]] = {"on_demand": [], "eager_list": []}
        for _ in range(7):  # alternating rounds, the same 32 picks on both sides; median reported
            picks = rng.integers(0, len(eager), 32)
            for name, examples in (("on_demand", lazy), ("eager_list", eager)):
                began = time.perf_counter()
                [examples[int(i)] for i in picks]
                draws[name].append(time.perf_counter() - began)
        return {
            "windows": len(future), "examples": len(lazy), "drawn": len(batch),
            "frames_bytes": {"stored_once": int(stored), "per_window": dense, "frames_ratio": dense / stored},
            "examples_bytes": {"on_demand": int(lazy_bytes), "eager_list": int(eager_bytes),
                               "examples_ratio": eager_bytes / max(lazy_bytes, 1)},
            "batch_draw_seconds": {name: float(np.median(v)) for name, v in draws.items()},
        }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="PushT episode folder (default: collect --episodes into a temp dir)")
    parser.add_argument("--episodes", type=int, default=24, help="episodes to collect when --data is not given")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            from rlvr_sim.envs.video.collect import collect

            data = str(Path(tmp) / "data")
            collect(data, episodes=args.episodes, seed=args.seed, mix="expert:1,explore:1,random:1")
        report = measure(data, args.seed)
    report["command"] = "python benchmarks/video_data_memory.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    report["machine"] = machine_record("bytes are exact for these episodes; the ratios grow with the overlap of windows")
    emit_json(report, args.out)
    return report


if __name__ == "__main__":
    main()
