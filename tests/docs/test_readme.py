"""The README is a short front door whose every code block runs as printed.

Each ```python block runs in a fresh interpreter from an empty folder (the package must work from anywhere).
The ```bash blocks run line by line, in the order shown, from a folder laid out like a clone's root (links to
`training/` and `evaluations/`), so a command that needs an earlier one's output finds it only if the README
prints that one first. Long commands run with a smaller budget, appended as the README's own `key=value`
overrides or flags (REDUCED); the lines in NOT_RUN are not run here, for the reason given. A printed command
that matches neither fails the test, so a new snippet needs a rule.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
MAX_LINES = 200

NOT_RUN = {  # the exact command (or, ending in a space, a prefix) -> why it is not run here
    "bash scripts/demo.sh": "installs packages, then runs `rlvr-sim demo`: its sections run in tests/envs/"
                            "test_video_demo.py and test_addition_demo_says_a_short_run_is_short below",
    "bash scripts/test.sh": "it is this test suite",
    "pip install ": "the test environment is the installation",
    "rlvr-sim view": "an interactive pygame window (tests/viewer plays it headless)",
    "python training/video_pipeline.py --data tests/fixtures/lerobot_v30 ": "runs exactly so (same fixture, same "
        "budgets) in tests/training/test_video_pipeline.py, which also serves and steps the packaged model",
}
TINY_GRPO = " steps=1 batch_size=4 micro_batch_size=4 group_size=2 eval_examples=4"
REDUCED = {  # prefix -> (text replaced, replacement) or appended text; a smaller budget for a long command
    "python training/sft.py": " steps=2 eval_examples=4",
    "python training/grpo.py": TINY_GRPO,
    "torchrun --nproc_per_node 2 training/grpo.py": TINY_GRPO,
    "printf ": "",
    "python evaluations/real2sim.py --table": "",
    "rlvr-sim view --mode policy --record": ("--steps 20", "--steps 3"),
}
CHECKS = {  # a line run after a python block that names this id: what the snippet promises
    "RLVRWorld-TextGame-v0": "assert isinstance(obs, str) and isinstance(info['parse_ok'], bool)",
    "RLVRWorld-Web-v0": "assert isinstance(tree, str) and tree.strip()",
    "RLVRWorld-Video-v0": "assert frame is not None and frame.shape == (64, 64, 3) and frame.dtype.name == 'uint8'",
}


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def shell_commands() -> list[str]:
    """Every command of the README's bash blocks, in order, without its trailing comment."""
    lines = [line.split("  #")[0].strip() for block in code_blocks("bash") for line in block.splitlines()]
    return [line for line in lines if line]


def not_run(command: str) -> bool:
    return any(command == key or (key.endswith(" ") and command.startswith(key)) for key in NOT_RUN)


def _environment() -> dict[str, str]:
    return {**os.environ, "SDL_VIDEODRIVER": "dummy", "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl"),
            "OMP_NUM_THREADS": "1", "PYTHONPATH": ""}


def _clone_like(tmp_path: Path) -> Path:
    """A folder laid out like a clone's root for the scripts the README runs by path, with nothing else in it."""
    root = tmp_path / "clone"
    root.mkdir()
    for folder in ("training", "evaluations"):
        (root / folder).symlink_to(REPO / folder)
    return root


def test_readme_is_short_and_names_the_two_commands():
    assert len(README.splitlines()) <= MAX_LINES
    commands = shell_commands()
    assert commands[:2] == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    assert "## Video world models" in README and "python training/video_pipeline.py --data" in README


def test_readme_links_resolve():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    assert links, "the README links nothing"
    missing = [link for link in links if "://" not in link and not (REPO / link).exists()]
    assert missing == []


def test_every_printed_command_has_a_rule():
    unknown = [c for c in shell_commands() if not not_run(c) and not any(c.startswith(p) for p in REDUCED)]
    assert unknown == [], "add each to REDUCED (run with a budget) or NOT_RUN (with the reason)"


