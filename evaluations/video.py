"""Table-3-style evaluation of the PushT video world models, best-of-N curve and a GIF strip.

    python evaluations/video.py            # embedded checkpoints, held-out windows of data/pusht

Rows, on held-out test windows (episodes the models never saw):
- multi-step (1 context frame -> 7 frames, true actions interleaved): copy-last-frame (the context frame
  repeated), tokenizer reconstruction of the true frames (the ceiling behind this tokenizer), base,
  base + repetition rejection (of 8 samples keep the first whose frames never repeat, else the first),
  RLVR;
- single-step (4 context frames -> next frame): copy-last-frame (the 4th context frame), tokenizer
  ceiling, base, RLVR (single-step RLVR checkpoint when present, and the multi-step one).
Metrics: MSE and MAE on [0, 1] pixels, PSNR (dB), SSIM x100, LPIPS x100 (the variant is named in every
output: ST-LPIPS unless ImageNet LPIPS weights are local), repetition rate (% of rollouts,
`rlvr_sim.metrics.video.repetition_rate`: token-identical repeats) and near-copy rate (% of rollouts,
`near_copy_rate`: a predicted frame within MSE 2e-4 of the one before where the truth moved more). Predictions are sampled at temperature 1 with fixed seeds.
Best-of-N (the paper's Figure 4): per window N samples, keep the lowest LPIPS (resp. MSE) against the
truth, N = 1..32. Outputs: evaluations/results/video.{json,md} and video_strip.gif.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlvr_sim.metrics.video import frame_metrics, near_copy_rate, perceptual_metric, repetition_rate
from rlvr_sim.models.lm import load_model
from rlvr_sim.rl.sampler import sample
from rlvr_sim.tasks.video import VideoTask

RESULTS = Path("evaluations/results")
REJECTION_SAMPLES = 8


def _summary(pred: np.ndarray, gold: np.ndarray, lpips: Any, repetition: float | None,
             previous: np.ndarray) -> dict[str, float]:
    """Metric row; `previous` (N, S, S, 3) is the true frame before the first predicted one."""
    flat_p, flat_g = pred.reshape(-1, *pred.shape[-3:]), gold.reshape(-1, *gold.shape[-3:])
    m = frame_metrics(flat_p, flat_g, lpips)
    row = {"mse": float(m["mse"].mean()), "mae": float(m["mae"].mean()), "psnr": float(m["psnr"].mean()),
           "ssim": float(100 * m["ssim"].mean()), "lpips": float(100 * m["lpips"].mean())}
    row["repetition"] = None if repetition is None else float(100 * repetition)
    row["near_copy"] = float(100 * near_copy_rate(np.concatenate([previous[:, None], pred], axis=1),
                                                  np.concatenate([previous[:, None], gold], axis=1)))
    return row


def _sample_codes(model: Any, task: VideoTask, examples: list, samples: int, seed: int) -> np.ndarray:
    """(len(examples), samples, frames, cond_tokens) predicted codes at temperature 1."""
    spec = task.generation_spec()
    frames = spec.max_new_tokens // task.codec.cond_tokens
    out = np.zeros((len(examples), samples, frames, task.codec.cond_tokens), dtype=np.int64)
    for start in range(0, len(examples), 8):
        chunk = examples[start : start + 8]
        result = sample(
            model, [e.prompt_ids for e in chunk], group_size=samples, max_new_tokens=spec.max_new_tokens,
            temperature=1.0, pad_token_id=task.pad_token_id, seeds=[seed + start + i for i in range(len(chunk))],
            forced=[e.forced for e in chunk] if chunk[0].forced is not None else None,
            interleave_every=spec.interleave_every, allowed_token_range=task.code_range,
        )
        for row, completion in enumerate(result.completions()):
            parsed = task.codec.parse_frames(completion, frames)
            if parsed is None or not parsed[1].all():
                raise RuntimeError("sampler returned a completion without the frame layout")
            out[start + row // samples, row % samples] = parsed[0]
    return out


def _repeats(codes: np.ndarray, first_codes: np.ndarray) -> np.ndarray:
    """Whether each rollout (N, F, L) has a predicted frame equal to the one before it (no truth needed)."""
    chain = np.concatenate([first_codes[:, None], codes], axis=1)
    return (chain[:, 1:] == chain[:, :-1]).all(-1).any(-1)


def _rep_rate(codes: np.ndarray, windows: Any, index: np.ndarray, first: int) -> float:
    frames = codes.shape[1]
    prev = windows.cond_codes[index, first - 1]
    pred = np.concatenate([prev[:, None], codes], axis=1)
    gold = windows.cond_codes[index, first - 1 : first + frames]
    return repetition_rate(pred, gold)


def evaluate_mode(task: VideoTask, models: dict[str, Any], n_windows: int, seed: int, lpips: Any,
                  bon_windows: int, bon_max: int) -> dict[str, Any]:
    """All table rows of one mode (task.mode) plus the best-of-N curves."""
    windows = task.windows["test"]
    examples = task.examples("test")[:n_windows]
    index = np.array([e.metadata["index"] for e in examples])
    first, frames = examples[0].metadata["first"], examples[0].metadata["frames"]
    gold = windows.future[index, first - 1 : first - 1 + frames]
    rows: dict[str, Any] = {}
    previous = windows.future[index, first - 2] if first > 1 else windows.context[index]
    copy = np.repeat(previous[:, None], frames, axis=1)
    copy_codes = np.repeat(windows.cond_codes[index, first - 1][:, None], frames, axis=1)
    rows["copy-last-frame"] = _summary(copy, gold, lpips, _rep_rate(copy_codes, windows, index, first), previous)
    true_codes = windows.cond_codes[index, first : first + frames]
    rows["tokenizer reconstruction (ceiling)"] = _summary(
        task.decode_predictions(true_codes, index, "test"), gold, lpips, _rep_rate(true_codes, windows, index, first),
        previous)
    curves: dict[str, Any] = {}
    for name, model in models.items():
        codes = _sample_codes(model, task, examples, 1, seed)[:, 0]
        rows[name] = _summary(task.decode_predictions(codes, index, "test"), gold, lpips,
                              _rep_rate(codes, windows, index, first), previous)
        if task.mode == "multi" and name == "base":
            candidates = _sample_codes(model, task, examples, REJECTION_SAMPLES, seed + 10_000)
            repeats = np.stack([_repeats(candidates[:, s], windows.cond_codes[index, 0])
                                for s in range(REJECTION_SAMPLES)], axis=1)
            choice = np.where(repeats.all(1), 0, np.argmin(repeats, axis=1))
            kept = candidates[np.arange(len(index)), choice]
            rows["base + repetition rejection"] = _summary(task.decode_predictions(kept, index, "test"), gold, lpips,
                                                           _rep_rate(kept, windows, index, first), previous)
        if bon_windows:
            curves[name] = best_of_n(task, model, examples[:bon_windows], index[:bon_windows], gold[:bon_windows],
                                     lpips, bon_max, seed + 20_000)
    return {"rows": rows, "best_of_n": curves, "windows": len(index), "frames_per_rollout": frames}


def best_of_n(task: VideoTask, model: Any, examples: list, index: np.ndarray, gold: np.ndarray, lpips: Any,
              n_max: int, seed: int) -> dict[str, list[float]]:
    """Mean over windows of the best (lowest) LPIPS x100 / MSE among the first N samples, N = 1..n_max."""
    codes = _sample_codes(model, task, examples, n_max, seed)
    n_win, _, frames = codes.shape[:3]
    pred = task.decode_predictions(codes.reshape(n_win * n_max, frames, -1), np.repeat(index, n_max), "test")
    gold_rep = np.repeat(gold, n_max, axis=0)
    flat_p, flat_g = pred.reshape(-1, *pred.shape[-3:]), gold_rep.reshape(-1, *gold_rep.shape[-3:])
    per = {"lpips": 100 * lpips(flat_p, flat_g), "mse": frame_metrics(flat_p, flat_g)["mse"]}
    curve: dict[str, list[float]] = {"n": list(range(1, n_max + 1))}
    for key, values in per.items():
        by_sample = values.reshape(n_win, n_max, frames).mean(-1)
        curve[key] = [float(np.minimum.accumulate(by_sample, axis=1)[:, n - 1].mean()) for n in curve["n"]]
    return curve


def write_strip(task: VideoTask, models: dict[str, Any], out: Path, seed: int, window: int = 0) -> None:
    """Animated GIF: ground truth | base | RLVR side by side over the 7 predicted steps (context first)."""
    import imageio.v2 as imageio

    windows = task.windows["test"]
    example = task.examples("test")[window]
    i = example.metadata["index"]
    columns = [np.concatenate([windows.context[i][None], windows.future[i]])]
    for model in models.values():
        codes = _sample_codes(model, task, [example], 1, seed)[:, 0]
        columns.append(np.concatenate([windows.context[i][None], task.decode_predictions(codes, np.array([i]), "test")[0]]))
    gap = np.full((len(columns[0]), columns[0].shape[1], 2, 3), 255, np.uint8)
    frames = np.concatenate([x for c in columns for x in (c, gap)][:-1], axis=2)
    frames = np.repeat(np.repeat(frames, 3, axis=1), 3, axis=2)
    imageio.mimsave(out, list(frames), duration=0.5, loop=0)


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    """The README tables (MSE shown x1000 for readability)."""
    lines = [f"LPIPS variant: **{results['lpips_variant']}** (x100). MSE x1000 on [0, 1] pixels. "
             f"Frame skip {results['frame_skip']} ({results['frame_skip'] / 10:.1f} s per step), 64x64 frames.", ""]
    for mode, title in (("multi", "Multi-step (1 context frame -> 7 frames)"), ("single", "Single-step (4 context frames -> next)")):
        if mode not in results:
            continue
        block = results[mode]
        lines += [f"**{title}**, {block['windows']} held-out windows", "",
                  "| model | repetition % | near-copy % | MSE x1e3 | PSNR | SSIM | LPIPS | MAE x1e2 |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, row in block["rows"].items():
            lines.append(f"| {name} | {_fmt(row['repetition'], 1)} | {_fmt(row.get('near_copy'), 1)} | {row['mse'] * 1e3:.3f} | {row['psnr']:.2f} | "
                         f"{row['ssim']:.2f} | {row['lpips']:.2f} | {row['mae'] * 100:.3f} |")
        lines.append("")
        for name, curve in block["best_of_n"].items():
            picks = [n for n in (1, 2, 4, 8, 16, 32) if n <= len(curve["n"])]
            lines.append(f"best-of-N LPIPS ({mode}, {name}): " + ", ".join(
                f"N={n}: {curve['lpips'][n - 1]:.2f}" for n in picks))
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/pusht")
    parser.add_argument("--base", default="assets/pusht_base")
    parser.add_argument("--rlvr", default="assets/pusht_rlvr")
    parser.add_argument("--rlvr-single", default="assets/pusht_rlvr_single")
    parser.add_argument("--windows", type=int, default=256,
                        help="held-out windows per table (the test split holds at most 256, drawn across all test "
                             "episodes; fewer takes the first ones, i.e. only a few episodes)")
    parser.add_argument("--bon-windows", type=int, default=8, help="windows for the best-of-N curve (0: skip)")
    parser.add_argument("--bon-max", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(RESULTS / "video"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.time()
    lpips = perceptual_metric()
    base, _, meta = load_model(args.base)
    rlvr, _, _ = load_model(args.rlvr)
    settings = meta["video_settings"]
    tokenizer_dir = Path(args.base) / "tokenizer"
    common = dict(data_dir=args.data, tokenizer_dir=str(tokenizer_dir), horizon=settings["horizon"],
                  frame_skip=settings["frame_skip"], action_bins=meta["action_bins"],
                  test_fraction=settings["test_fraction"], split_seed=settings["split_seed"],
                  train_stride=settings["train_stride"], test_stride=settings["test_stride"],
                  max_test_windows=settings["max_test_windows"])
    results: dict[str, Any] = {"lpips_variant": lpips.name, "frame_skip": settings["frame_skip"],
                               "checkpoints": {"base": args.base, "rlvr": args.rlvr}}
    multi = VideoTask(mode="multi", **common)
    results["multi"] = evaluate_mode(multi, {"base": base.eval(), "RLVR": rlvr.eval()}, args.windows, args.seed,
                                     lpips, args.bon_windows, args.bon_max)
    single_models = {"base": base, "RLVR (multi-step model)": rlvr}
    if Path(args.rlvr_single).is_dir():
        single_models["RLVR (single-step)"] = load_model(args.rlvr_single)[0].eval()
        results["checkpoints"]["rlvr_single"] = args.rlvr_single
    single = VideoTask(mode="single", context_frames=settings.get("context_frames", 4), **common)
    results["single"] = evaluate_mode(single, single_models, args.windows, args.seed, lpips, 0, 0)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_strip(multi, {"base": base, "RLVR": rlvr}, out.with_name(out.name + "_strip.gif"), args.seed)
    results["seconds"] = round(time.time() - start, 1)
    results["command"] = "python evaluations/video.py " + " ".join(argv if argv is not None else __import__("sys").argv[1:])
    out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(results) + "\n")
    print(markdown(results))
    return results


if __name__ == "__main__":
    main()
