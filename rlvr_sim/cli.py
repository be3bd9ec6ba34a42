"""`rlvr-sim` console script: one entry for every capability (each subcommand forwards to its module)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable

# subcommand -> (module, function, help); the function takes argv (list[str]) and returns an exit code
FORWARDED: dict[str, tuple[str, str, str]] = {
    "collect": ("rlvr_sim.training.collect", "main", "collect transitions from a ground-truth world"),
    "view": ("rlvr_sim.viewer", "main", "open the pygame viewer on a learned video simulator"),
}
EVALUATIONS = {
    "textgame": "rlvr_sim.evaluations.textgame",
    "video": "rlvr_sim.evaluations.video",
    "web": "rlvr_sim.evaluations.web",
    "web-agent": "rlvr_sim.evaluations.web_agent",
    "real2sim": "rlvr_sim.evaluations.real2sim",
}


def _call(module: str, function: str, argv: list[str]) -> int:
    result = getattr(importlib.import_module(module), function)(argv)
    return result if isinstance(result, int) else 0  # evaluation mains return their results (a dict): success


def reward_curve(history: list[dict], width: int = 40) -> str:
    """A text plot of the mean sampled reward per GRPO step."""
    lines = []
    for row in history[:: max(1, len(history) // 30)]:
        bar = "#" * round(max(0.0, min(1.0, row["reward"])) * width)
        lines.append(f"step {row['step']:>3}  reward {row['reward']:.3f}  kl {row['kl']:.4f}  |{bar:<{width}}|")
    return "\n".join(lines)


FULL_GRPO_STEPS = 120  # the demo's GRPO at full length; measured (one thread, loaded 2-core CPU): 0.42 -> 0.75 in 59 s
DEMO_GRPO_STEPS = 8  # the default: the loop runs live in seconds; the gain needs the full length


def addition_demo(output_dir: str, grpo_steps: int = DEMO_GRPO_STEPS, seed: int = 0) -> tuple[str, dict]:
    """SFT a tiny Llama briefly on the addition test task, then GRPO it; returns the printed report.

    Training shows its progress bar (SFT ~30 steps, then GRPO) so a wait is never silent.
    """
    from rlvr_sim.config import load_config
    from rlvr_sim.rl.trainer import run_training

    model = {"preset": "tiny-5m", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 2, "max_positions": 32}
    common = {"task": "addition", "task_args": {"digits": 1}, "seed": seed, "progress": True, "eval_examples": 100}
    sft = load_config(None, [], **common, model=model, output_dir=f"{output_dir}/sft", steps=30, lr=3e-3,
                      batch_size=32, micro_batch_size=32)
    sft_summary = run_training("sft", sft, command="rlvr-sim demo (SFT warm start)")
    grpo = load_config(None, [], **common, model={"name_or_path": f"{output_dir}/sft/final"},
                       output_dir=f"{output_dir}/grpo", steps=grpo_steps, lr=1e-3, batch_size=64,
                       micro_batch_size=64, group_size=8)
    grpo_summary = run_training("grpo", grpo, command="rlvr-sim demo (GRPO)")
    short = grpo_steps < FULL_GRPO_STEPS
    report = [
        f"== GRPO on the addition test task (tiny Llama, exact-match reward): {grpo_steps} steps, live ==",
        f"SFT warm start: greedy accuracy {sft_summary['final_eval_reward']:.2f} after {sft.steps} steps",
        reward_curve(grpo_summary["history"]),
        f"greedy accuracy: {grpo_summary['initial_eval_reward']:.2f} -> {grpo_summary['final_eval_reward']:.2f} "
        f"({grpo_summary['wall_seconds']:.0f} s of GRPO)",
    ]
    if short:
        report.append(f"A short run: {grpo_steps} of the {FULL_GRPO_STEPS} steps of the full run (rlvr-sim demo "
                      f"--grpo-steps {FULL_GRPO_STEPS}), which took greedy accuracy 0.42 -> 0.75 in 59 s of GRPO "
                      "on a loaded 2-core CPU.")
    return "\n".join(report), grpo_summary


def _headline(name: str) -> str:
    """The README's headline table of one modality, from the committed results that ship with the package."""
    import json

    from rlvr_sim.evaluations import report
    from rlvr_sim.resources import packaged_results

    for file, render, script in report.HEADLINES_BY_MODALITY:
        if file == name:
            path = packaged_results(file)
            if not path.exists():
                return f"No committed results yet: run python {script}"
            return "\n".join([f"Embedded models ({script}; every table: docs/results.md):",
                              *render(json.loads(path.read_text()))])
    raise KeyError(name)


