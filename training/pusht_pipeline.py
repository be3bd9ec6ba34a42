"""The whole PushT video pipeline in one command: collect -> tokenizer -> MLE -> RLVR -> package -> evaluate.

    python training/pusht_pipeline.py                      # everything, CPU presets
    python training/pusht_pipeline.py --stages package,evaluate   # re-package runs/ and re-evaluate

Stages (each skips nothing silently: it runs or fails with the error):
  collect   training/collect.py --task pusht --out data/pusht2 --episodes 720 --seed 1 --mix MIX
            (scripted pushers of graded skill + jitter and random-target policies: actions cover the arena),
            then --out data/pusht_push --episodes 588 --seed 7 --mix PUSH_MIX (pushing-heavy, training only)
  tokenizer training/tokenizer.py --kind pose --out assets/pusht_pose/tokenizer (PushT's five pose tokens;
            writes its held-out reconstruction report)
  sft       training/sft.py --preset training/configs/pusht_pose_sft_rel.yaml (2000 steps from scratch in the
            relational layout: the T's motion in its own body frame; symmetries, translations), then
            training/configs/pusht_pose_sft_rel_cont.yaml (1000 more at a lower LR); from that,
            training/configs/pusht_pose_sft_rel_ordinal.yaml (1200 more with value-linear input embeddings: the
            model to plan with)
  grpo      training/grpo.py with pusht_pose_grpo_object_rel.yaml (object-level reward) and
            pusht_pose_grpo_perceptual_rel.yaml (-(MAE + LPIPS)), both from the MLE model
  package   copies the final checkpoints to assets/pusht_pose_{base,rlvr,rlvr_perceptual,ordinal} with the tokenizer,
            start frames from held-out episodes and a model card (README.md) each
  evaluate  evaluations/video.py (object-level and pixel tables, action-response tests, GIF and picture)
  support   (re)writes support.npz into each packaged checkpoint under --assets (`package` writes it too): the
            training frames' pose codes and the calibrated out-of-support threshold real2sim.py --rollout reads
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

STAGES = ("collect", "tokenizer", "sft", "grpo", "package", "evaluate", "support")
ASSETS = Path("assets")
MIX = "expert:2,good:2,mediocre:2,poor:2,jitter:2,random:3"
PUSH_MIX = "expert:3,good:3,mediocre:3,poor:3,jitter:1"  # data/pusht_push: more contact, training only
GRPO_KINDS = ("object", "perceptual")
BASE_RUN = "pusht_pose_sft_rel_cont"  # the MLE run the RLVR runs start from and `package` embeds as the base
ORDINAL_RUN = "pusht_pose_sft_rel_ordinal"  # its value-linear-embedding continuation (assets/pusht_pose_ordinal)


def _run(command: list[str]) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def write_start_frames(data_dir: str, out: Path, frame_skip: int, image_size: int, steps: int = 16,
                       max_episodes: int = 16, test_fraction: float = 0.1, split_seed: int = 0) -> None:
    """Embed short held-out sequences (start frame, true next frames, actions) for reset and the demo."""
    from rlvr_sim.data.episodes import episode_paths, load_episodes, split_paths

    test = split_paths(episode_paths(data_dir), test_fraction, split_seed)["test"][:max_episodes]
    starts, futures, actions = [], [], []
    for ep in load_episodes(test, image_size, frame_skip):
        if len(ep) > steps:
            starts.append(ep.images[0])
            futures.append(ep.images[1 : steps + 1])
            actions.append(ep.actions[:steps])
    np.savez_compressed(out, image=np.stack(starts), future=np.stack(futures), action=np.stack(actions))


def write_support(checkpoint: Path, data_dir: str | None = None) -> None:
    """`<checkpoint>/support.npz`: the judged pose codes of the training split's frames and the distance
    threshold calibrated on the test split, read by `evaluations/real2sim.py --rollout` to flag policies
    whose learned-simulator rollouts leave the data's support (`rlvr_sim.evaluations.real2sim.build_support`)."""
    from rlvr_sim.data.support import build_support

    build_support(checkpoint, data_dir)


