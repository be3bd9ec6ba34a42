"""Table-2-style web world-model evaluation: item-change precision / recall / F1 on held-out transitions.

    python evaluations/web.py                      # embedded assets/web_sft and assets/web_rlvr, data/web test split
    python evaluations/web.py --model SFT=runs/web_sft/final --model RLVR=runs/web_grpo/final --limit 100

Each model decodes every test transition greedily (temperature 0; `--temperature` to sample) and the
scores are averaged per transition, with the default metric and with `compat="rlvr-world"` (the
official scorer). A "no change" row (always predicting three `None` sections) shows how much of the
score needs no model. Writes evaluations/results/web.json and web.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlvr_sim.metrics.web import item_change_f1
from rlvr_sim.resources import asset_path, packaged_results, results_dir

DEFAULT_MODELS = (("SFT", asset_path("web_sft")), ("RLVR", asset_path("web_rlvr")))
NO_CHANGE = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\nNone"


def score_predictions(predictions: list[str], golds: list[str]) -> dict[str, float]:
    """Mean precision/recall/F1 (default metric and rlvr-world compat), in percent."""
    default = np.array([item_change_f1(p, g) for p, g in zip(predictions, golds)])
    compat = np.array([item_change_f1(p, g, compat="rlvr-world") for p, g in zip(predictions, golds)])
    return {"precision": 100 * default[:, 0].mean(), "recall": 100 * default[:, 1].mean(), "f1": 100 * default[:, 2].mean(),
            "compat_precision": 100 * compat[:, 0].mean(), "compat_recall": 100 * compat[:, 1].mean(),
            "compat_f1": 100 * compat[:, 2].mean(), "n": len(golds)}


def predict(checkpoint: str | Path, data_dir: str | Path, split: str, limit: int | None, temperature: float,
            batch_size: int, seed: int) -> tuple[list[str], list[str], dict[str, Any]]:
    """Decoded predictions and golds of one checkpoint on a split (the checkpoint's own tokenizer/codec)."""
    from rlvr_sim.models.lm import load_model
    from rlvr_sim.rl.sampler import sample
    from rlvr_sim.tasks.web import WebTask

    model, tokenizer, meta = load_model(str(checkpoint))
    settings = {k: v for k, v in (meta.get("task_args") or {}).items() if k in ("max_prompt_tokens", "max_new_tokens")}
    task = WebTask(tokenizer=tokenizer, data_dir=str(data_dir), **settings)
    examples = task.examples(split)[:limit]
    if not examples:
        raise ValueError(f"no {split} transitions in {data_dir} fit the checkpoint's max_new_tokens={task.max_new_tokens}")
    spec = task.generation_spec()
    predictions: list[str] = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            batch = examples[start: start + batch_size]
            out = sample(model, [e.prompt_ids for e in batch], max_new_tokens=spec.max_new_tokens,
                         temperature=temperature, stop_token_ids=spec.stop_token_ids, pad_token_id=task.pad_token_id,
                         seed=seed + start)
            predictions += [task.decode(c) for c in out.completions()]
            print(f"  {checkpoint}: {len(predictions)}/{len(examples)} decoded", file=sys.stderr, flush=True)
    return predictions, [e.metadata["gold"] for e in examples], meta


def markdown(rows: list[dict[str, Any]], note: str) -> str:
    lines = ["| Model | Precision | Recall | F1 | F1 (rlvr-world scorer) | n |", "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['model']} | {row['precision']:.2f} | {row['recall']:.2f} | {row['f1']:.2f} | "
                     f"{row['compat_f1']:.2f} | {row['n']} |")
    return "\n".join(lines) + f"\n\n{note}\n"


def results_tables(directory: str | Path | None = None) -> str:
    """The web tables (world-model P/R/F1 and agent success rates) in `directory` (default: the committed
    ones) as markdown, for the CLI and the demo; a missing table is named with the script that writes it."""
    parts = []
    for name, title, script in (("web.md", "Web world model: item-change prediction", "python evaluations/web.py"),
                                ("web_agent.md", "MPC web agent", "python evaluations/web_agent.py")):
        path = Path(directory) / name if directory is not None else packaged_results(name)
        parts.append(f"### {title}\n\n{path.read_text().strip()}" if path.exists() else f"No {name} yet: run {script}")
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Item-change P/R/F1 of web world models (Table 2 of RLVR-World).")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                        help="checkpoint to score (repeatable); default: embedded SFT and RLVR")
    parser.add_argument("--data", default="data/web", help="directory with test.jsonl/.json/.parquet")
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=None, help="score the first N transitions only")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", help="default: evaluations/results in a clone of the repository; required elsewhere")
    parser.add_argument("--append", action="store_true",
                        help="keep rows of other models already in <out-dir>/web.json (same data and limit expected)")
    args = parser.parse_args(argv)
    try:
        out = results_dir(args.out_dir)
    except RuntimeError as err:
        parser.error(str(err))
    command = "python evaluations/web.py " + " ".join(sys.argv[1:] if argv is None else argv)
    torch.manual_seed(args.seed)
    models = [tuple(m.split("=", 1)) for m in args.model] or [(n, str(p)) for n, p in DEFAULT_MODELS]
    rows: list[dict[str, Any]] = []
    golds: list[str] = []
    for name, path in models:
        start = time.time()
        predictions, golds, meta = predict(path, args.data, args.split, args.limit, args.temperature,
                                           args.batch_size, args.seed)
        rows.append({"model": name, "checkpoint": str(path), **score_predictions(predictions, golds),
                     "seconds": round(time.time() - start, 1), "command": command.strip(), "examples": predictions[:3]})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "examples"}), flush=True)
    if golds:
        rows.insert(0, {"model": "No-change baseline", "checkpoint": None, **score_predictions([NO_CHANGE] * len(golds), golds)})
    out.mkdir(parents=True, exist_ok=True)
    if args.append and (out / "web.json").exists():
        fresh = {row["model"] for row in rows}
        rows += [row for row in json.loads((out / "web.json").read_text())["rows"] if row["model"] not in fresh]
        order = {"No-change baseline": 0, "SFT": 1, "RLVR": 2}
        rows.sort(key=lambda row: order.get(row["model"], 3))
    commands = sorted({row["command"] for row in rows if row.get("command")})
    note = (f"Held-out transitions: {args.data} split `{args.split}` (first {len(golds)} with answers within the "
            f"checkpoint's max_new_tokens), decoding temperature {args.temperature}. Scores are per-transition means "
            "in percent. Commands: " + "; ".join(f"`{c}`" for c in commands))
    (out / "web.json").write_text(json.dumps({"rows": rows, "note": note}, indent=1) + "\n")
    (out / "web.md").write_text(markdown(rows, note))
    print(markdown(rows, note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
