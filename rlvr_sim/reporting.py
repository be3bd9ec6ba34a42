"""Emitting benchmark and evaluation reports: JSON to stdout, and to a file when asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def emit_json(report: Any, out: str | Path | None = None) -> str:
    """Print `report` as indented JSON and, if `out` is given, also write it there (folders created)."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n")
    return text
