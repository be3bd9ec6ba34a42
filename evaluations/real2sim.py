"""Real2Sim policy evaluation: does a simulator rank policies the way the real world does?

Reads per-policy success rates (real world and one or more simulators) from a result table and writes
SIMPLER's metrics per task and averaged over tasks: Pearson correlation (higher is better) and MMRV, the
mean maximum rank violation (lower is better). See `rlvr_sim.metrics.real2sim` for the definitions and
the table layouts (CSV/TSV, markdown, JSON as simpler-env keeps its numbers).

    python evaluations/real2sim.py --table results.csv --out-dir runs/real2sim
    python evaluations/real2sim.py --table paper_table.md --percent --out-dir runs/real2sim

Success rates measured by rolling policies out in a learned simulator and in the ground-truth env go
through the same path: write them as a table (policy, real, <simulator>...) and pass it here.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr_sim.metrics.real2sim import load_success_table, real2sim_report, report_markdown


def evaluate_table(table: str | Path, percent: bool = False, task: str | None = None) -> dict[str, Any]:
    """Pearson and MMRV of every simulator in a result table, per task and averaged over tasks."""
    report = real2sim_report(load_success_table(table, percent=percent, task=task))
    report["source"] = str(table)
    report["metric_definitions"] = {
        "pearson": "Pearson correlation of per-policy success rates, simpler-env formula (higher is better)",
        "mmrv": "mean over policies i of max_j |real_i - real_j| where sim and real order (i, j) "
        "differently, strict >, as simpler-env (lower is better)",
    }
    return report


def write_report(report: dict[str, Any], out_dir: str | Path, name: str = "real2sim") -> tuple[Path, Path]:
    """Write `<name>.json` and `<name>.md` into `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    markdown_path.write_text(f"Real2Sim policy evaluation ({report['source']})\n\n" + report_markdown(report))
    return json_path, markdown_path


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description="Real2Sim metrics (Pearson, MMRV) from a success-rate table."
    )
    parser.add_argument("--table", required=True, help="CSV/TSV, markdown or JSON table of success rates")
    parser.add_argument("--percent", action="store_true", help="numbers in the table are percentages")
    parser.add_argument("--task", help="task name of a single-task table (default: the file name)")
    parser.add_argument("--out-dir", default="runs/real2sim", help="where real2sim.json and real2sim.md go")
    args = parser.parse_args(argv)
    report = evaluate_table(args.table, percent=args.percent, task=args.task)
    json_path, markdown_path = write_report(report, args.out_dir)
    print(markdown_path.read_text())
    print(f"wrote {json_path} and {markdown_path}")
    return report


if __name__ == "__main__":
    main()
