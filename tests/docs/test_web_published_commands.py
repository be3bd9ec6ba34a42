"""Every web command docs/web.md (which holds the README's former web section), the model cards and the committed result tables print re-runs from
a clone, in a reduced form: the collect commands write a few episodes, the evaluation commands score two
transitions or run one step of one task, on the data the reduced collect commands wrote. A command that no
longer parses or runs, cites an output of this machine only (`runs/`, `/tmp`) in a result table, or reads data
that no printed collect command creates, fails here."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "evaluations" / "results"


def web_commands_section() -> str:
    """docs/web.md's commands section (the README links there; it once held these commands itself)."""
    text = (REPO / "docs" / "web.md").read_text()
    start = text.index("## Commands, and what RLVR did at this size")
    end = text.find("\n## ", start + 1)
    return text[start: end if end >= 0 else len(text)]


def printed_commands() -> list[str]:
    """`python ...` commands of docs/web.md (its commands section first), the web model cards and the web tables."""
    texts = [web_commands_section(), (REPO / "docs" / "web.md").read_text(),
             (REPO / "assets" / "web_sft" / "README.md").read_text(), (REPO / "assets" / "web_rlvr" / "README.md").read_text()]
    commands: list[str] = []
    for text in texts:
        commands += [line.split("  #")[0].strip() for line in text.splitlines() if line.startswith("python ")]
        commands += [c.strip() for c in re.findall(r"`(python [^`]+)`", text)]
    commands += table_commands()
    unique: dict[str, str] = {}
    for command in commands:
        for part in command.split("&&"):
            part = " ".join(part.split())
            if part.startswith("python training/collect.py --task web"):
                unique.setdefault(part, part)
            elif part.startswith("python evaluations/web"):  # the reduced run picks its own output folder
                unique.setdefault(re.sub(r" --out \S+", "", part), part)
    return list(unique.values())


def table_commands() -> list[str]:
    """The commands recorded in the committed web result files (every row and agent names its own)."""
    commands = []
    for path in sorted(RESULTS.glob("web*.json")) + sorted(RESULTS.glob("web*/*.json")):
        data = json.loads(path.read_text())
        rows = data.get("rows") or list((data.get("results") or {}).values())
        commands += [row["command"] for row in rows if row.get("command")]
        commands += re.findall(r"`(python [^`]+)`", data.get("note", ""))
    return commands


def test_result_tables_cite_only_commands_a_clone_can_run():
    commands = table_commands()
    assert commands, "no commands recorded in evaluations/results/web*"
    for command in commands:
        assert "runs/" not in command and "/tmp" not in command, command


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> dict[str, Path]:
    """Each printed web collect command, reduced to 4 episodes of 2 steps, 90% of them test; {its --out: where it wrote}."""
    from rlvr_sim.envs.web.collect import main as collect_main

    root = tmp_path_factory.mktemp("collected")
    out: dict[str, Path] = {}
    for command in printed_commands():
        if not command.startswith("python training/collect.py"):
            continue
        argv = shlex.split(command)[2:]
        argv.remove("--task"), argv.remove("web")
        target = argv[argv.index("--out") + 1]
        where = root / f"{len(out)}_{target.replace('/', '_')}"
        argv[argv.index("--out") + 1] = str(where)
        if "--start-pages" in argv:
            argv[argv.index("--start-pages") + 1] = str(root / "start_pages.json")
        assert collect_main(argv + ["--episodes", "4", "--max-steps", "2", "--test-fraction", "0.9"]) == 0, command
        out.setdefault(target, where)
    return out


def reduced(command: str, collected: dict[str, Path], out_dir: Path) -> list[str]:
    argv = shlex.split(command)[2:]
    for i, arg in enumerate(argv):
        if arg.startswith("data/"):
            assert arg.rstrip("/") in collected, f"{command}: no printed collect command creates {arg}"
            argv[i] = str(collected[arg.rstrip("/")])
        elif "runs/" in arg:
            pytest.fail(f"{command}: cites {arg}, which only a training run on this machine creates")
    if "--out" in argv:
        argv[argv.index("--out") + 1] = str(out_dir)
    else:
        argv += ["--out", str(out_dir)]
    return argv


def evaluation_commands(script: str) -> list[str]:
    return [c for c in printed_commands() if c.startswith(f"python evaluations/{script} ") or
            c == f"python evaluations/{script}"]


def test_printed_commands_found():
    commands = printed_commands()
    assert any(c.startswith("python training/collect.py") for c in commands)
    assert evaluation_commands("web.py") and evaluation_commands("web_agent.py")


@pytest.mark.parametrize("command", evaluation_commands("web.py"))
def test_world_model_table_command_reruns(command, collected, tmp_path):
    from rlvr_sim.evaluations.web import main

    argv = reduced(command, collected, tmp_path)
    assert main(argv + ["--limit", "2", "--batch-size", "2"]) == 0, command
    rows = json.loads((tmp_path / "web.json").read_text())["rows"]
    assert rows[0]["model"] == "No-change baseline" and all(0 <= r["f1"] <= 100 for r in rows)


@pytest.mark.parametrize("command", evaluation_commands("web_agent.py"))
def test_agent_table_command_reruns(command, collected, tmp_path):
    from rlvr_sim.evaluations.web_agent import main

    argv = reduced(command, collected, tmp_path) + ["--tasks", "18", "--repeats", "1", "--max-steps", "1",
                                                    "--samples", "4", "--top-k", "1"]
    assert main(argv) == 0, command
    if "--demo" not in argv:
        assert list(tmp_path.glob("web_*.md")), command
