r"""Table-1-style evaluation of text-game world models: exact-match accuracy on Unchanged / Changed / Overall
transitions plus mean binary and task-specific rewards, for any checkpoint on any loaded data set.

    python evaluations/textgame.py                       # embedded checkpoints on our test + held-out-game sets
    python evaluations/textgame.py --checkpoint sft=runs/textgame_sft/final --data test=data/textgame/test.jsonl
    python evaluations/textgame.py --checkpoint qwen=/path/to/hf_model --data rw=test_state_difference.parquet \
        --prompt-format source --max-new-tokens 4096      # an HF model on RLVR-World rows with their own prompts

Every data set also gets the trivial row "no change (copy the state)": an empty diff for every transition,
scored the same way (right exactly where nothing changes).
Writes <out>.json and <out>.md (default runs/eval/textgame.{json,md}; the committed table: --out evaluations/results/textgame). Predictions are greedy.
Accuracy uses the correct (default) semantics; the compat="rlvr-world" exact match is reported beside it.
With --pass-at K each row also gets pass@K: the share of transitions (Unchanged / Changed / Overall) that at
least one of K seeded samples at temperature 1 gets exactly right, i.e. what RL could reinforce at best.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from rlvr_sim.data.bytesized32 import TextGameTransition, load_transitions
from rlvr_sim.metrics.textgame import (
    accuracy_report,
    format_accuracy_table,
    is_changed_transition,
    text_game_reward,
)
from rlvr_sim.resources import asset_path, display_path, packaged_results, results_dir

EMBEDDED = {
    "SFT": "textgame_sft",
    "RLVR (binary)": "textgame_rlvr_binary",
    "RLVR (task-specific)": "textgame_rlvr_task_specific",
}
NO_CHANGE = "no change (copy the state)"  # the trivial baseline row every data set gets
DEFAULT_DATA_DIR = Path("data/textgame")
DEFAULT_DATASETS = {"test (held-out states)": "test.jsonl", "held-out game": "heldout_games.jsonl"}


def evaluate_predictions(transitions: list[TextGameTransition], responses: list[str]) -> dict[str, Any]:
    """Accuracy report and mean rewards of model responses (one per transition)."""
    if len(transitions) != len(responses):
        raise ValueError(f"{len(responses)} responses for {len(transitions)} transitions")
    changed, correct, correct_compat, binary, task_specific = [], [], [], [], []
    per_game: dict[str, list[bool]] = {}
    for transition, response in zip(transitions, responses):
        current, gold = transition.current_state, transition.gold_state
        changed.append(is_changed_transition(current, gold))
        binary.append(text_game_reward(response, current, gold, "binary"))
        task_specific.append(text_game_reward(response, current, gold, "task_specific"))
        correct.append(binary[-1] == 1.0)
        correct_compat.append(text_game_reward(response, current, gold, "binary", compat="rlvr-world") == 1.0)
        per_game.setdefault(transition.game or "?", []).append(correct[-1])
    report = accuracy_report(changed, correct)
    report.update(
        overall_rlvr_world_compat=round(100.0 * sum(correct_compat) / max(len(correct_compat), 1), 2),
        mean_binary_reward=sum(binary) / max(len(binary), 1),
        mean_task_specific_reward=sum(task_specific) / max(len(task_specific), 1),
        per_game_overall={g: round(100.0 * sum(v) / len(v), 2) for g, v in sorted(per_game.items())},
    )
    return report


def no_change_row(data_path: str, limit: int | None = None) -> dict[str, Any]:
    """The trivial baseline on one data file: every transition answered "nothing changes" (an empty diff),
    scored by the same verifiable reward as the models."""
    from rlvr_sim.metrics.textgame import make_diff
    from rlvr_sim.tasks.textgame import ANSWER_MARKER, compact_json

    transitions = load_transitions(data_path)[:limit]
    responses = [f"{ANSWER_MARKER} {compact_json(make_diff(t.current_state, t.current_state))}" for t in transitions]
    return {**evaluate_predictions(transitions, responses), "checkpoint": None, "prompts_too_long": 0, "seconds": 0.0}


def predict_responses(checkpoint: Any, transitions: list[TextGameTransition], batch_size: int = 32,
                      prompt_format: str = "ours", max_new_tokens: int | None = None, temperature: float = 0.0,
                      seed: int = 0) -> tuple[list[str], int]:
    """Responses of a checkpoint (greedy by default; sampled with temperature > 0, transition i seeded with
    seed + i); returns (responses, number of prompts too long for the model). `checkpoint` may also be a
    loaded world model (anything with TextGameWorldModel's `predict`)."""
    from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModel

    world_model = (TextGameWorldModel(checkpoint, max_new_tokens=max_new_tokens, prompt_format=prompt_format)
                   if isinstance(checkpoint, (str, Path)) else checkpoint)
    responses: list[str] = []
    too_long = 0
    for start in range(0, len(transitions), batch_size):
        batch = transitions[start : start + batch_size]
        seeds = [seed + start + i for i in range(len(batch))] if temperature > 0 else None
        for prediction in world_model.predict(batch, temperature=temperature, seeds=seeds):
            responses.append(prediction.text)
            too_long += prediction.error is not None and "exceeds" in prediction.error
    return responses, too_long


def pass_at_k(world_model: Any, transitions: list[TextGameTransition], k: int, batch_size: int = 32,
              temperature: float = 1.0) -> dict[str, Any]:
    """pass@k: accuracy report of "any of k samples is exactly right" (sample j seeded with j * len + i)."""
    if k < 1:
        raise ValueError(f"pass@k needs k >= 1, got {k}")
    hit = [False] * len(transitions)
    for j in range(k):
        responses, _ = predict_responses(world_model, transitions, batch_size, temperature=temperature,
                                         seed=j * len(transitions))
        for i, (transition, response) in enumerate(zip(transitions, responses)):
            hit[i] = hit[i] or text_game_reward(response, transition.current_state, transition.gold_state) == 1.0
    changed = [is_changed_transition(t.current_state, t.gold_state) for t in transitions]
    return dict(accuracy_report(changed, hit), k=k, temperature=temperature)


def _named(items: list[str], what: str) -> dict[str, str]:
    named = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            name, value = Path(item).stem if what == "data" else Path(item).name, item
        named[name] = value
    return named


def evaluate_checkpoint(checkpoint: str, data_path: str, batch_size: int = 32, prompt_format: str = "ours",
                        max_new_tokens: int | None = None, limit: int | None = None, threads: int = 1,
                        pass_at: int = 0) -> dict[str, Any]:
    """The Table-1 row of one checkpoint on one data file (a separate process can run each pair)."""
    import torch
    from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModel

    torch.set_num_threads(threads)
    transitions = load_transitions(data_path)[:limit]
    start = time.time()
    world_model = TextGameWorldModel(checkpoint, max_new_tokens=max_new_tokens, prompt_format=prompt_format)
    responses, too_long = predict_responses(world_model, transitions, batch_size)
    row = evaluate_predictions(transitions, responses)
    if pass_at:
        row["pass_at_k"] = pass_at_k(world_model, transitions, pass_at, batch_size)
    row.update(checkpoint=display_path(checkpoint), prompts_too_long=too_long, seconds=round(time.time() - start, 1))
    return row


def run(checkpoints: dict[str, str], datasets: dict[str, str], out: Path, batch_size: int = 32,
        prompt_format: str = "ours", max_new_tokens: int | None = None, limit: int | None = None,
        command: str = "", jobs: int = 1, pass_at: int = 0) -> dict[str, Any]:
    """Evaluate every checkpoint on every data set (`jobs` pairs at a time, one process each); write
    <out>.json and <out>.md; return the results."""
    pairs = [(d, m) for d in datasets for m in checkpoints]
    args = {(d, m): (checkpoints[m], datasets[d], batch_size, prompt_format, max_new_tokens, limit, 1, pass_at)
            for d, m in pairs}
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pair: pool.submit(evaluate_checkpoint, *args[pair]) for pair in pairs}
            rows = {pair: future.result() for pair, future in futures.items()}
    else:
        rows = {pair: evaluate_checkpoint(*args[pair]) for pair in pairs}
    results: dict[str, Any] = {"command": command, "python": platform.python_version(), "datasets": {}}
    for data_name, data_path in datasets.items():
        block_rows = {NO_CHANGE: no_change_row(data_path, limit)}
        block_rows.update({model: rows[(data_name, model)] for model in checkpoints})
        for model, row in block_rows.items():
            print(f"{data_name} | {model}: overall {row['overall']} (unchanged {row['unchanged']}, "
                  f"changed {row['changed']}), {row['seconds']} s", file=sys.stderr)
        results["datasets"][data_name] = {"path": str(data_path), "n": next(iter(block_rows.values()))["n"],
                                          "rows": block_rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    out.with_suffix(".md").write_text(render_markdown(results))
    return results


def render_markdown(results: dict[str, Any]) -> str:
    """Markdown tables (one per data set) of a results dict as written by `run`."""
    parts = ["# Text-game world models: exact-match accuracy (%)\n",
             f"Generated by `{results.get('command') or 'python evaluations/textgame.py'}`.\n"]
    for data_name, block in results["datasets"].items():
        parts.append(f"\n## {data_name} ({block['n']} transitions, `{block['path']}`)\n\n")
        parts.append(format_accuracy_table(block["rows"]))
        sampled = {model: row["pass_at_k"] for model, row in block["rows"].items() if row.get("pass_at_k")}
        if sampled:
            k = next(iter(sampled.values()))
            parts.append(f"\npass@{k['k']} (any of {k['k']} samples at temperature {k['temperature']} exactly right):\n\n")
            parts.append(format_accuracy_table(sampled))
    return "".join(parts)


def load_results(path: str | Path | None = None) -> dict[str, Any] | None:
    """The last written results (default: the committed evaluations/results/textgame.json), or None."""
    path = Path(path) if path is not None else packaged_results("textgame.json")
    return json.loads(path.read_text()) if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", action="append", default=[],
                        help="NAME=PATH_OR_HF_ID (repeatable); default: the embedded SFT and RLVR checkpoints")
    parser.add_argument("--data", action="append", default=[],
                        help="NAME=FILE (.jsonl ByteSized32 schema or RLVR-World .parquet; repeatable); "
                             "default: data/textgame test + held-out game (collected if missing)")
    parser.add_argument("--out", help="output path without extension (default: runs/eval/textgame; the committed "
                             "table: evaluations/results/textgame)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--prompt-format", choices=("ours", "source"), default="ours",
                        help="ours: our codec q(s,a); source: the rows' own prompts (RLVR-World parquet)")
    parser.add_argument("--max-new-tokens", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N transitions per set")
    parser.add_argument("--jobs", type=int, default=1, help="(checkpoint, data set) pairs evaluated in parallel")
    parser.add_argument("--pass-at", type=int, default=0, metavar="K",
                        help="also report pass@K of K seeded samples at temperature 1 (0: off)")
    args = parser.parse_args(argv)
    try:
        out = Path(args.out) if args.out else results_dir() / "textgame"
    except RuntimeError as err:
        parser.error(str(err))
    checkpoints = _named(args.checkpoint, "checkpoint") or {n: str(asset_path(d)) for n, d in EMBEDDED.items()}
    datasets = _named(args.data, "data")
    if not datasets:
        if not (DEFAULT_DATA_DIR / "test.jsonl").exists():
            from rlvr_sim.envs.textgame.collect import collect

            print(f"no {DEFAULT_DATA_DIR}: collecting the default text-game data first (3 s on a 2-core CPU)",
                  file=sys.stderr, flush=True)
            collect(DEFAULT_DATA_DIR)
        datasets = {name: str(DEFAULT_DATA_DIR / file) for name, file in DEFAULT_DATASETS.items()}
    command = "python " + shlex.join(["evaluations/textgame.py", *(sys.argv[1:] if argv is None else argv)])
    results = run(checkpoints, datasets, out, args.batch_size, args.prompt_format,
                  args.max_new_tokens, args.limit, command, args.jobs, args.pass_at)
    print(render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
