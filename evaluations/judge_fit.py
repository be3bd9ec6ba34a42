"""How T-like the T pixels of real PushT frames are: the calibration of the judge's `is_tee` check.

The pixel judge reads the T's pose as the best-fitting T (`pusht_pixels.estimate_block_pose`); its `block_fit` is
that T's IoU with the T pixels. A learned simulator can draw the T as a smear or a double image that the fit still
places on the goal; Real2Sim and the video env's termination count a success only where the fit is at least
`min_block_fit(size)` = min(1 - MIN_BLOCK_FIT_PIXELS / size, MIN_BLOCK_FIT_CAP). This script reports, per frame size, the fit of every
held-out frame of an episode folder that shows a T (each frame made as the training frames are), its percentiles
and the share under the threshold.

    python evaluations/judge_fit.py --data data/pusht2 --out evaluations/results/judge_fit
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

PERCENTILES = (0.1, 0.5, 1.0, 5.0, 50.0)


def frame_fits(data: str | Path, size: int, every: int = 3, test_fraction: float = 0.1, split_seed: int = 0) -> np.ndarray:
    """`block_fit` of every `every`-th frame of the held-out episodes of `data` at `size` px that shows a T."""
    from rlvr_sim.data.episodes import episode_paths, load_episode, split_paths
    from rlvr_sim.metrics.pusht_pixels import estimate_state

    test = split_paths(episode_paths(data), test_fraction, split_seed)["test"]
    fits = [estimate_state(frame)["block_fit"] for path in test for frame in load_episode(path, size, 1).images[::every]]
    fits = np.asarray(fits)
    return fits[fits > 0]


def report(data: str | Path, sizes: list[int], every: int = 3) -> dict:
    from rlvr_sim.metrics.pusht_pixels import MIN_BLOCK_FIT_CAP, MIN_BLOCK_FIT_PIXELS, min_block_fit

    rows = {}
    for size in sizes:
        fits = frame_fits(data, size, every)
        rows[str(size)] = {"frames": int(len(fits)), "threshold": min_block_fit(size),
                           "below_threshold": float((fits < min_block_fit(size)).mean()),
                           "percentiles": {str(p): float(np.percentile(fits, p)) for p in PERCENTILES}}
    return {"data": str(data), "every": every, "min_block_fit_pixels": MIN_BLOCK_FIT_PIXELS,
            "min_block_fit_cap": MIN_BLOCK_FIT_CAP, "sizes": rows}


def markdown(result: dict, command: str, seconds: float) -> str:
    lines = [f"# The judge's T check on held-out frames of `{result['data']}`", "",
             f"`block_fit` (IoU of the T pixels with the best-fitting T) of every {result['every']}rd held-out frame that "
             f"shows a T, made at each size as the training frames are; a success needs at least min(1 - "
             f"{result['min_block_fit_pixels']:g} / size, {result['min_block_fit_cap']:g}).", "",
             "| size | frames | " + " | ".join(f"{p}th pct" for p in PERCENTILES) + " | threshold | below it |",
             "|---:|---:|" + "---:|" * len(PERCENTILES) + "---:|---:|"]
    for size, row in result["sizes"].items():
        pct = " | ".join(f"{row['percentiles'][str(p)]:.3f}" for p in PERCENTILES)
        lines.append(f"| {size} | {row['frames']} | {pct} | {row['threshold']:.3f} | {100 * row['below_threshold']:.2f}% |")
    lines += ["", f"Command: `{command}` ({seconds:.0f} s)", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/pusht2", help="episode folder (its held-out split is read)")
    parser.add_argument("--sizes", default="32,48,64,96", help="comma-separated frame sizes")
    parser.add_argument("--every", type=int, default=3, help="read every this many-th frame")
    parser.add_argument("--out", default="evaluations/results/judge_fit")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = report(args.data, [int(s) for s in args.sizes.split(",")], args.every)
    seconds = time.perf_counter() - start
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "judge_fit.json").write_text(json.dumps(result, indent=2) + "\n")
    command = "python evaluations/judge_fit.py " + " ".join(argv if argv is not None else sys.argv[1:])
    (out / "judge_fit.md").write_text(markdown(result, command.strip(), seconds))
    print(markdown(result, command.strip(), seconds))
    return result


if __name__ == "__main__":
    main()
