"""Real2Sim policy-evaluation metrics as SIMPLER defines them (Li et al., 2024, simpler-env).

A simulator is a good policy evaluator when it ranks policies the way the real world does. Two numbers
say how well, computed per task over the policies' success rates:

- Pearson correlation of the simulated and real success-rate vectors (higher is better);
- MMRV, the mean maximum rank violation (lower is better):
  MMRV = mean_i max_j |real_i - real_j| * 1[(sim_i > sim_j) != (real_i > real_j)].

Both follow simpler-env's `simpler_env/utils/metrics.py` exactly, including its edge cases:
- orderings use strict `>`, so a tie in one evaluation against a strict order in the other is a
  violation for the policy that is ahead in the real ranking (ties in both are not);
- Pearson is 1 when the two centred vectors are equal (e.g. both constant), and otherwise divides by
  `sqrt(sum sim_c^2 * sum real_c^2) + 1e-8`, so a constant vector against a varying one gives 0.

The loader reads the result-table layouts SIMPLER's code and papers use (see `load_success_table`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# Added to Pearson's denominator as in simpler-env, so that the value matches theirs to the last digit.
PEARSON_EPS = 1e-8

POLICY_COLUMNS = ("policy", "policies", "checkpoint", "ckpt", "model", "policy_name", "ckpt_alias")
TASK_COLUMNS = ("task", "task_name", "env", "env_name", "environment")
REAL_NAMES = (
    "real",
    "real world",
    "real robot",
    "real success",
    "real success rate",
    "real eval",
    "real evaluation",
    "real perf",
    "real world success",
    "real-world success rate",
)


def _rates_vector(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    """Validate one success-rate vector: 1-D, finite, in [0, 1]."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} success rates must be a 1-D sequence, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        bad = [i for i, v in enumerate(array) if not math.isfinite(v)]
        raise ValueError(f"{name} success rates contain NaN/inf at positions {bad}")
    if np.any(array < 0.0) or np.any(array > 1.0):
        raise ValueError(
            f"{name} success rates must lie in [0, 1] (got min {array.min():g}, max {array.max():g}); "
            "percentages must be divided by 100"
        )
    return array