def textgame_section(seed: int) -> str:
    """The text-game world model next to the real game, then the committed headline table."""
    from rlvr_sim.envs.textgame.demo import run_demo

    return f"{run_demo(seed=seed)}\n\n{_headline('textgame.json')}"


def web_section(seed: int) -> str:
    """One real-browser MPC episode, then the committed headline table of the web world models."""
    from rlvr_sim.envs.web.demo import run_demo

    print("starting the local site and Chromium for one MPC episode (up to 8 steps) ...", flush=True)
    return f"{run_demo(seed=seed)}\n\n{_headline('web.json')}"


def video_section(out_gif: str, seed: int) -> str:
    """Drive the learned PushT simulator (four-edge test, held-out replay), then the committed headline table."""
    from rlvr_sim.envs.video.demo import run_demo

    return f"{run_demo(out_gif=out_gif, seed=seed)}\n\n{_headline('video.json')}"


def demo(argv: list[str]) -> int:
    """The README's main job: every capability on the embedded default models, each section timed."""
    parser = argparse.ArgumentParser(prog="rlvr-sim demo", description=demo.__doc__)
    parser.add_argument("--out", default=None, help="where to write runs and the GIF (default: a temp dir)")
    parser.add_argument("--grpo-steps", type=int, default=DEMO_GRPO_STEPS,
                        help=f"GRPO steps of the addition run ({FULL_GRPO_STEPS} to see the accuracy rise)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if "OMP_NUM_THREADS" not in os.environ:
        # the demo's models are tiny: one thread avoids thread handoffs that cost more than the arithmetic
        # (measured on a loaded 2-core CPU: 30 SFT steps took 2.2 s with one thread, 57 s with two)
        import torch

        torch.set_num_threads(1)
    out = args.out or tempfile.mkdtemp(prefix="rlvr_sim_demo_")
    sections: list[tuple[str, Callable[[], str]]] = [
        ("addition GRPO", lambda: addition_demo(f"{out}/addition", args.grpo_steps, args.seed)[0]),
        ("text-game world model", lambda: textgame_section(args.seed)),
        ("video world model", lambda: video_section(f"{out}/pusht_rollout.gif", args.seed)),
        ("web world model and MPC agent", lambda: web_section(args.seed)),
    ]
    failures, began = 0, time.perf_counter()
    for title, section in sections:
        print(f"\n######## {title} ########", flush=True)
        start = time.perf_counter()
        try:
            print(section(), flush=True)
        except Exception:  # noqa: BLE001 - report every section, then fail at the end
            failures += 1
            traceback.print_exc()
        print(f"[{title}: {time.perf_counter() - start:.1f} s]", flush=True)
    print(f"\noutputs in {out}\ndemo finished in {time.perf_counter() - began:.1f} s"
          + (f" with {failures} failed section(s)" if failures else ""))
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ["demo", "sft", "grpo", "eval", "play", *FORWARDED]
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        lines = [
            "usage: rlvr-sim COMMAND [args]",
            "  demo                      the main job on the embedded models (addition GRPO, text game, video, web)",
            "  sft | grpo                training/sft.py, training/grpo.py (--task NAME --preset YAML key=value ...)",
            f"  eval {{{','.join(EVALUATIONS)}}}  evaluation scripts",
            "  play textgame             play the learned text-game simulator in the terminal",
        ] + [f"  {name:<25} {help_}" for name, (_, _, help_) in FORWARDED.items()]
        print("\n".join(lines))
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    command, rest = argv[0], argv[1:]
    if command == "demo":
        return demo(rest)
    if command in ("sft", "grpo"):
        from rlvr_sim.rl.cli import main as train_main

        return train_main(command, rest)
    if command == "eval":
        if not rest or rest[0] not in EVALUATIONS:
            print(f"usage: rlvr-sim eval {{{','.join(EVALUATIONS)}}} [args]", file=sys.stderr)
            return 2
        return _call(EVALUATIONS[rest[0]], "main", rest[1:])
    if command == "play":
        if not rest or rest[0] != "textgame":
            print("usage: rlvr-sim play textgame [args]", file=sys.stderr)
            return 2
        return _call("rlvr_sim.viewer.textgame_play", "main", rest[1:])
    module, function, _ = FORWARDED[command]
    return _call(module, function, rest)


if __name__ == "__main__":
    sys.exit(main())