MODEL_CARD = """# {title}

{summary}

- Model: Llama causal LM ({params:,} parameters) over {vocabulary},
  trained by `rlvr_sim` (`{stage}` stage, {steps} steps, {wall:.0f} s wall time on a shared 2-core CPU).
- Tokenizer (`tokenizer/`): the PushT pose tokenizer (`rlvr_sim.models.pose_tokenizer`): five tokens per
  frame (agent x, y; block x, y, angle; {bins} bins each) read off the pixels by the pixel judge, decoded by
  drawing the scene as gym-pusht draws it. Held-out reconstruction: whole-frame MSE {tok1} one step ahead
  vs copy-last-frame {copy1}; median agent / block error {agent:.2f} / {block:.2f} px at 64x64, angle
  {angle:.2f} degrees against gym-pusht's true state.
- Data: PushT episodes from `gym_pusht/PushT-v0`: `python training/collect.py --task pusht --out data/pusht2
  --episodes 720 --seed 1 --mix {mix}`, 64x64 frames, frame skip {frame_skip} (0.4 s per step), held-out
  test split 10% of episodes (split seed 0); for training only also `python training/collect.py --task pusht
  --out data/pusht_push --episodes 588 --seed 7 --mix {push_mix}` where the preset names it.
- Action ranges (256 uniform bins per dimension): see `rlvr_sim.json` -> `action_bins`.
- `start_frames.npz`: {n_start} held-out start frames with their true next {n_steps} frames and actions.
- Exact command: `{command}`
- Results: `evaluations/results/video.md` (generated by `python evaluations/video.py`).
"""


def _vocabulary(codec: dict) -> str:
    """The token layout in words, for the model card (sizes read from the checkpoint's codec)."""
    from rlvr_sim.tasks.video import REL_SLOTS, VideoCodec

    c = VideoCodec(**codec)
    actions = f"action bins ({c.action_dim} x {c.num_bins})"
    if c.relational:
        return (f"[pose codes ({c.codebook_size}) | T displacement in its body frame (du, dv, dtheta) | {actions} | "
                f"agent and target in the T's body frame ({len(REL_SLOTS)} x {c.rel_size}) | PAD, BOS] "
                "(relational layout, `rlvr_sim.tasks.video.VideoCodec`)")
    return f"[pose codes ({c.codebook_size}) | {actions} | PAD, BOS]"


