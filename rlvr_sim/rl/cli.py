"""Command-line front end shared by training/sft.py and training/grpo.py, and the settings idiom of every
training stage: a YAML preset plus `key=value` overrides (`parse_with_preset` gives it to an argparse
script such as training/tokenizer.py, beside its flags)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import yaml

from rlvr_sim.config import ConfigError, apply_overrides, load_config
from rlvr_sim.models.lm import CheckpointError

_NOT_GIVEN = object()

# Presets removed before the first release -> the shipped preset that replaces each. The FSQ pixel-token
# PushT presets read data/pusht and runs/pusht_tokenizer, which nothing in the repository creates; every
# shipped PushT model uses the pose layout.
REMOVED_PRESETS = {
    "pusht_sft.yaml": "pusht_pose_sft_rel.yaml",
    "pusht_grpo_multi.yaml": "pusht_pose_grpo_object_rel.yaml",
    "pusht_grpo_single.yaml": "pusht_pose_grpo_object_rel.yaml",
}


def check_not_removed(preset: str | None) -> None:
    """A removed preset's path fails with its replacement named, not as a missing file."""
    if preset is not None and not Path(preset).exists() and Path(preset).name in REMOVED_PRESETS:
        raise ConfigError(f"preset {preset} was removed (its data and tokenizer were never made by this repository); "
                          f"use training/configs/{REMOVED_PRESETS[Path(preset).name]}, the pose layout every "
                          "shipped PushT model uses")


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
        check_not_removed(args.preset)
        config = load_config(args.preset, overrides)
        summary = run_training(mode, config, command="python " + shlex.join(raw))
    except (ConfigError, CheckpointError, RewardError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    summary.pop("history", None)
    if int(os.environ.get("RANK", "0")) == 0:  # one summary line, not one per process
        print(json.dumps(summary))
    return 0


def _preset_settings(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, ValueError) as err:
        raise ConfigError(f"cannot read preset {path}: {err}") from err
    if not isinstance(loaded, dict | None):
        raise ConfigError(f"preset {path} must be a mapping of settings, got {type(loaded).__name__}")
    return dict(loaded or {})


def _setting(action: argparse.Action, value: Any) -> Any:
    """A preset or override value as the flag would have stored it (its type and choices)."""
    if value is not None and action.type is not None and not isinstance(value, bool):
        if action.type is int and isinstance(value, float) and not value.is_integer():
            raise ConfigError(f"{action.dest}: {value!r} is not a whole number")
        try:
            value = action.type(value)
        except (TypeError, ValueError) as err:
            raise ConfigError(f"{action.dest}: {value!r} is not a valid {action.type.__name__}") from err
    if action.choices is not None and value not in action.choices:
        raise ConfigError(f"{action.dest} must be one of {list(action.choices)}, got {value!r}")
    return value


def parse_with_preset(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """`parser.parse_args` plus the LM stages' idiom: `--preset YAML` and `key=value` overrides whose keys
    are the flags' destinations (`--lpips-weight` is `lpips_weight`). Later wins: a flag's default, the
    preset, a flag given on the command line, then `key=value`. A required flag may come from any of them.
    Errors exit as argparse errors do (status 2, with the usage)."""
    parser.add_argument("--preset", help="YAML file of settings (the flags' names with _, e.g. lpips_weight: 0.5)")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="settings applied after the preset and flags")
    actions = {a.dest: a for a in parser._actions if a.dest not in ("help", "preset", "overrides")}
    required = [a for a in actions.values() if a.required]
    for action in required:
        action.required = False
    given = parser.parse_args(argv, argparse.Namespace(**{dest: _NOT_GIVEN for dest in actions}))
    try:
        settings = {k: v for k, v in _preset_settings(given.preset).items()  # a flag given beats the preset
                    if k not in actions or getattr(given, k) is _NOT_GIVEN}
        settings.update(apply_overrides({}, list(given.overrides)))
        unknown = sorted(set(settings) - set(actions), key=str)
        if unknown:
            raise ConfigError(f"unknown settings {unknown}; valid settings: {sorted(actions)}")
        for dest, value in settings.items():
            setattr(given, dest, _setting(actions[dest], value))
    except ConfigError as err:
        parser.error(str(err))
    for dest, action in actions.items():
        if getattr(given, dest) is _NOT_GIVEN:
            setattr(given, dest, action.default)
    missing = [a.option_strings[0] for a in required if getattr(given, a.dest) is None]
    if missing:
        parser.error(f"missing {', '.join(missing)} (a flag, a preset key or key=value)")
    return given
