"""Train a visual world model on your own robot video, in one command: tokenizer -> MLE -> RLVR -> package -> evaluate.

    python training/video_pipeline.py --data path/to/episodes --out runs/my_robot
    python training/video_pipeline.py --data path/to/lerobot_dataset --camera observation.images.front --out runs/my_robot

`--data` is an Open-X / RT-1-style folder of `.npz` episodes (`image` (T, H, W, 3) at any resolution, `action`
(T, A) of any size) or a LeRobot dataset folder (v2.1 or v3.0: parquet tables plus mp4 videos;
`rlvr_sim.data.lerobot`). Frames are resized to `--image-size`; the last 10% of episodes (by a seeded split)
are held out from every stage. Stages (each prints its command and shows its own progress bar):
  tokenizer  training/tokenizer.py --kind keypoint: K learned image points per frame, drawn over the anchor frame
  sft        training/sft.py with training/configs/video_visual_sft.yaml (MLE on 1 anchor + `--horizon` frames), in
             the mixed token layout by default (`--layout`: points still in most training transitions generated
             as their change since the previous frame, the rest as coordinates; docs/video.md)
  grpo       training/grpo.py with training/configs/video_visual_grpo.yaml (reward -(MAE + LPIPS) per frame)
  package    OUT/base and OUT/rlvr: self-contained checkpoints (model, tokenizer/, start frames, model card),
             served by gym.make("RLVRWorld-Video-v0", checkpoint="OUT/rlvr")
  evaluate   evaluations/video_visual.py: MSE / PSNR / SSIM / LPIPS / repetition vs copy-last-frame, best-of-N;
             the final table is printed and written to OUT/eval/video_visual.md
The defaults are a CPU budget (about an hour on 2 cores for a few hundred episodes); raise the step counts
on a GPU. Each stage resumes where an interrupted run stopped (`resume: auto`, the tokenizer's --resume).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

STAGES = ("tokenizer", "sft", "grpo", "package", "evaluate")
LAYOUTS = {"absolute": "pose", "delta": "delta", "mixed": "mixed"}  # --layout -> the video task's `layout`

MODEL_CARD = """# {title}

A visual world model trained by `python training/video_pipeline.py {argv}`.

- Model: Llama causal LM ({params:,} parameters) over [keypoint coordinate codes ({bins}) | action bins
  ({action_dim} x 256) | PAD, BOS]; stage `{stage}`, {steps} steps; {layout} layout.
- Tokenizer (`tokenizer/`): {keypoints} learned image points per frame (`rlvr_sim.models.keypoint_tokenizer`),
  drawn over the anchor frame. Held-out reconstruction MSE one step ahead {tok1:.2e} vs copy-last-frame {copy1:.2e}.
