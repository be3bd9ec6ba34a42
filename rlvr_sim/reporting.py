"""Emitting benchmark and evaluation reports: JSON to stdout, and to a file when asked.

Every script names where it writes with one flag, `--out` (`add_out_argument`); the older spellings
(`--out-dir`, `--runs`) still work as deprecated aliases, so recorded commands re-run unchanged.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OUT_FLAG = "--out"


class _DeprecatedAlias(argparse.Action):
    """An old spelling of `--out`: stores into the same destination and says, on stderr, to use `--out`."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: {option_string} is deprecated, use {OUT_FLAG}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_out_argument(parser: argparse.ArgumentParser, help: str, default: str | None = None,
                     aliases: Sequence[str] = ("--out-dir",)) -> argparse.Action:
    """Add `--out` (stored as `args.out`) and its deprecated `aliases`, hidden from `--help`.

    The last of `--out` and an alias on the command line wins, as for a repeated flag.
    """
    action = parser.add_argument(OUT_FLAG, default=default, help=help)
    for alias in aliases:
        parser.add_argument(alias, dest=action.dest, action=_DeprecatedAlias, default=argparse.SUPPRESS,
                            help=argparse.SUPPRESS)
    return action


def machine_record(note: str) -> dict[str, str]:
    """What a benchmark records of the machine it ran on (Python, torch, CPU) with a note on reading it."""
    import platform

    import torch

    return {"python": platform.python_version(), "torch": torch.__version__, "cpu": platform.processor(), "note": note}


def emit_json(report: Any, out: str | Path | None = None) -> str:
    """Print `report` as indented JSON and, if `out` is given, also write it there (folders created)."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n")
    return text
