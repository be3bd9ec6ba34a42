"""The one parquet reader of the data loaders: RLVR-World's text-game and web files (verl layout) are
parquet tables whose rows each loader turns into its own transitions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

Row = TypeVar("Row")


def read_parquet_rows(path: str | Path, convert: Callable[[dict[str, Any], str], Row],
                      error: type[ValueError]) -> list[Row]:
    """Each row of a parquet file (a dict of its columns) through `convert(row, where)`, where `where`
    names the file and row for error messages. A file pyarrow cannot read raises `error` (the loader's
    own data error); pyarrow itself is the `data` extra."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError("reading parquet needs pyarrow: pip install 'rlvr-sim[data]' (or pyarrow)") from exc
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for corrupt / non-parquet files
        raise error(f"{path}: not a readable parquet file ({exc})") from exc
    return [convert(row, f"{path} row {i}") for i, row in enumerate(rows)]


__all__ = ["read_parquet_rows"]
