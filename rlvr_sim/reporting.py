"""Emitting benchmark and evaluation reports: JSON to stdout, and to a file when asked.

Every script names where it writes with one flag, `--out` (`add_out_argument`); the older spellings
(`--out-dir`, `--runs`) were removed and stop with an error that names `--out`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OUT_FLAG = "--out"


class _RemovedSpelling(argparse.Action):
    """A removed spelling of `--out`: a usage error (status 2) that names `--out`."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} was removed: use {OUT_FLAG} {values or 'DIR'}")


def add_out_argument(parser: argparse.ArgumentParser, help: str, default: str | None = None,
                     removed: Sequence[str] = ("--out-dir",)) -> argparse.Action:
    """Add `--out` (stored as `args.out`); each of the `removed` spellings, hidden from `--help`, is an error
    naming `--out` (rather than argparse's bare "unrecognized arguments")."""
    action = parser.add_argument(OUT_FLAG, default=default, help=help)
    for spelling in removed:
        parser.add_argument(spelling, dest="_removed_out", action=_RemovedSpelling, nargs="?",
                            default=argparse.SUPPRESS, help=argparse.SUPPRESS)
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


def write_results(results: dict[str, Any], out: Path, markdown: str, script: str, argv: Sequence[str]) -> None:
    """Record the command that made `results`, then write OUT.json and OUT.md (folders created), print the
    markdown. `script` is the repository path of the evaluation (`evaluations/video.py`)."""
    results["command"] = f"python {script} " + " ".join(argv)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown + "\n")
    print(markdown)


def write_report(out: Path, stem: str, report: dict[str, Any], markdown: str, quiet: bool = False) -> None:
    """Write OUT/STEM.json (the report) and OUT/STEM.md (the table), folders created; print the table unless
    `quiet`. For evaluations whose report already carries its command in `settings`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / f"{stem}.md").write_text(markdown)
    if not quiet:
        print(markdown)