- Data: `{data}`, {image_size}x{image_size} frames, frame skip {frame_skip}, scene `{scene}`.
- `start_frames.npz`: held-out start frames with their true next frames and actions (for reset and the viewer).
"""


def _run(command: list[str]) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def write_start_frames(data: str, out: Path, image_size: int, frame_skip: int, camera: str | None,
                       steps: int = 16, max_episodes: int = 16) -> None:
    """Held-out start frames with their true next frames and actions (`steps` or as many as the episodes hold)."""
    from rlvr_sim.data.episodes import episode_paths, load_episodes, split_paths

    paths = episode_paths(data, **({"camera": camera} if camera else {}))
    test = split_paths(paths, 0.1, 0)["test"][:max_episodes]
    episodes = load_episodes(test, image_size, frame_skip)
    steps = min(steps, min(len(ep) for ep in episodes) - 1)
    np.savez_compressed(out, image=np.stack([ep.images[0] for ep in episodes]),
                        future=np.stack([ep.images[1 : steps + 1] for ep in episodes]),
                        action=np.stack([ep.actions[:steps] for ep in episodes]))


def package(run: Path, out: Path, tokenizer: Path, args: argparse.Namespace, title: str) -> None:
    """A self-contained checkpoint: the run's final model, the tokenizer, start frames and a model card."""
    from safetensors import safe_open

    from rlvr_sim.models.lm import read_meta

    final = run / "final"
    if not (final / "model.safetensors").is_file():
        raise FileNotFoundError(f"{final} has no model.safetensors: run the training stage first")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(final, out)
    shutil.copytree(tokenizer, out / "tokenizer", ignore=shutil.ignore_patterns("*.npy", "train_state.pt"))
    meta = read_meta(out)
    meta["video_settings"].update(tokenizer_dir="tokenizer", data_dir=str(args.data))
    (out / "rlvr_sim.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    write_start_frames(args.data, out / "start_frames.npz", args.image_size, args.frame_skip, args.camera)
    with safe_open(str(out / "model.safetensors"), "pt") as weights:
        params = sum(int(np.prod(weights.get_slice(k).get_shape())) for k in weights.keys())
    tok = json.loads((out / "tokenizer" / "tokenizer_config.json").read_text())
    codec = meta["video_codec"]
    (out / "README.md").write_text(MODEL_CARD.format(
        title=title, argv=" ".join(args.argv), params=params, bins=codec["codebook_size"], action_dim=codec["action_dim"],
        stage=meta.get("stage", "?"), steps=meta.get("steps", 0),
        layout=_layout_name(codec), keypoints=tok["config"]["keypoints"],
        tok1=tok["report"]["gap1_recon_mse"], copy1=tok["report"]["gap1_copy_mse"], data=args.data,
        image_size=args.image_size, frame_skip=args.frame_skip, scene=args.scene))
    print(f"packaged {run} -> {out}", flush=True)


def _layout_name(codec: dict) -> str:
    slots = codec.get("delta_slots") or []
    if not slots:
        return "absolute"
    return "delta" if len(slots) == codec["cond_tokens"] else f"mixed (change-coded slots {slots})"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="folder of .npz episodes or a LeRobot dataset folder")
    parser.add_argument("--out", required=True, help="run folder: tokenizer/, sft/, grpo/, base/, rlvr/, eval/")
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated subset of {STAGES}")
    parser.add_argument("--camera", default=None, help="LeRobot camera key (default: the first video feature)")
    parser.add_argument("--scene", default="custom",
                        help="what the frames show: 'pusht' / 'arm' enable their pixel judges in the tables")
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--frame-skip", type=int, default=1, help="model step = this many recorded frames")
    parser.add_argument("--horizon", type=int, default=8, help="frames predicted per training window")
    parser.add_argument("--keypoints", type=int, default=8)
    parser.add_argument("--layout", choices=LAYOUTS, default="mixed",
                        help="frame tokens: each point's coordinates ('absolute'), their change since the previous "
                             "frame ('delta': a still object is the same tokens wherever it lies), or the change for "
                             "the points that stay still in most training transitions and coordinates for the rest "
                             "('mixed')")
    parser.add_argument("--tokenizer-steps", type=int, default=2500)
    parser.add_argument("--sft-steps", type=int, default=800)
    parser.add_argument("--grpo-steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=32, help="SFT batch (windows)")
    parser.add_argument("--eval-windows", type=int, default=64)
    parser.add_argument("--best-of", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        parser.error(f"unknown stages {unknown}; known: {STAGES}")
    if not Path(args.data).is_dir():
        parser.error(f"--data {args.data!r} is not a folder")
    args.stage_list = stages
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out, py, start = Path(args.out), sys.executable, time.time()
    tokenizer = out / "tokenizer"
    task_args = [f"task_args.data_dir={args.data}", f"task_args.tokenizer_dir={tokenizer}",
                 f"task_args.frame_skip={args.frame_skip}", f"task_args.horizon={args.horizon}",
                 f"task_args.scene={args.scene}", f"task_args.cache_dir={out / 'cache'}",
                 f"task_args.layout={LAYOUTS[args.layout]}"]
    task_args += [f"task_args.camera={args.camera}"] if args.camera else []
    if "tokenizer" in args.stage_list:
        _run([py, "training/tokenizer.py", "--kind", "keypoint", "--data", args.data, "--out", str(tokenizer),
              "--image-size", str(args.image_size), "--frame-skip", str(args.frame_skip), "--horizon", str(args.horizon),
              "--keypoints", str(args.keypoints), "--steps", str(args.tokenizer_steps), "--threads", str(args.threads),
              "--resume"] + (["--camera", args.camera] if args.camera else []))
    if "sft" in args.stage_list:
        _run([py, "training/sft.py", "--preset", "training/configs/video_visual_sft.yaml", *task_args,
              f"output_dir={out / 'sft'}", f"steps={args.sft_steps}", f"batch_size={args.batch_size}",
              f"micro_batch_size={args.batch_size}", f"save_every={max(1, args.sft_steps // 8)}"])
    if "grpo" in args.stage_list:
        _run([py, "training/grpo.py", "--preset", "training/configs/video_visual_grpo.yaml", *task_args,
              f"model.name_or_path={out / 'sft' / 'final'}", f"output_dir={out / 'grpo'}", f"steps={args.grpo_steps}",
              f"save_every={max(1, args.grpo_steps // 4)}"])
    if "package" in args.stage_list:
        package(out / "sft", out / "base", tokenizer, args, "Visual world model: base (MLE)")
        package(out / "grpo", out / "rlvr", tokenizer, args, "Visual world model: RLVR (-(MAE + LPIPS))")
    if "evaluate" in args.stage_list:
        _run([py, "evaluations/video_visual.py", "--data", args.data, "--base", str(out / "base"), "--rlvr",
              str(out / "rlvr"), "--windows", str(args.eval_windows), "--best-of", str(args.best_of),
              "--threads", str(args.threads), "--out", str(out / "eval" / "video_visual")]
             + (["--camera", args.camera] if args.camera else []))
    print(json.dumps({"stages": args.stage_list, "out": str(out), "minutes": round((time.time() - start) / 60, 1)}),
          flush=True)


if __name__ == "__main__":
    main()
