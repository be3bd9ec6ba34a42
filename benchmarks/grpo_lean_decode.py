"""Seconds per GRPO step of our trainer with the sampler's lean decode step (`rlvr_sim.models.lean_decode`)
against the same trainer with its decode steps through transformers' own Llama forward
(`RLVR_SIM_LEAN_DECODE=0`): same model, same seed, same task, so the same samples (equal work). The two
alternate in one process, `--rounds` runs each; the first step of each run is not timed.

    python benchmarks/grpo_lean_decode.py --out benchmarks/results/grpo_lean_decode.json      # CPU, tiny-5m
    python benchmarks/grpo_lean_decode.py --device cuda --preset paper-138m --precision bf16 \\
        --batch-size 64 --group-size 8 --digits 8                                               # a GPU
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
from typing import Any

import torch

from rlvr_sim.config import load_config
from rlvr_sim.models.lean_decode import lean_decode
from rlvr_sim.reporting import emit_json
from rlvr_sim.rl.trainer import Trainer

LABELS = {"lean": True, "transformers_forward": False}  # label -> lean decode step on


def one_run(label: str, args: argparse.Namespace, work: str) -> dict[str, Any]:
    config = load_config(None, [], task="addition", task_args={"digits": args.digits},
                         model={"preset": args.preset, "max_positions": 128}, lr=1e-4, seed=args.seed,
                         mixed_precision=args.precision, eval_examples=0, progress=False,
                         steps=args.steps, batch_size=args.batch_size, micro_batch_size=args.batch_size,
                         group_size=args.group_size, output_dir=os.path.join(work, label))
    with lean_decode(LABELS[label]):
        trainer = Trainer(config, "grpo", command="benchmarks/grpo_lean_decode.py")
        history = trainer.run()["history"]
    seconds = [h["seconds"] for h in history[1:]]
    rows = args.batch_size * args.group_size
    tokens = [h["response_tokens"] * rows for h in history[1:]]
    return {"seconds_per_step": seconds, "generated_tokens_per_step": tokens,
            "response_tokens": [h["response_tokens"] for h in history], "device": str(trainer.device)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--preset", default="tiny-5m")
    parser.add_argument("--precision", choices=["no", "bf16"], default="no")
    parser.add_argument("--digits", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=4, help="prompts per step")
    parser.add_argument("--group-size", type=int, default=5)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be >= 2 (the first step is not timed)")
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        torch.set_num_threads(args.threads)
    elif not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device visible")
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in LABELS}
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            for label in (list(LABELS) if r % 2 == 0 else list(LABELS)[::-1]):
                runs[label].append(one_run(label, args, os.path.join(work, f"{label}-{r}")))
    report: dict[str, Any] = {
        "command": "python " + shlex.join(["benchmarks/grpo_lean_decode.py", *(sys.argv[1:] if argv is None else argv)]),
        "device": runs["lean"][0]["device"] if args.device == "cpu" else torch.cuda.get_device_name(0),
        "preset": args.preset, "precision": args.precision, "digits": args.digits, "prompts": args.batch_size,
        "group_size": args.group_size, "steps": args.steps, "rounds": args.rounds,
        "torch": torch.__version__, "threads": torch.get_num_threads(), "platform": platform.platform(),
    }
    for label, results in runs.items():
        seconds = [s for res in results for s in res["seconds_per_step"]]
        tokens = [t for res in results for t in res["generated_tokens_per_step"]]
        report[label] = {"median_seconds_per_step": statistics.median(seconds),
                         "generated_tokens_per_second": sum(tokens) / sum(seconds), "runs": results}
    same = all(a["response_tokens"] == b["response_tokens"] for a, b in zip(runs["lean"], runs["transformers_forward"]))
    report["same_response_lengths"] = same
    report["speedup_lean"] = (report["transformers_forward"]["median_seconds_per_step"]
                              / report["lean"]["median_seconds_per_step"])
    emit_json(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