def package(run_dir: Path, out: Path, tokenizer_dir: Path, data_dir: str, title: str, summary: str) -> None:
    """Copy a training run's final checkpoint into assets with tokenizer, start frames and model card."""
    from rlvr_sim.models.lm import read_meta

    final = run_dir / "final"
    if not (final / "model.safetensors").is_file():
        raise FileNotFoundError(f"{final} has no model.safetensors: run the training stage first")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(final, out, ignore=shutil.ignore_patterns("*.tmp"))
    shutil.copytree(tokenizer_dir, out / "tokenizer", ignore=shutil.ignore_patterns("*.npy"))
    meta = read_meta(out)
    meta["video_settings"]["tokenizer_dir"] = "tokenizer"
    meta["video_settings"]["data_dir"] = data_dir
    (out / "rlvr_sim.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    settings = meta["video_settings"]
    write_start_frames(data_dir, out / "start_frames.npz", settings["frame_skip"], settings["image_size"])
    write_support(out, data_dir)
    with np.load(out / "start_frames.npz") as start:
        n_start, n_steps = start["future"].shape[:2]
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as weights:
        params = sum(int(np.prod(weights.get_slice(k).get_shape())) for k in weights.keys())
    tok = json.loads((out / "tokenizer" / "tokenizer_config.json").read_text())
    report = tok["report"]
    card = MODEL_CARD.format(tok1=f"{report['gap1_recon_mse']:.2e}", copy1=f"{report['gap1_copy_mse']:.2e}",
                             agent=report.get("recon_agent_px_median", float("nan")),
                             block=report.get("recon_block_px_median", float("nan")),
                             angle=report.get("recon_angle_deg_median", float("nan")),
                             vocabulary=_vocabulary(meta["video_codec"]), bins=tok["config"]["bins"], mix=MIX, push_mix=PUSH_MIX,
                             title=title, summary=summary, params=params, stage=meta.get("stage", "?"),
                             steps=meta.get("steps", 0), wall=float(meta.get("wall_seconds", 0.0)),
                             frame_skip=settings["frame_skip"], n_start=n_start, n_steps=n_steps,
                             command=meta.get("command", ""))
    (out / "README.md").write_text(card)
    print(f"packaged {run_dir} -> {out}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated subset of {STAGES}")
    parser.add_argument("--data", default="data/pusht2")
    parser.add_argument("--episodes", type=int, default=720)
    parser.add_argument("--runs", default="runs")
    parser.add_argument("--assets", default=str(ASSETS),
                        help="where `package` writes pusht_pose_{base,rlvr,rlvr_perceptual,ordinal} (default: assets/)")
    parser.add_argument("--out", default=None,
                        help="output path of `evaluate` without extension (default: evaluations/results/video)")
    args = parser.parse_args(argv)
    assets = Path(args.assets)
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        raise SystemExit(f"unknown stages {unknown}; known: {STAGES}")
    runs = Path(args.runs)
    tokenizer_dir = assets / "pusht_pose" / "tokenizer"
    py = sys.executable
    data_args = [f"task_args.data_dir={args.data}", f"task_args.tokenizer_dir={tokenizer_dir}"]
    start = time.time()
    if "collect" in stages:
        _run([py, "training/collect.py", "--task", "pusht", "--out", args.data, "--episodes", str(args.episodes),
              "--seed", "1", "--mix", MIX])
        _run([py, "training/collect.py", "--task", "pusht", "--out", "data/pusht_push", "--episodes", "588",
              "--seed", "7", "--mix", PUSH_MIX])
    if "tokenizer" in stages:
        _run([py, "training/tokenizer.py", "--kind", "pose", "--data", args.data, "--out", str(tokenizer_dir)])
    if "sft" in stages:
        _run([py, "training/sft.py", "--task", "pusht", "--preset", "training/configs/pusht_pose_sft_rel.yaml",
              f"output_dir={runs / 'pusht_pose_sft_rel'}", *data_args])
        _run([py, "training/sft.py", "--task", "pusht", "--preset", "training/configs/pusht_pose_sft_rel_cont.yaml",
              f"model.name_or_path={runs / 'pusht_pose_sft_rel' / 'final'}", f"output_dir={runs / BASE_RUN}",
              *data_args])
        _run([py, "training/sft.py", "--task", "pusht", "--preset", "training/configs/pusht_pose_sft_rel_ordinal.yaml",
              f"model.name_or_path={runs / BASE_RUN / 'final'}", f"output_dir={runs / ORDINAL_RUN}", *data_args])
    if "grpo" in stages:
        for kind in GRPO_KINDS:
            _run([py, "training/grpo.py", "--task", "pusht", "--preset",
                  f"training/configs/pusht_pose_grpo_{kind}_rel.yaml", f"model.name_or_path={runs / BASE_RUN / 'final'}",
                  f"output_dir={runs / f'pusht_pose_grpo_{kind}_rel'}", *data_args])
    if "package" in stages:
        package(runs / BASE_RUN, assets / "pusht_pose_base", tokenizer_dir, args.data,
                "PushT video world model: base (MLE)",
                "Maximum-likelihood pre-training on 16-step windows (1 anchor frame, 16 future frames, the true "
                "actions in between) in the relational layout (each frame: the agent's pose codes and the T's "
                "displacement in its own body frame; after each frame the action and the agent's and the "
                "target's positions in the T's body frame), from scratch, on the windows under the eight "
                "symmetries of the square arena with translated copies and the pushing-heavy episodes: 2000 steps "
                "(`training/configs/pusht_pose_sft_rel.yaml`), then 1000 at a lower LR "
                "(`training/configs/pusht_pose_sft_rel_cont.yaml`).")
        package(runs / "pusht_pose_grpo_object_rel", assets / "pusht_pose_rlvr", tokenizer_dir, args.data,
                "PushT video world model: RLVR (object-level reward)",
                "GRPO from the base model on 8-step rollouts with reward -(agent px + block px + angle deg / 5), "
                "read by the pixel judge on the decoded frames (`training/configs/pusht_pose_grpo_object_rel.yaml`).")
        package(runs / "pusht_pose_grpo_perceptual_rel", assets / "pusht_pose_rlvr_perceptual", tokenizer_dir, args.data,
                "PushT video world model: RLVR (perceptual reward)",
                "GRPO from the base model on 8-step rollouts with the paper's reward -(MAE + LPIPS) "
                "(`training/configs/pusht_pose_grpo_perceptual_rel.yaml`).")
        package(runs / ORDINAL_RUN, assets / "pusht_pose_ordinal", tokenizer_dir, args.data,
                "PushT video world model: value-linear embeddings (MLE)",
                "`pusht_pose_base` continued 1200 MLE steps with value-linear input embeddings for every ordered "
                "token bin, each group's rows trained as the coefficients of a line in the bin's value "
                "(`ordinal_embeddings: true`, `rlvr_sim.models.ordinal`; "
                "`training/configs/pusht_pose_sft_rel_ordinal.yaml`), on data/pusht2 only: the model for planning "
                "(docs/planning.md).")
    if "evaluate" in stages:
        command = [py, "evaluations/video.py", "--data", args.data, "--base", str(assets / "pusht_pose_base"),
                   "--rlvr", str(assets / "pusht_pose_rlvr"),
                   f"--extra=RLVR (MAE+LPIPS)={assets / 'pusht_pose_rlvr_perceptual'}"]
        _run(command + (["--out", args.out] if args.out else []))
    if "support" in stages and "package" not in stages:  # `package` writes it; this re-creates it in place
        for name in ("pusht_pose_base", "pusht_pose_rlvr", "pusht_pose_rlvr_perceptual", "pusht_pose_ordinal"):
            if (assets / name / "rlvr_sim.json").is_file():
                write_support(assets / name, args.data)
            else:
                print(f"support: no checkpoint at {assets / name}, skipped", flush=True)
    print(json.dumps({"stages": stages, "minutes": round((time.time() - start) / 60, 1)}), flush=True)


if __name__ == "__main__":
    main()
