"""The README's results section is exactly what `evaluations/report.py` generates from the committed result
files, and benchmark tables show measured figures, not run metadata."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _generated() -> str:
    out = subprocess.run([sys.executable, "evaluations/report.py", "--print"], cwd=REPO, capture_output=True,
                         text=True, timeout=300, check=True)
    return out.stdout.strip()


def test_readme_results_section_is_the_generated_one():
    readme = (REPO / "README.md").read_text()
    start, end = readme.index("<!-- results:start -->"), readme.index("<!-- results:end -->")
    assert readme[start:end].split("\n", 1)[1].strip() == _generated()


def test_env_benchmarks_show_rates_and_ratios_not_metadata():
    text = _generated()
    for name in ("textgame_env", "web_env"):
        block = text[text.index(f"`benchmarks/results/{name}.json`"):]
        block = block[: block.index("\n`benchmarks/") if "\n`benchmarks/" in block else len(block)]
        assert "| figure | value |" not in block, name  # the generic dump of a file's keys
        assert "| batch1 |" in block and "x** |" in block, name