def _paired(
    sim: Sequence[float] | np.ndarray, real: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    sim_rates, real_rates = _rates_vector(sim, "sim"), _rates_vector(real, "real")
    if sim_rates.shape != real_rates.shape:
        raise ValueError(
            f"sim and real must rate the same policies: {sim_rates.size} sim rates vs {real_rates.size} real rates"
        )
    if sim_rates.size < 2:
        raise ValueError("Real2Sim metrics compare policies: need at least 2 policies")
    return sim_rates, real_rates


def pearson_correlation(sim: Sequence[float] | np.ndarray, real: Sequence[float] | np.ndarray) -> float:
    """Pearson correlation of per-policy success rates, simpler-env's formula (see module docstring)."""
    sim_rates, real_rates = _paired(sim, real)
    sim_centred = sim_rates - sim_rates.mean()
    real_centred = real_rates - real_rates.mean()
    if np.all(sim_centred == real_centred):
        return 1.0
    denominator = math.sqrt(float(np.sum(sim_centred**2) * np.sum(real_centred**2))) + PEARSON_EPS
    return float(np.sum(sim_centred * real_centred) / denominator)


def rank_violations(sim: Sequence[float] | np.ndarray, real: Sequence[float] | np.ndarray) -> np.ndarray:
    """Per policy i: max over j of |real_i - real_j| where the sim ordering of (i, j) disagrees with the real one."""
    sim_rates, real_rates = _paired(sim, real)
    sim_ahead = sim_rates[:, None] > sim_rates[None, :]
    real_ahead = real_rates[:, None] > real_rates[None, :]
    gaps = np.abs(real_rates[:, None] - real_rates[None, :])
    return np.where(sim_ahead != real_ahead, gaps, 0.0).max(axis=1)


def mean_maximum_rank_violation(
    sim: Sequence[float] | np.ndarray, real: Sequence[float] | np.ndarray
) -> float:
    """MMRV (lower is better): the mean over policies of `rank_violations`. Argument order as simpler-env's."""
    return float(rank_violations(sim, real).mean())


@dataclass
class TaskSuccessRates:
    """Success rates of the same policies on one task, in the real world and in one or more simulators."""

    task: str
    policies: list[str]
    real: np.ndarray
    sims: dict[str, np.ndarray] = field(default_factory=dict)

    def metrics(self) -> dict[str, dict[str, float]]:
        """Pearson and MMRV of every simulator against the real rates."""
        return {
            sim_name: {
                "pearson": pearson_correlation(sim_rates, self.real),
                "mmrv": mean_maximum_rank_violation(sim_rates, self.real),
            }
            for sim_name, sim_rates in self.sims.items()
        }


def real2sim_report(tables: Sequence[TaskSuccessRates]) -> dict[str, Any]:
    """Per-task and task-averaged Pearson / MMRV for every simulator, as a JSON-ready dict."""
    tasks = []
    per_sim: dict[str, dict[str, list[float]]] = {}
    for table in tables:
        metrics = table.metrics()
        tasks.append(
            {
                "task": table.task,
                "policies": list(table.policies),
                "real": [float(v) for v in table.real],
                "sims": {name: [float(v) for v in rates] for name, rates in table.sims.items()},
                "metrics": metrics,
                # all real rates equal: no ordering to reproduce, so Pearson/MMRV say nothing (SIMPLER's
                # formulas then give 1/0 or 0/0 by convention)
                "real_rates_all_equal": bool(np.ptp(table.real) == 0.0),
            }
        )
        for sim_name, values in metrics.items():
            bucket = per_sim.setdefault(sim_name, {"pearson": [], "mmrv": []})
            bucket["pearson"].append(values["pearson"])
            bucket["mmrv"].append(values["mmrv"])
    mean = {
        sim_name: {key: float(np.mean(vals)) for key, vals in bucket.items()}
        | {"num_tasks": len(bucket["mmrv"])}
        for sim_name, bucket in per_sim.items()
    }
    return {"tasks": tasks, "mean_over_tasks": mean}


def report_markdown(report: Mapping[str, Any]) -> str:
    """The report of `real2sim_report` as markdown: one row per (task, simulator), then the task means."""
    lines = [
        "| Task | Simulator | Policies | Pearson (higher better) | MMRV (lower better) |",
        "|---|---|---:|---:|---:|",
    ]
    for task in report["tasks"]:
        flag = " (real rates all equal: uninformative)" if task.get("real_rates_all_equal") else ""
        for sim_name, values in task["metrics"].items():
            lines.append(
                f"| {task['task']}{flag} | {sim_name} | {len(task['policies'])} "
                f"| {values['pearson']:.3f} | {values['mmrv']:.3f} |"
            )
    for sim_name, values in report["mean_over_tasks"].items():
        lines.append(
            f"| **mean of {values['num_tasks']} task(s)** | {sim_name} | "
            f"| {values['pearson']:.3f} | {values['mmrv']:.3f} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# Loading result tables
# ---------------------------------------------------------------------------------------------------


def _normalise(name: str) -> str:
    """Lower-case, markdown emphasis and a trailing unit like '(%)' dropped, spaces/dashes as '_'."""
    text = re.sub(r"\s*\(\s*%\s*\)\s*$|\s*%\s*$", "", str(name).strip().strip("*`"))
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


def _is_summary(name: str) -> bool:
    """'Average' / 'Mean' rows or columns summarise policies; they are not policies."""
    return _normalise(name) in {"average", "avg", "mean", "overall", "average_success", "mean_success"}


def _is_percent_header(name: str) -> bool:
    return str(name).strip().strip("*`").rstrip().endswith("%") or "(%)" in str(name).replace(" ", "")


def _is_real(name: str) -> bool:
    """Whether a column/row/key names the real-world evaluation (e.g. 'Real', 'real_success', 'REAL_PERF')."""
    return _normalise(name) in {_normalise(n) for n in REAL_NAMES}


def _parse_rate(value: Any, where: str, percent: bool) -> float:
    """One success rate from a cell: a number, or a string like '0.85', '85%', '85.0 %'."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{where}: missing or non-numeric success rate {value!r}")
    is_percent = percent
    if isinstance(value, str):
        text = value.strip().strip("*`").strip()
        if text.endswith("%"):
            is_percent, text = True, text[:-1].strip()
        if not text:
            raise ValueError(f"{where}: empty success-rate cell")
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{where}: cannot read success rate {value!r}") from None
    elif isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            raise ValueError(f"{where}: success rate {value} is out of range") from None
    else:
        raise ValueError(f"{where}: success rate must be a number, got {type(value).__name__}")
    if not math.isfinite(number):
        raise ValueError(f"{where}: success rate is {number} (NaN/inf)")
    if is_percent:
        number /= 100.0
    if not 0.0 <= number <= 1.0:
        raise ValueError(
            f"{where}: success rate {value!r} is outside [0, 1]; write percentages with a % sign or pass percent=True"
        )
    return number


class _Collector:
    """Gathers (task, source, policy) -> rate cells, then checks and aligns them per task."""

    def __init__(self, percent: bool, origin: str) -> None:
        self.percent = percent
        self.origin = origin
        self.cells: dict[str, dict[str, dict[str, float]]] = {}
        self.skipped: list[str] = []  # entries read as metadata, not rates ("key: why")

    def add(self, task: str, source: str, policy: str, value: Any, percent: bool = False) -> None:
        """One cell; `percent` marks a column whose header says its numbers are percentages."""
        source_key = "real" if _is_real(source) else str(source).strip()
        policy = str(policy).strip()
        if _is_summary(policy):
            return
        where = f"{self.origin}: task {task!r}, {source_key!r}, policy {policy!r}"
        if not policy:
            raise ValueError(f"{self.origin}: task {task!r} has a row without a policy name")
        by_policy = self.cells.setdefault(task, {}).setdefault(source_key, {})
        if policy in by_policy:
            raise ValueError(f"{where}: policy listed twice")
        by_policy[policy] = _parse_rate(value, where, self.percent or percent)

    def tables(self) -> list[TaskSuccessRates]:
        if not self.cells:
            raise ValueError(f"{self.origin}: no success rates found")
        tables = []
        for task, sources in self.cells.items():
            if "real" not in sources:
                raise ValueError(
                    f"{self.origin}: task {task!r} has no real-world success rates "
                    f"(sources found: {sorted(sources)}; name one 'real')"
                )
            sims = {name: rates for name, rates in sources.items() if name != "real"}
            if not sims:
                skipped = f" (skipped as metadata: {'; '.join(self.skipped)})" if self.skipped else ""
                raise ValueError(
                    f"{self.origin}: task {task!r} has real success rates but no simulator to compare{skipped}"
                )
            policies = list(sources["real"])
            for name, rates in sims.items():
                missing, extra = set(policies) - set(rates), set(rates) - set(policies)
                if missing or extra:
                    raise ValueError(
                        f"{self.origin}: task {task!r}: policies of {name!r} do not match the real ones "
                        f"(missing in {name!r}: {sorted(missing)}; not in real: {sorted(extra)})"
                    )
            if len(policies) < 2:
                raise ValueError(f"{self.origin}: task {task!r} has {len(policies)} policy; need at least 2")
            tables.append(
                TaskSuccessRates(
                    task=task,
                    policies=policies,
                    real=np.array([sources["real"][p] for p in policies]),
                    sims={name: np.array([rates[p] for p in policies]) for name, rates in sims.items()},
                )
            )
        return tables


def _find_column(header: Sequence[str], names: Iterable[str]) -> int | None:
    wanted = {_normalise(n) for n in names}
    for index, column in enumerate(header):
        if _normalise(column) in wanted:
            return index
    return None


def _cell(row: Sequence[Any], index: int) -> str:
    """A name cell (task, policy, source) as text; a short row's missing cell is empty."""
    return str(row[index]).strip() if index < len(row) else ""


def _add_rows(collector: _Collector, header: list[str], rows: list[list[str]], default_task: str) -> None:
    """One table of cells. Long layout: a policy column, a 'real' column and one column per simulator.
    Wide layout (SIMPLER paper style): one row per evaluation ('Real', 'SIMPLER', ...), one column per policy.
    Columns whose header ends in '%' or '(%)' hold percentages; 'Average'/'Mean' policies are summaries and skipped."""
    header = [h.strip() for h in header]
    task_col = _find_column(header, TASK_COLUMNS)
    policy_col = _find_column(header, POLICY_COLUMNS)
    if policy_col is not None:
        value_cols = [i for i in range(len(header)) if i not in (task_col, policy_col)]
        if not any(_is_real(header[i]) for i in value_cols):
            raise ValueError(
                f"{collector.origin}: table has a policy column but no 'real' column (header {header})"
            )
        for row in rows:
            task = _cell(row, task_col) if task_col is not None else default_task
            for i in value_cols:
                value = row[i] if i < len(row) else ""
                collector.add(task, header[i], _cell(row, policy_col), value, percent=_is_percent_header(header[i]))
        return
    source_col = next((i for i in range(len(header)) if i != task_col), None)
    policy_cols = [i for i in range(len(header)) if i not in (task_col, source_col)]
    if source_col is None or not policy_cols:
        raise ValueError(f"{collector.origin}: cannot tell policies from header {header}")
    if not any(_is_real(row[source_col]) for row in rows if len(row) > source_col):
        raise ValueError(
            f"{collector.origin}: no policy column ({'/'.join(POLICY_COLUMNS)}) and no row named 'real': "
            f"cannot read header {header}"
        )
    for row in rows:
        task = _cell(row, task_col) if task_col is not None else default_task
        for i in policy_cols:
            collector.add(task, _cell(row, source_col), header[i], row[i] if i < len(row) else "")


def _parse_csv(text: str, collector: _Collector, default_task: str, delimiter: str) -> None:
    try:
        records = [
            row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in row)
        ]
    except csv.Error as error:
        raise ValueError(f"{collector.origin}: not a readable table ({error})") from None
    if not records:
        raise ValueError(f"{collector.origin}: empty table")
    _add_rows(collector, records[0], records[1:], default_task)


def _split_markdown_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _parse_markdown(text: str, collector: _Collector, default_task: str) -> None:
    """Pipe tables; a heading line above a table names its task when the table has no task column."""
    task, block = default_task, []
    found = False

    def flush() -> None:
        nonlocal block, found
        if block:
            header, *body = block
            body = [row for row in body if not all(re.fullmatch(r":?-+:?", c) for c in row if c)]
            _add_rows(collector, header, body, task)
            found = True
        block = []

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            block.append(_split_markdown_row(stripped))
            continue
        flush()
        if stripped.startswith("#"):
            task = stripped.lstrip("#").strip() or default_task
    flush()
    if not found:
        raise ValueError(f"{collector.origin}: no markdown pipe table found")


def _add_source_mapping(collector: _Collector, source: str, mapping: Any, default_task: str) -> None:
    """{policy: rate} or {task: {policy: rate}} for one evaluation source."""
    if not isinstance(mapping, Mapping):
        raise ValueError(f"{collector.origin}: {source!r} must map policies (or tasks) to success rates")
    nested = [isinstance(v, Mapping) for v in mapping.values()]
    if any(nested) and not all(nested):
        raise ValueError(f"{collector.origin}: {source!r} mixes per-task dicts and plain success rates")
    if all(nested) and nested:
        for task, rates in mapping.items():
            for policy, value in rates.items():
                collector.add(str(task), source, policy, value)
    else:
        for policy, value in mapping.items():
            collector.add(default_task, source, policy, value)


def _holds_rates(value: Any) -> bool:
    """Whether a JSON entry holds any success rate (a number or a numeric string, possibly nested in
    per-task dicts). Entries that hold none are metadata, such as simpler-env's ckpt aliases, a
    description or a trial count, and are ignored."""
    if isinstance(value, Mapping):
        return any(_holds_rates(v) for v in value.values())
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        value = value.strip().strip("*`").strip().rstrip("%").strip()
    try:
        return isinstance(value, int | float | str) and math.isfinite(float(value))
    except (ValueError, OverflowError):
        return False


def _metadata_reason(mapping: Any, real: Any) -> str | None:
    """Why a JSON entry beside the real rates is metadata rather than a simulator's rates (None: it is a
    simulator). A simulator's entry is shaped as the real one: a mapping holding rates, nested per task
    exactly when the real one is, naming at least one of its tasks or policies. So metadata with numbers
    among its text (a trial count, a date, per-task episode counts) is skipped, while a simulator that
    lists other policies than the real one still fails loudly on the mismatch."""
    if not isinstance(mapping, Mapping):
        return f"a {type(mapping).__name__}, not a mapping of rates"
    if not _holds_rates(mapping):
        return "holds no success rate"
    nested = all(isinstance(v, Mapping) for v in real.values()) if isinstance(real, Mapping) and real else False
    if any(isinstance(v, Mapping) for v in mapping.values()) != nested:
        return "not shaped as the real rates (" + ("per task" if nested else "per policy") + ")"
    if isinstance(real, Mapping) and not set(map(str, mapping)) & set(map(str, real)):
        return "names none of the real rates' " + ("tasks" if nested else "policies")
    return None


def _add_sources(collector: _Collector, sources: Mapping, default_task: str, prefix: str = "") -> None:
    """Every entry of a mapping that has a real entry: the real rates, the simulators shaped like them,
    and metadata (skipped, listed in `collector.skipped`)."""
    real = next(mapping for source, mapping in sources.items() if _is_real(source))
    for source, mapping in sources.items():
        reason = None if _is_real(source) else _metadata_reason(mapping, real)
        if reason is None:
            _add_source_mapping(collector, source, mapping, default_task)
        else:
            collector.skipped.append(f"{prefix}{source}: {reason}")


def _parse_json(data: Any, collector: _Collector, default_task: str) -> None:
    """Records [{policy, real, <sim>...}], {source: {policy: rate}} / {source: {task: {policy: rate}}}
    (simpler-env's REAL_PERF / SIMPLER_PERF), or {task: {source: {policy: rate}}}. In the two mapping
    layouts an entry that is not shaped as the real rates is metadata: skipped and listed
    (`_metadata_reason`); in the per-task layout, so is a top-level entry without a real entry."""
    if isinstance(data, list):
        if not data or not all(isinstance(r, Mapping) for r in data):
            raise ValueError(f"{collector.origin}: a JSON list must hold one object per policy")
        header = list(dict.fromkeys(key for record in data for key in record))
        rows = [[record.get(key, "") for key in header] for record in data]
        _add_rows(collector, header, rows, default_task)
        return
    if not isinstance(data, Mapping):
        raise ValueError(f"{collector.origin}: unsupported JSON layout ({type(data).__name__})")
    if any(_is_real(key) for key in data):
        _add_sources(collector, data, default_task)
        return
    with_real = {task for task, sources in data.items()
                 if isinstance(sources, Mapping) and any(_is_real(key) for key in sources)}  # fmt: skip
    if not with_real:
        raise ValueError(
            f"{collector.origin}: no 'real' entry: expected {{'real': ..., '<sim>': ...}} at the top level "
            f"or under each task (top-level keys: {sorted(map(str, data))[:8]})"
        )
    for task, sources in data.items():
        if task in with_real:
            _add_sources(collector, sources, str(task), prefix=f"{task}.")
        else:
            lacks_real = isinstance(sources, Mapping) and _holds_rates(sources)
            collector.skipped.append(f"{task}: " + ("no 'real' entry" if lacks_real else _metadata_reason(sources, None)))


@dataclass
class SuccessTable:
    """A result table as read: one `TaskSuccessRates` per task, and the entries skipped as metadata."""

    tasks: list[TaskSuccessRates]
    skipped: list[str] = field(default_factory=list)


def load_success_table(
    path: str | Path, percent: bool = False, task: str | None = None
) -> list[TaskSuccessRates]:
    """Per-task, per-policy real and simulated success rates from a CSV/TSV, markdown or JSON file
    (`read_success_table(...).tasks`)."""
    return read_success_table(path, percent=percent, task=task).tasks


def read_success_table(path: str | Path, percent: bool = False, task: str | None = None) -> SuccessTable:
    """Per-task, per-policy real and simulated success rates from a CSV/TSV, markdown or JSON file, and the
    JSON entries skipped as metadata.

    Layouts: long (one row per policy: `policy`, `real`, one column per simulator, optional `task`),
    wide (one row per evaluation named e.g. 'Real' / 'SIMPLER', one column per policy), markdown pipe
    tables of either layout (a heading names the task), and JSON as simpler-env keeps its numbers
    ({"real": {task: {policy: rate}}, "<sim>": ...}; entries not shaped as the real rates, such as metadata
    beside REAL_PERF / SIMPLER_PERF with a trial count or a date in it, are skipped and listed in
    `SuccessTable.skipped`). Rates are fractions; '85%' cells or
    `percent=True` read percentages. `task` names the task of single-task tables (default: file stem).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"success table not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error})") from None
    collector = _Collector(percent=percent, origin=str(path))
    default_task = task or path.stem
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise ValueError(f"{path}: invalid JSON ({error})") from None
        _parse_json(data, collector, default_task)
    elif suffix in (".md", ".markdown"):
        _parse_markdown(text, collector, default_task)
    elif suffix in (".csv", ".tsv", ".txt"):
        _parse_csv(text, collector, default_task, "\t" if suffix == ".tsv" else ",")
    else:
        raise ValueError(f"{path}: unknown table format {suffix!r} (use .csv, .tsv, .md or .json)")
    return SuccessTable(collector.tables(), collector.skipped)
