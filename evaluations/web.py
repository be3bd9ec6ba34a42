"""Table-2-style web world-model evaluation: item-change precision / recall / F1 on held-out transitions.

    python evaluations/web.py                      # embedded assets/web_sft and assets/web_rlvr, data/web test split
    python evaluations/web.py --model SFT=runs/web_sft/final --model RLVR=runs/web_grpo/final --limit 100
    python evaluations/web.py --data data/web_episode --twins-of data/web_episode data/web_onpolicy_episode

Each model decodes every test transition greedily (temperature 0; `--temperature` to sample) and the
scores are averaged per transition, with the default metric and with `compat="rlvr-world"` (the
official scorer). A "no change" row (always predicting three `None` sections) shows how much of the
score needs no model. Writes evaluations/results/web.json and web.md.

`--twins-of` names the data the models were trained on (files, or directories whose train split is read):
test transitions whose page and action (`rlvr_sim.envs.web.collect.transition_key`) occur there have their
answer in training. The table then scores the transitions without such a twin (with a bootstrap 95% interval,
and each model's paired gain over the first) next to those with one, and counts them. The collector's default
key split has no twins; the episode split the embedded models were trained on has many.
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

from rlvr_sim.metrics.stats import bootstrap_ci, paired_gain
from rlvr_sim.metrics.web import item_change_f1
from rlvr_sim.reporting import add_out_argument
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


def per_transition_f1(predictions: list[str], golds: list[str]) -> list[float]:
    """Default-metric item-change F1 of each prediction, in percent."""
    return [100 * item_change_f1(p, g).f1 for p, g in zip(predictions, golds)]


def twin_flags(keys: list[str], train: list[str]) -> list[bool]:
    """Whether each test transition (by `transition_key`) has a twin in the `train` data."""
    from rlvr_sim.envs.web.collect import training_keys

    seen = training_keys(train)
    return [key in seen for key in keys]


def subset_scores(row: dict[str, Any], predictions: list[str], golds: list[str], twins: list[bool]) -> None:
    """Add the scores of the transitions without and with a training twin to `row` (no_twin, twin), with a
    bootstrap 95% interval of the no-twin F1."""
    for name, wanted in (("no_twin", False), ("twin", True)):
        idx = [i for i, twin in enumerate(twins) if twin == wanted]
        if not idx:
            row[name] = {"n": 0}
            continue
        row[name] = score_predictions([predictions[i] for i in idx], [golds[i] for i in idx])
        f1s = [row["f1_per_transition"][i] for i in idx]
        row[name]["f1_ci"] = list(bootstrap_ci(np.array(f1s))) if len(f1s) > 1 else [f1s[0], f1s[0]]


def predict(checkpoint: str | Path, data_dir: str | Path, split: str, limit: int | None, temperature: float,
            batch_size: int, seed: int) -> tuple[list[str], list[str], dict[str, Any], list[str]]:
    """Decoded predictions, golds, checkpoint metadata and test-transition keys (page + action) of one
    checkpoint on a split (the checkpoint's own tokenizer/codec)."""
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
    from rlvr_sim.envs.web.collect import transition_key

    keys = [transition_key(e.metadata["tree"], e.metadata["action"]) for e in examples]
    return predictions, [e.metadata["gold"] for e in examples], meta, keys


def gains_text(rows: list[dict[str, Any]], twins: list[bool] | None) -> str:
    """Paired bootstrap gains in F1 (on the no-twin transitions when twins are known): each model over the
    no-change baseline, and each later model over the first; "" with nothing to compare."""
    baseline = [row for row in rows if row["model"] == "No-change baseline" and row.get("f1_per_transition")]
    models = [row for row in rows if row["model"] != "No-change baseline" and row.get("f1_per_transition")]
    if not models:
        return ""
    n = len(models[0]["f1_per_transition"])
    idx = [i for i, twin in enumerate(twins) if not twin] if twins is not None else list(range(n))
    if len(idx) < 2:
        return ""
    pairs = [(row, baseline[0]) for row in models] if baseline else []
    pairs += [(row, models[0]) for row in models[1:]]
    parts = []
    for row, reference in pairs:
        other, first = np.array(row["f1_per_transition"])[idx], np.array(reference["f1_per_transition"])[idx]
        gain = paired_gain(other, first)  # other - first: positive when `row` scores higher
        parts.append(f"{row['model']} - {reference['model']}: {gain['gain']:+.2f} F1 (paired bootstrap 95% interval "
                     f"{gain['low']:+.2f} to {gain['high']:+.2f}; better on {int((other > first).sum())}, worse on "
                     f"{int((other < first).sum())} of {len(idx)})")
    where = "on the transitions without a training twin" if twins is not None else "on all transitions"
    return f"Gains {where}: " + "; ".join(parts) + "."


def markdown_twins(rows: list[dict[str, Any]], note: str) -> str:
    lines = ["| Model | F1, no training twin [95% CI] | F1 (rlvr-world scorer), no twin | F1, with a twin | F1, all | "
             "n (no twin / twin) |", "|---|---|---|---|---|---|"]

    def cell(scores: dict[str, Any], key: str) -> str:
        return f"{scores[key]:.2f}" if scores["n"] else "-"

    for row in rows:
        clean, twin = row["no_twin"], row["twin"]
        clean_f1 = f"{clean['f1']:.2f} [{clean['f1_ci'][0]:.2f}, {clean['f1_ci'][1]:.2f}]" if clean["n"] else "-"
        lines.append(f"| {row['model']} | {clean_f1} | {cell(clean, 'compat_f1')} | {cell(twin, 'f1')} | "
                     f"{row['f1']:.2f} | {clean['n']} / {twin['n']} |")
    return "\n".join(lines) + f"\n\n{note}\n"


def markdown(rows: list[dict[str, Any]], note: str) -> str:
    if rows and "no_twin" in rows[0]:
        return markdown_twins(rows, note)
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
    add_out_argument(parser, help="output folder; default: evaluations/results in a clone of the repository, "
                                  "required elsewhere (--out-dir: deprecated spelling)")
    parser.add_argument("--append", action="store_true",
                        help="keep rows of other models already in <out>/web.json (same data and limit expected)")
    parser.add_argument("--twins-of", nargs="+", metavar="DATA",
                        help="the models' training data (files or directories' train splits): score the test "
                             "transitions without a twin (same page + action) there apart from those with one")
    args = parser.parse_args(argv)
    try:
        out = results_dir(args.out)
    except RuntimeError as err:
        parser.error(str(err))
    command = "python evaluations/web.py " + " ".join(sys.argv[1:] if argv is None else argv)
    torch.manual_seed(args.seed)
    models = [tuple(m.split("=", 1)) for m in args.model] or [(n, str(p)) for n, p in DEFAULT_MODELS]
    rows: list[dict[str, Any]] = []
    golds: list[str] = []
    keys: list[str] = []
    twins: list[bool] | None = None
    for name, path in models:
        start = time.time()
        predictions, golds, meta, keys = predict(path, args.data, args.split, args.limit, args.temperature,
                                                 args.batch_size, args.seed)
        if args.twins_of and twins is None:
            twins = twin_flags(keys, args.twins_of)
        rows.append({"model": name, "checkpoint": str(path), **score_predictions(predictions, golds),
                     "f1_per_transition": per_transition_f1(predictions, golds),
                     "seconds": round(time.time() - start, 1), "command": command.strip(), "examples": predictions[:3]})
        if twins is not None:
            subset_scores(rows[-1], predictions, golds, twins)
        print(json.dumps({k: v for k, v in rows[-1].items() if k not in ("examples", "f1_per_transition")}), flush=True)
    if golds:
        baseline = [NO_CHANGE] * len(golds)
        rows.insert(0, {"model": "No-change baseline", "checkpoint": None, **score_predictions(baseline, golds),
                        "f1_per_transition": per_transition_f1(baseline, golds)})
        if twins is not None:
            subset_scores(rows[0], baseline, golds, twins)
    out.mkdir(parents=True, exist_ok=True)
    if args.append and (out / "web.json").exists():
        previous = json.loads((out / "web.json").read_text())
        if previous.get("keys", keys) != keys or previous.get("twins") != twins:
            parser.error(f"--append: {out / 'web.json'} scored other transitions or another --twins-of; "
                         "re-run without --append")
        fresh = {row["model"] for row in rows}
        rows += [row for row in previous["rows"] if row["model"] not in fresh]
        order = {"No-change baseline": 0, "SFT": 1, "RLVR": 2}
        rows.sort(key=lambda row: order.get(row["model"], 3))
    commands = sorted({row["command"] for row in rows if row.get("command")})
    note = (f"Held-out transitions: {args.data} split `{args.split}` (first {len(golds)} with answers within the "
            f"checkpoint's max_new_tokens), decoding temperature {args.temperature}. Scores are per-transition means "
            "in percent.")
    if twins is not None:
        note += (f" {sum(twins)} of the {len(golds)} test transitions have a training twin (the same page and action, "
                 f"so the same answer) in {' + '.join(args.twins_of)}; the first column scores the other "
                 f"{len(golds) - sum(twins)}.")
    gains = gains_text(rows, twins)
    note += (f" {gains}" if gains else "") + " Commands: " + "; ".join(f"`{c}`" for c in commands)
    (out / "web.json").write_text(json.dumps({"rows": rows, "note": note, "keys": keys, "twins": twins}, indent=1) + "\n")
    (out / "web.md").write_text(markdown(rows, note))
    print(markdown(rows, note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