@pytest.mark.skipif(importlib.util.find_spec("gym_pusht") is None, reason="the [video] extra is not installed")
@pytest.mark.parametrize("block", code_blocks("python"), ids=lambda b: re.search(r'"(RLVRWorld-[\w-]+)"', b).group(1))
def test_python_snippet_runs_from_anywhere(block, tmp_path):
    env_id = re.search(r'"(RLVRWorld-[\w-]+)"', block).group(1)
    proc = subprocess.run([sys.executable, "-c", block + "\n" + CHECKS[env_id]], cwd=tmp_path, env=_environment(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ALSA" not in proc.stderr  # no sound-library noise from pygame


@pytest.mark.skipif(importlib.util.find_spec("gym_pusht") is None, reason="the [video] extra is not installed")
def test_shell_commands_run_in_the_order_shown(tmp_path):
    root = _clone_like(tmp_path)
    ran = []
    for command in shell_commands():
        if not_run(command):
            continue
        prefix = next(p for p in REDUCED if command.startswith(p))
        change = REDUCED[prefix]
        reduced = command.replace(*change) if isinstance(change, tuple) else command + change
        proc = subprocess.run(reduced, shell=True, cwd=root, env=_environment(), capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{reduced}\n{proc.stderr[-3000:]}"
        ran.append(prefix)
    assert {"python training/sft.py", "python training/grpo.py", "python evaluations/real2sim.py --table",
            "rlvr-sim view --mode policy --record"} <= set(ran)
    assert (root / "runs" / "addition_grpo" / "final" / "config.json").exists()
    assert (root / "run.gif").stat().st_size > 0


def test_the_install_lines_cover_the_extras_the_commands_need():
    """The suite runs with every extra installed, so a README command that needs one the README's install lines
    leave out would pass here and fail for a user (a fresh venv did: the LeRobot pipeline needs `[data]`)."""
    installed = set()
    for command in shell_commands():
        match = re.match(r"""pip install ["']?\.\[([\w,]+)\]""", command)
        if match:
            installed |= set(match.group(1).split(","))
    needs = {"python training/video_pipeline.py --data tests/fixtures/lerobot": {"video", "data"},
             "rlvr-sim view": {"video"}}
    for prefix, extras in needs.items():
        if any(c.startswith(prefix) for c in shell_commands()):
            assert extras <= installed, f"{prefix} needs the extras {sorted(extras - installed)}: add them to Install"


def test_grpo_before_sft_names_the_command_to_run_first(tmp_path):
    """From a fresh clone, the README's GRPO line alone fails, and its error says which command to run first."""
    root = _clone_like(tmp_path)
    grpo = next(c for c in shell_commands() if c.startswith("python training/grpo.py"))
    proc = subprocess.run(grpo + TINY_GRPO, shell=True, cwd=root, env=_environment(), capture_output=True,
                          text=True, timeout=600)
    sft = next(c for c in shell_commands() if c.startswith("python training/sft.py"))
    preset = sft[sft.index("--preset"):].split()[1]
    assert proc.returncode == 2 and "checkpoint not found" in proc.stderr
    assert f"python training/sft.py --preset {preset}" in proc.stderr, proc.stderr[-2000:]


def test_addition_demo_says_a_short_run_is_short(tmp_path):
    from rlvr_sim.cli import FULL_GRPO_STEPS, addition_demo

    text, summary = addition_demo(str(tmp_path), grpo_steps=1)
    assert len(summary["history"]) == 1 and f"A short run: 1 of the {FULL_GRPO_STEPS} steps" in text
    assert f"--grpo-steps {FULL_GRPO_STEPS}" in text


def test_demo_prints_the_readme_headline_tables():
    """`rlvr-sim demo` ends each modality's section with the same table the README shows."""
    from rlvr_sim.cli import _headline

    for name in ("textgame.json", "web.json", "video.json"):
        table = [line for line in _headline(name).splitlines() if line.startswith("|")]
        assert len(table) >= 5 and all(line in README for line in table), name
