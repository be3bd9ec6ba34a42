"""Visual video world models (a learned tokenizer, any scene): the paper's metrics beside the trivial baseline.

    python evaluations/video_visual.py --data data/pusht2 --base assets/pusht_visual_base \
        --rlvr assets/pusht_visual_rlvr --pose assets/pusht_pose_base --out evaluations/results/video_visual_pusht
    python evaluations/video_visual.py --data data/arm --base assets/arm_visual_base --rlvr assets/arm_visual_rlvr \
        --out evaluations/results/video_visual_arm

On held-out windows of the checkpoints' own episode split (open loop from an anchor frame under the true
actions), every model rolled out through `VideoWorldModel.rollout`, the path `gym.make("RLVRWorld-Video-v0")`
serves:
1. **Rollouts** at horizons 1 (single step), 4 and `--horizon`: MSE, PSNR, SSIM, LPIPS; the repetition rate
   (the paper's: a predicted frame token-identical to the one before while the truth changed; tokens re-read
   from the frames by the model's own tokenizer) and its pixel companion (near-copy rate); object errors
   where the scene has a judge (PushT: agent / T position and angle by the pixel judge; arm: tip and puck).
   Rows: copy-last-frame, the tokenizer's reconstruction of the true frames (its ceiling), each model
   (temperature 0, median-decoded where its codes are ordered bins: as the env serves it by default) and, on PushT, the pose-token model (`--pose`). Paired bootstrap
   95% intervals: each model vs copy-last-frame, RLVR vs base.
2. **Best-of-N**: N rollouts per window sampled at temperature 1; the best of the first n by MSE / LPIPS. The
   first sample of each model is also scored in full, as the paper's Table 3 decodes (one sample at temperature
   1): MSE, PSNR, SSIM, LPIPS at step 1 and over all steps, the repetition rate, RLVR vs base paired.
3. **Four far targets**: from `--starts` held-out frames, the agent (PushT) or the arm's tip sent to four
   far points and held 3 steps; where the judge finds it in the last predicted frame (share within 3 px).
   Then the **tour**: from the same frames, the four corners of the arena (the arm: the four far points) in
   turn, 3 steps each, with no reset between, judged at the end of each leg; a model that passes from a start
   frame can still stay put on a long move from a corner (docs/video.md).
4. **The pushed object, still vs moved** (judged scenes): the pushed object's error (PushT's T, the arm's puck)
   at the last horizon over the windows where it truly stayed within 1 px of the anchor and over the rest, so a
   model that drifts a still object and one that mis-pushes a moving one are told apart (copy-last-frame is
   near 0 on the first group by construction).
`--compare NAME=CHECKPOINT` adds any other checkpoint as a row (paired against copy-last-frame and against it,
base vs NAME).
JSON and markdown to `--out` (default runs/eval/video_visual), a progress bar throughout.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rlvr_sim.envs.video.world_model_env import VideoWorldModel, checkpoint_scene
from tqdm import tqdm

from rlvr_sim.metrics.stats import bootstrap_ci, paired_gain
from rlvr_sim.metrics.video import (
    frame_metrics,
    near_copy_rate,
    perceptual_metric,
    repeated_rollouts,
    repetition_rate,
)
from rlvr_sim.reporting import write_results
from rlvr_sim.tasks.video import VideoTask

PIXEL_METRICS = ("mse", "psnr", "ssim", "lpips")
HIGHER_IS_BETTER = {"psnr", "ssim"}
MISSING_PX = 32.0  # an object the judge cannot find in a predicted frame counts as this far off (px at 64x64)
ARM_TARGETS = np.array([(56.0, 256.0), (456.0, 256.0), (256.0, 56.0), (256.0, 456.0)])  # 200 units from the shoulder
TRACKED = {"arm": "tip", "pusht": "agent"}  # scene -> its actuated object, as `scene_objects` names it
TOURS = {"pusht": np.array([(64.0, 64.0), (448.0, 64.0), (448.0, 448.0), (64.0, 448.0)]),  # the corners, in turn
         "arm": ARM_TARGETS[[0, 2, 1, 3]]}  # left, top, right, bottom of the arm's reach


def scene_objects(scene: str, frames: np.ndarray) -> dict[str, np.ndarray] | None:
    """Judged object positions in px of each frame (N, ...) -> {name: (N, 2) or angle (N,)}, None without a judge."""
    if scene == "pusht":
        from rlvr_sim.metrics.pusht_pixels import PIXELS_PER_WORLD, judge_states

        states = judge_states(frames)
        return {"agent": states[:, :2] * PIXELS_PER_WORLD, "block": states[:, 2:4] * PIXELS_PER_WORLD,
                "angle": states[:, 4]}
    if scene == "arm":
        from rlvr_sim.metrics.arm_pixels import judge_states

        states = judge_states(frames)  # tip and puck from one colour labelling
        return {"tip": states[:, :2], "puck": states[:, 2:]}
    return None


def object_errors(scene: str, pred: np.ndarray, gold: np.ndarray) -> dict[str, np.ndarray]:
    """Per-frame object errors (px; degrees for the T's angle) of predicted vs true frames, {} without a judge."""
    p, g = scene_objects(scene, pred), scene_objects(scene, gold)
    if p is None:
        return {}
    out = {}
    for name in p:
        if name == "angle":
            diff = np.abs((p[name] - g[name] + np.pi) % (2 * np.pi) - np.pi)
            out["angle_deg"] = np.nan_to_num(np.degrees(diff), nan=90.0)
        else:
            error = np.linalg.norm(p[name] - g[name], axis=-1)
            out[f"{name}_px"] = np.minimum(np.nan_to_num(error, nan=MISSING_PX), MISSING_PX)
    return out


def held_out_task(world: VideoWorldModel, data: str, max_windows: int, camera: str | None = None) -> tuple[VideoTask, str]:
    """(multi-step VideoTask over `data`'s held-out windows exactly as `world`'s checkpoint split and binned them,
    the checkpoint's scene, "custom" when it names none)."""
    from rlvr_sim.models.lm import load_model
    from rlvr_sim.resources import results_dir

    meta = load_model(world.checkpoint)[2]
    settings = meta["video_settings"]
    scene = checkpoint_scene(meta, world.tokenizer) or "custom"
    own = world.checkpoint / "tokenizer"  # a packaged checkpoint's own copy, else the run's training tokenizer
    task = VideoTask(data_dir=data, tokenizer_dir=str(own if own.is_dir() else settings["tokenizer_dir"]), mode="multi",
                     horizon=int(settings["horizon"]), frame_skip=int(settings["frame_skip"]),
                     test_fraction=settings["test_fraction"], split_seed=settings["split_seed"],
                     test_stride=settings["test_stride"], max_test_windows=max_windows,
                     action_bins=meta["action_bins"], scene=scene, camera=camera,
                     cache_dir=str(results_dir() / "cache"))  # tokenised windows: a run folder, never the results
    return task, scene


def _ci(values: np.ndarray) -> dict[str, float]:
    low, high = bootstrap_ci(values)
    return {"mean": float(np.mean(values)), "low": low, "high": high}


def rollout_codes(tokenizer: Any, context: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Codes (N, T + 1, L) of each window's anchor followed by its (N, T) frames, as the repetition rate reads them."""
    with_context = np.concatenate([context[:, None], frames], 1)
    return tokenizer.encode(with_context.reshape(-1, *context.shape[1:])).reshape(*with_context.shape[:2], -1)


def rollout_section(task: VideoTask, worlds: dict[str, Any], scene: str, n: int, horizons: list[int], seed: int,
                    lpips: Any, bar: tqdm) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Section 1: per-horizon metrics of every row on the first `n` held-out windows, and per-window values."""
    w = task.windows["test"]
    context, future = w.context[:n], w.future[:n]
    actions = task.action_bins.decode(w.action_bins[:n])
    frames = {"copy-last-frame": np.repeat(context[:, None], future.shape[1], axis=1),
              "tokenizer ceiling": task.decode_predictions(w.cond_codes[:n, 1:], np.arange(n), "test")}
    for name, world in worlds.items():
        bar.set_description(f"rollouts: {name}")
        frames[name] = world.rollout(context, actions, [seed + i for i in range(n)], temperature=0.0,
                                     median=world.serves_median)
        bar.update(1)
    tokenizer = next(iter(worlds.values())).tokenizer if worlds else task.frame_tokenizer
    gold_codes = rollout_codes(tokenizer, context, future)
    truth, flat_gold = np.concatenate([context[:, None], future], 1), future.reshape(-1, *future.shape[2:])
    rows: dict[str, Any] = {}
    per_window: dict[str, np.ndarray] = {}
    for name, pred in frames.items():
        flat_pred = pred.reshape(-1, *pred.shape[2:])
        metrics = frame_metrics(flat_pred, flat_gold, lpips)
        metrics.update(object_errors(scene, flat_pred, flat_gold))
        metrics = {k: v.reshape(n, -1) for k, v in metrics.items()}
        with_context = np.concatenate([context[:, None], pred], 1)
        row: dict[str, Any] = {"repetition_rate": repetition_rate(rollout_codes(tokenizer, context, pred), gold_codes),
                               "near_copy_rate": near_copy_rate(with_context, truth)}
        for h in horizons:
            row[str(h)] = {k: _ci(v[:, h - 1]) for k, v in metrics.items()}
            for k, v in metrics.items():
                per_window[f"{name}|{k}|{h}"] = v[:, h - 1]
        rows[name] = row
    return rows, per_window


def gains(per_window: dict[str, np.ndarray], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Paired bootstrap gains (positive = the candidate is better) per metric and horizon."""
    out: dict[str, Any] = {}
    for baseline, candidate in pairs:
        block = {}
        for key, values in per_window.items():
            name, metric, h = key.split("|")
            if name == candidate and f"{baseline}|{metric}|{h}" in per_window:
                base = per_window[f"{baseline}|{metric}|{h}"]
                sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0  # gain = baseline error - candidate error
                block[f"{metric}@{h}"] = paired_gain(sign * base, sign * values)
        if block:
            out[f"{candidate} vs {baseline}"] = block
    return out


def best_of_n(task: VideoTask, worlds: dict[str, Any], n_windows: int, samples: int, seed: int, lpips: Any,
              bar: tqdm) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Section 2: best of the first n samples (n = 1, 2, 4, ..., `samples`) by per-window mean MSE and LPIPS;
    and each model's first sample (its frames), which `sampled_section` scores in full."""
    w = task.windows["test"]
    context, future = w.context[:n_windows], w.future[:n_windows]
    actions = task.action_bins.decode(w.action_bins[:n_windows])
    out: dict[str, Any] = {}
    first: dict[str, np.ndarray] = {}
    for name, world in worlds.items():
        scores = {"mse": [], "lpips": []}
        for s in range(samples):
            bar.set_description(f"best-of-{samples}: {name} sample {s + 1}")
            pred = world.rollout(context, actions, [seed + 1000 * (s + 1) + i for i in range(n_windows)], temperature=1.0)
            if s == 0:
                first[name] = pred
            flat = frame_metrics(pred.reshape(-1, *pred.shape[2:]), future.reshape(-1, *future.shape[2:]), lpips)
            for key in scores:
                scores[key].append(flat[key].reshape(n_windows, -1).mean(1))
            bar.update(1)
        curve = {}
        n = 1
        while n <= samples:
            curve[str(n)] = {key: float(np.min(np.stack(v[:n]), 0).mean()) for key, v in scores.items()}
            n *= 2
        out[name] = curve
    return out, first


def sampled_section(task: VideoTask, first: dict[str, np.ndarray], tokenizer: Any, lpips: Any) -> dict[str, Any]:
    """Section 2b, the paper's Table 3 as the paper decodes it: one rollout per window sampled at temperature 1
    (each model's first best-of-N sample). Per model: MSE, PSNR, SSIM, LPIPS at step 1 and averaged over the
    predicted frames (multi-step), the repetition rate; each with its bootstrap interval over windows, and RLVR
    vs base paired (positive: RLVR better)."""
    w = task.windows["test"]
    n, horizon = next(iter(first.values())).shape[:2]
    context, future = w.context[:n], w.future[:n]
    gold_codes = rollout_codes(tokenizer, context, future)
    rows: dict[str, Any] = {}
    per_window: dict[str, dict[str, np.ndarray]] = {}
    for name, pred in first.items():
        flat = frame_metrics(pred.reshape(-1, *pred.shape[2:]), future.reshape(-1, *future.shape[2:]), lpips)
        values = {}
        for metric in PIXEL_METRICS:
            v = flat[metric].reshape(n, horizon)
            values[f"{metric}@1"], values[f"{metric}@1-{horizon}"] = v[:, 0], v.mean(1)
        values["repetition"] = repeated_rollouts(rollout_codes(tokenizer, context, pred), gold_codes).astype(np.float64)
        per_window[name] = values
        rows[name] = {key: _ci(v) for key, v in values.items()}
    gains_block = {}
    if {"base", "RLVR"} <= set(per_window):
        for key, base in per_window["base"].items():
            sign = -1.0 if key.split("@")[0] in HIGHER_IS_BETTER else 1.0
            gains_block[key] = paired_gain(sign * base, sign * per_window["RLVR"][key])
    return {"horizon": int(horizon), "rows": rows, "gains": {"RLVR vs base": gains_block} if gains_block else {}}


def far_targets(task: VideoTask, worlds: dict[str, Any], scene: str, starts: int, seed: int, bar: tqdm) -> dict[str, Any]:
    """Section 3: each of four far targets held 3 steps from `starts` held-out frames; share within 3 px."""
    if scene not in ("pusht", "arm"):
        return {}
    from rlvr_sim.metrics.pusht_pixels import EDGE_TARGETS

    targets = EDGE_TARGETS if scene == "pusht" else ARM_TARGETS
    w = task.windows["test"]
    firsts = w.context[np.linspace(0, len(w.context) - 1, starts).astype(int)]
    frames = np.repeat(firsts, len(targets), axis=0)
    actions = np.repeat(np.tile(targets, (starts, 1))[:, None], 3, axis=1)
    size = frames.shape[1]
    wanted = actions[:, -1] * size / 512.0
    out: dict[str, Any] = {"runs": len(frames), "targets": targets.tolist()}
    for name, world in worlds.items():
        bar.set_description(f"far targets: {name}")
        pred = world.rollout(frames, actions, [seed + i for i in range(len(frames))], temperature=0.0,
                             median=world.serves_median)
        error = tracked_error(scene, pred[:, -1], wanted)
        out[name] = {"within_3px_pct": float(100 * np.mean(error <= 3.0)), "median_px": float(np.median(error)),
                     "per_target_within_3px_pct": [float(100 * np.mean(error[i :: len(targets)] <= 3.0))
                                                   for i in range(len(targets))],
                     **tour(world, firsts, scene, seed)}
        bar.update(1)
    return out


def tracked_error(scene: str, frames: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Pixels from the scene's actuated object (judged in `frames`) to `wanted`; MISSING_PX where it is not found."""
    where = scene_objects(scene, frames)[TRACKED[scene]]
    return np.nan_to_num(np.linalg.norm(where - wanted, axis=-1), nan=MISSING_PX)


def tour(world: Any, frames: np.ndarray, scene: str, seed: int) -> dict[str, Any]:
    """The scene's tour from each frame: its targets in turn, 3 steps each, no reset; share within 3 px per leg
    and share of starts within 3 px at the end of every leg."""
    legs = TOURS[scene]
    actions = np.repeat(np.repeat(legs, 3, axis=0)[None], len(frames), axis=0)
    pred = world.rollout(frames, actions, [seed + i for i in range(len(frames))], temperature=0.0,
                         median=world.serves_median)
    size = frames.shape[1]
    ok_arr = np.stack([tracked_error(scene, pred[:, 3 * leg + 2], target * size / 512.0) <= 3.0
                       for leg, target in enumerate(legs)], 1)
    return {"tour_within_3px_pct": [float(100 * v) for v in ok_arr.mean(0)],
            "tour_every_leg_pct": float(100 * ok_arr.all(1).mean()), "tour": legs.tolist()}


PUSHED = {"pusht": "block", "arm": "puck"}  # the object the agent pushes, per judged scene
STILL_PX = 1.0  # a pushed object within this many px of its anchor position counts as still


def still_and_moved(task: VideoTask, scene: str, n: int, h: int, per_window: dict[str, np.ndarray],
                    rows: list[str]) -> dict[str, Any]:
    """Section 4: each row's pushed-object error at horizon `h` over windows where it truly stayed still / moved."""
    if scene not in PUSHED:
        return {}
    w, key = task.windows["test"], PUSHED[scene]
    anchor = scene_objects(scene, w.context[:n])[key]
    truth = scene_objects(scene, w.future[:n, h - 1])[key]
    moved = np.nan_to_num(np.linalg.norm(truth - anchor, axis=-1), nan=np.inf) > STILL_PX
    out: dict[str, Any] = {"object": key, "horizon": h, "still": int((~moved).sum()), "moved": int(moved.sum())}
    for name in rows:
        values = per_window.get(f"{name}|{key}_px|{h}")
        if values is None:
            continue
        out[name] = {group: _ci(values[mask]) if mask.any() else None
                     for group, mask in (("still", ~moved), ("moved", moved))}
    return out


def _fmt(entry: dict[str, float], digits: int) -> str:
    return f"{entry['mean']:.{digits}f} [{entry['low']:.{digits}f}, {entry['high']:.{digits}f}]"


def sampled_markdown(sampled: dict[str, Any]) -> list[str]:
    """The sampled-rollout table (the paper's Table 3 decoding) and RLVR vs base, paired."""
    h = sampled["horizon"]
    scale = {"mse": (1e3, 2), "psnr": (1.0, 1), "ssim": (100.0, 1), "lpips": (100.0, 2)}
    keys = [f"{m}@{span}" for span in ("1", f"1-{h}") for m in PIXEL_METRICS]
    lines = ["", "## Sampled at temperature 1, one rollout per window (the paper's Table 3 decoding)", "",
             f"Step 1, then the mean over steps 1-{h} (multi-step); MSE x1e3, SSIM x100, LPIPS x100; repetition: share "
             "of rollouts that repeat a frame while the truth changed.", "",
             "| model | " + " | ".join(k.replace("@", " ") for k in keys) + " | repetition |",
             "|---|" + "---|" * (len(keys) + 1)]
    for name, row in sampled["rows"].items():
        cells = [_fmt({s: scale[k.split("@")[0]][0] * v for s, v in row[k].items()}, scale[k.split("@")[0]][1])
                 for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {_fmt(row['repetition'], 3)} |")
    for pair, block in sampled["gains"].items():
        cells = [f"{key} {v['gain']:+.4g} [{v['low']:+.4g}, {v['high']:+.4g}]" for key, v in block.items()]
        lines += ["", f"- **{pair}** (paired; positive: RLVR better): " + "; ".join(cells)]
    return lines


def markdown(results: dict[str, Any]) -> str:
    """The tables of `results` (rollouts at each horizon, gains, best-of-N, far targets)."""
    lines = [f"# Visual world model: {results['scene']} ({results['windows']} held-out windows)", ""]
    rows = results["rollouts"]
    objects = [k for k in next(iter(rows.values()))[str(results["horizons"][0])] if k not in PIXEL_METRICS + ("mae",)]
    for h in results["horizons"]:
        lines += [f"## Step {h}" + (" (single step)" if h == 1 else ""), "",
                  "| row | MSE x1e3 | PSNR | SSIM | LPIPS x100 | " + " | ".join(objects) + " |",
                  "|---|---|---|---|---|" + "---|" * len(objects)]
        for name, row in rows.items():
            at = row[str(h)]
            cells = [_fmt({k: 1e3 * v for k, v in at["mse"].items()}, 2), _fmt(at["psnr"], 1), _fmt(at["ssim"], 3),
                     _fmt({k: 100 * v for k, v in at["lpips"].items()}, 1)] + [_fmt(at[k], 2) for k in objects]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Repetition", "", "| row | repetition rate (tokens) | near-copy rate (pixels) |", "|---|---|---|"]
    lines += [f"| {name} | {row['repetition_rate']:.3f} | {row['near_copy_rate']:.3f} |" for name, row in rows.items()]
    lines += ["", "## Paired gains (positive: the first row is better; 95% bootstrap interval)", ""]
    for pair, block in results["gains"].items():
        cells = [f"{key} {v['gain']:+.4g} [{v['low']:+.4g}, {v['high']:+.4g}]" for key, v in block.items()]
        lines.append(f"- **{pair}**: " + "; ".join(cells))
    if results.get("best_of_n"):
        lines += ["", "## Best-of-N (temperature 1; the best of n samples per window, mean over windows)", "",
                  "| model | n | MSE x1e3 | LPIPS x100 |", "|---|---|---|---|"]
        for name, curve in results["best_of_n"].items():
            lines += [f"| {name} | {n} | {1e3 * v['mse']:.3f} | {100 * v['lpips']:.2f} |" for n, v in curve.items()]
    if results.get("sampled"):
        lines += sampled_markdown(results["sampled"])
    split = results.get("still_moved")
    if split:
        lines += ["", f"## The {split['object']} at step {split['horizon']}: still vs moved (error px, mean [95% CI])", "",
                  f"| row | {split['object']} still ({split['still']} windows) | {split['object']} moved "
                  f"({split['moved']} windows) |", "|---|---|---|"]
        lines += [f"| {name} | " + " | ".join(_fmt(v[g], 2) if v[g] else "-" for g in ("still", "moved")) + " |"
                  for name, v in split.items() if isinstance(v, dict)]
    if results.get("far_targets"):
        far = results["far_targets"]
        lines += ["", f"## Four far targets, each held 3 steps ({far['runs']} runs); the tour of them without a reset", "",
                  "| model | within 3 px | median px | per target (%) | tour: per leg (%) | tour: every leg |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {name} | {v['within_3px_pct']:.1f}% | {v['median_px']:.2f} | "
                  f"{', '.join(f'{x:.0f}' for x in v['per_target_within_3px_pct'])} | "
                  + (f"{', '.join(f'{x:.0f}' for x in v['tour_within_3px_pct'])} | {v['tour_every_leg_pct']:.0f}% |"
                     if "tour_within_3px_pct" in v else "- | - |")
                  for name, v in far.items() if isinstance(v, dict)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="episode folder the checkpoints were trained on (npz or LeRobot)")
    parser.add_argument("--base", required=True, help="MLE checkpoint (path or embedded name)")
    parser.add_argument("--rlvr", default=None, help="RLVR checkpoint")
    parser.add_argument("--pose", default=None, help="PushT only: the pose-token checkpoint, as another row")
    parser.add_argument("--compare", action="append", default=[], metavar="NAME=CHECKPOINT",
                        help="another checkpoint as a row, paired with base (repeatable)")
    parser.add_argument("--windows", type=int, default=64, help="held-out windows")
    parser.add_argument("--best-of", type=int, default=8, help="samples per window for the best-of-N curve (0: skip)")
    parser.add_argument("--starts", type=int, default=16, help="start frames for the four-far-targets test")
    parser.add_argument("--camera", default=None, help="LeRobot dataset: camera key (default: its first video feature)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=None, help="output path without extension (default runs/eval/video_visual)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.time()
    from rlvr_sim.resources import display_path, results_dir

    out = Path(args.out) if args.out else results_dir() / "video_visual"
    worlds = {"base": VideoWorldModel(args.base)}
    if args.rlvr:
        worlds["RLVR"] = VideoWorldModel(args.rlvr)
    task, scene = held_out_task(worlds["base"], args.data, max(args.windows, args.starts), args.camera)
    rows = dict(worlds)
    if args.pose:
        rows["pose tokens (PushT)"] = VideoWorldModel(args.pose)
    compared = []
    for spec in args.compare:
        name, sep, checkpoint = spec.partition("=")
        if not sep or not name or not checkpoint or name in rows:
            parser.error(f"--compare takes NAME=CHECKPOINT with a new row name, got {spec!r}")
        rows[name] = VideoWorldModel(checkpoint)
        compared.append(name)
    n = min(args.windows, len(task.windows["test"].context))
    horizons = sorted(h for h in {1, 4, task.horizon} if h <= task.horizon)
    lpips = perceptual_metric()
    total = len(rows) + len(worlds) * args.best_of + (len(rows) if scene in ("pusht", "arm") else 0)
    with tqdm(total=total, desc="video_visual", unit="part") as bar:
        rollouts, per_window = rollout_section(task, rows, scene, n, horizons, args.seed, lpips, bar)
        pairs = [("copy-last-frame", name) for name in rows] + [("base", "RLVR")] * ("RLVR" in worlds)
        pairs += [(name, "base") for name in compared]
        results: dict[str, Any] = {
            "scene": scene, "data": args.data, "windows": n, "horizons": horizons, "lpips_variant": lpips.name,
            "checkpoints": {name: display_path(world.checkpoint) for name, world in rows.items()},
            "rollouts": rollouts, "gains": gains(per_window, pairs)}
        results["best_of_n"], first = best_of_n(task, worlds, n, args.best_of, args.seed, lpips, bar) if args.best_of \
            else ({}, {})
        results["sampled"] = sampled_section(task, first, worlds["base"].tokenizer, lpips) if first else {}
        results.update({
            "far_targets": far_targets(task, rows, scene, args.starts, args.seed, bar),
            "still_moved": still_and_moved(task, scene, n, horizons[-1], per_window, list(rollouts))})
    results["seconds"] = round(time.time() - start, 1)
    write_results(results, out, markdown(results), "evaluations/video_visual.py", argv if argv is not None else sys.argv[1:])
    return results


if __name__ == "__main__":
    main()
