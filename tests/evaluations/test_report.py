"""docs/results.md's results section and the README's headline tables are exactly what `evaluations/report.py`
generates from the committed result files, and benchmark tables show measured figures, not run metadata."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _generated(*flags: str) -> str:
    out = subprocess.run([sys.executable, "evaluations/report.py", "--print", *flags], cwd=REPO, capture_output=True,
                         text=True, timeout=300, check=True)
    return out.stdout.strip()


def _between(text: str, start: str, end: str) -> str:
    return text[text.index(start): text.index(end)].split("\n", 1)[1].strip()


def test_results_page_is_the_generated_one():
    page = (REPO / "docs" / "results.md").read_text()
    assert _between(page, "<!-- results:start -->", "<!-- results:end -->") == _generated()


def test_readme_headline_tables_are_the_generated_ones():
    readme = (REPO / "README.md").read_text()
    generated = _generated("--headline")
    assert _between(readme, "<!-- headline:start -->", "<!-- headline:end -->") == generated
    # one table per modality, each with its trivial baseline, its likelihood-trained model and RLVR
    for modality, rows in {"Text game": ("copy the current state (trivial)", "SFT", "RLVR"),
                           "Web": ("No-change baseline (trivial)", "SFT", "RLVR"),
                           "PushT": ("copy the last frame (trivial)", "MLE", "RLVR")}.items():
        table = generated[generated.index(f"| {modality}"):].split("\n\n", 1)[0]
        assert all(f"| {row}" in table for row in rows), (modality, table)
        assert table.count("[") >= 3, f"{modality}: intervals missing"


def test_env_benchmarks_show_rates_and_ratios_not_metadata():
    text = _generated()
    for name in ("textgame_env", "web_env"):
        block = text[text.index(f"`benchmarks/results/{name}.json`"):]
        block = block[: block.index("\n`benchmarks/") if "\n`benchmarks/" in block else len(block)]
        assert "| figure | value |" not in block, name  # the generic dump of a file's keys
        assert "| batch1 |" in block and "x** |" in block, name


def test_report_refuses_a_folder_without_results(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "evaluations" / "report.py"), "--print"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "root of a clone" in proc.stderr
