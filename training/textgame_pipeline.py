"""The whole tiny text-game pipeline in one command: collect -> SFT -> GRPO (binary and task-specific, run
side by side) -> evaluation; `--install` copies the three checkpoints into assets/ with model cards.

    python training/textgame_pipeline.py --out runs/textgame_pipeline
    python training/textgame_pipeline.py --install                        # refresh assets/
    python -m rlvr_sim.training.textgame_pipeline ...                     # the same, from an installed package

It drives the package's own scripts (training/collect.py, sft.py, grpo.py, evaluations/textgame.py) with
the presets in training/configs/textgame_*.yaml, found next to this file (in a clone or an installed
package alike), so every number it prints comes from those commands. (`--runs`, the removed spelling of `--out`, and
`python -m rlvr_sim.envs.textgame.pipeline`, the removed location of this script, stop with errors naming
their replacements.)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rlvr_sim.reporting import add_out_argument
from rlvr_sim.resources import asset_path

TRAINING = Path(__file__).resolve().parent
EVALUATIONS = TRAINING.parent / "evaluations"

REWARD_TYPES = ("binary", "task_specific")
CARD_FILES = ("config.json", "model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
              "special_tokens_map.json", "rlvr_sim.json")


def _local(path: Path) -> str:
    """`path` relative to the working directory when it lies below it (as the recorded commands read)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _run(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    print("$ " + shlex.join(command), flush=True)
    return subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)


def _wait(process: subprocess.Popen, log: Path) -> None:
    if process.wait() != 0:
        raise RuntimeError(f"step failed (exit {process.returncode}); see {log}")


def write_model_card(checkpoint: Path, title: str, data_stats: dict | None = None, started_from: str | None = None) -> None:
    """README.md from the checkpoint's own metadata: data, steps, wall time and the exact command;
    `started_from` names the asset whose card's command writes the checkpoint this one started from."""
    meta = json.loads((checkpoint / "rlvr_sim.json").read_text())
    config = meta.get("config", {})
    lines = [
        f"# {title}", "",
        "Text-game world model of rlvr-sim (ByteSized32-style state prediction; RLVR-World, Wu et al. 2025).",
        "Trained only by this repository's scripts on data its collector generated; nothing from a hub.", "",
        f"- stage: {meta.get('stage')}  (task `{meta.get('task')}`, task args `{json.dumps(meta.get('task_args', {}))}`)",
        f"- data: our nine games played by scripted + random agents (`python training/collect.py --task textgame "
        f"--out data/textgame`); train split {data_stats['train'] if data_stats else 'see data/textgame/stats.json'}",
        f"- optimizer steps: {meta.get('steps')}  (batch {config.get('batch_size')} prompts"
        + (f", group size {config.get('group_size')}, KL {config.get('kl_coef')}" if meta.get("stage") == "grpo" else "")
        + f", lr {config.get('lr')})",
        f"- wall time: {meta.get('wall_seconds', 0) / 60:.1f} min on a shared 2-core CPU",
        f"- started from: `{config.get('model', {}).get('name_or_path', 'a fresh ' + str(config.get('model')))}`"
        + (f" (written by the command of the `assets/{started_from}` card; that checkpoint is embedded there)"
           if started_from else ""),
        f"- command: `{meta.get('command')}`", "",
        "Accuracy: see evaluations/results/textgame.md (python evaluations/textgame.py).",
    ]
    (checkpoint / "README.md").write_text("\n".join(lines) + "\n")


def install(run_dir: Path, stats: dict | None) -> None:
    """Copy the finals into assets/textgame_{sft,rlvr_binary,rlvr_task_specific} with model cards."""
    for name, title in (("sft", "Text-game world model: SFT"),
                        ("rlvr_binary", "Text-game world model: RLVR (GRPO, binary reward)"),
                        ("rlvr_task_specific", "Text-game world model: RLVR (GRPO, task-specific reward)")):
        source, target = run_dir / f"textgame_{name}" / "final", asset_path(f"textgame_{name}")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for file in CARD_FILES:
            if (source / file).exists():
                shutil.copy2(source / file, target / file)
        write_model_card(target, title, stats, started_from=None if name == "sft" else "textgame_sft")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_out_argument(parser, default="runs", help="directory for run outputs and logs", removed=("--runs",))
    parser.add_argument("--data", default="data/textgame")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--install", action="store_true", help="copy the checkpoints into assets/ with model cards")
    args = parser.parse_args(argv)
    runs, data = Path(args.out), Path(args.data)
    runs.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")  # several single-thread jobs share the cores best
    py = sys.executable
    collect, sft, grpo = (_local(TRAINING / f"{name}.py") for name in ("collect", "sft", "grpo"))
    configs, evaluate = _local(TRAINING / "configs"), _local(EVALUATIONS / "textgame.py")
    start = time.time()
    if not (data / "train.jsonl").exists():
        _wait(_run([py, collect, "--task", "textgame", "--out", str(data), "--seed", str(args.seed)],
                   runs / "textgame_collect.log", env), runs / "textgame_collect.log")
    sft_dir = runs / "textgame_sft"
    common = [f"task_args.data_dir={data}", f"seed={args.seed}"]
    log = runs / "textgame_sft.log"
    _wait(_run([py, sft, "--preset", f"{configs}/textgame_sft.yaml", f"output_dir={sft_dir}",
                *common], log, env), log)
    jobs = []
    for reward_type in REWARD_TYPES:
        log = runs / f"textgame_rlvr_{reward_type}.log"
        jobs.append((_run([py, grpo, "--preset", f"{configs}/textgame_grpo_{reward_type}.yaml",
                           f"model.name_or_path={sft_dir / 'final'}",
                           f"output_dir={runs / f'textgame_rlvr_{reward_type}'}", *common], log, env), log))
    for process, log in jobs:
        _wait(process, log)
    stats = json.loads((data / "stats.json").read_text()) if (data / "stats.json").exists() else None
    if args.install:
        install(runs, stats)
        checkpoints = []
    else:
        checkpoints = [f"--checkpoint=SFT={sft_dir / 'final'}"] + [
            f"--checkpoint=RLVR ({r.replace('_', '-')})={runs / f'textgame_rlvr_{r}' / 'final'}" for r in REWARD_TYPES]
    out = [] if args.install else [f"--out={runs / 'textgame_eval'}"]
    datasets = [f"--data=test (held-out states)={data / 'test.jsonl'}",
                f"--data=held-out game={data / 'heldout_games.jsonl'}"]
    log = runs / "textgame_eval.log"
    _wait(_run([py, evaluate, "--jobs=6", *checkpoints, *datasets, *out], log, env), log)
    print(log.read_text())
    print(f"pipeline finished in {(time.time() - start) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
