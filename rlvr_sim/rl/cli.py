"""Command-line front end shared by training/sft.py and training/grpo.py."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from rlvr_sim.config import ConfigError, load_config
from rlvr_sim.models.lm import CheckpointError


def parse_args(mode: str, argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"training/{mode}.py",
        description=f"{mode.upper()} for any registered task. Settings: a YAML preset, then key=value overrides "
        "(dotted keys reach into mappings, e.g. model.name_or_path=assets/x lora.rank=32).",
    )
    parser.add_argument("--task", help="task name (overrides the preset's `task`)")
    parser.add_argument("--preset", help="YAML preset, e.g. training/configs/addition_grpo.yaml")
    parser.add_argument("overrides", nargs="*", help="key=value settings")
    return parser.parse_args(argv)


def main(mode: str, argv: list[str] | None = None) -> int:
    """Parse, train, print a one-line JSON summary. Errors in settings exit with status 2 and a message."""
    from rlvr_sim.rl.trainer import RewardError, run_training

    args = parse_args(mode, argv)
    overrides = list(args.overrides)
    if args.task:
        overrides.insert(0, f"task={args.task}")
    raw = sys.argv if argv is None else [f"training/{mode}.py", *argv]
    try:
        config = load_config(args.preset, overrides)
        summary = run_training(mode, config, command="python " + shlex.join(raw))
    except (ConfigError, CheckpointError, RewardError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    summary.pop("history", None)
    if int(os.environ.get("RANK", "0")) == 0:  # one summary line, not one per process
        print(json.dumps(summary))
    return 0
