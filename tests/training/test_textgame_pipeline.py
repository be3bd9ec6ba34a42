"""training/textgame_pipeline.py drives the package's own scripts and presets, found next to it (so it runs from
any working directory and from an installed package), in the documented order. The stages themselves are
the scripts' own tests; here each launch is recorded instead of run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from rlvr_sim.training import textgame_pipeline as pipeline

REPO = Path(__file__).resolve().parents[2]


def record_launches(monkeypatch) -> list[list[str]]:
    launched: list[list[str]] = []

    def run(command, log, env):
        launched.append(command)
        log.write_text("accuracy table\n")
        return None

    monkeypatch.setattr(pipeline, "_run", run)
    monkeypatch.setattr(pipeline, "_wait", lambda process, log: None)
    return launched


def test_pipeline_launches_existing_scripts_and_presets_from_any_directory(tmp_path, monkeypatch, capsys):
    launched = record_launches(monkeypatch)
    monkeypatch.chdir(tmp_path)  # outside the repository
    assert pipeline.main(["--out", "runs_here", "--data", "no_data_yet"]) == 0
    scripts = [Path(command[1]) for command in launched]
    assert [s.name for s in scripts] == ["collect.py", "sft.py", "grpo.py", "grpo.py", "textgame.py"]
    for command in launched:
        assert Path(command[1]).is_absolute() and Path(command[1]).is_file(), command
        if "--preset" in command:
            assert Path(command[command.index("--preset") + 1]).is_file(), command
    assert scripts[-1].parent.name == "evaluations"
    assert f"--out={Path('runs_here') / 'textgame_eval'}" in launched[-1]
    assert any("output_dir=runs_here/textgame_rlvr_binary" in arg for arg in launched[2])
    assert "accuracy table" in capsys.readouterr().out


def test_pipeline_commands_read_relative_inside_the_clone(tmp_path, monkeypatch):
    """As the model cards record them: `training/sft.py --preset training/configs/...`."""
    launched = record_launches(monkeypatch)
    monkeypatch.chdir(REPO)
    assert pipeline.main(["--out", str(tmp_path / "runs"), "--data", str(tmp_path / "data")]) == 0
    assert [command[1] for command in launched] == ["training/collect.py", "training/sft.py", "training/grpo.py",
                                                    "training/grpo.py", "evaluations/textgame.py"]
    assert launched[1][2:4] == ["--preset", "training/configs/textgame_sft.yaml"]


def test_removed_spellings_name_their_replacements(tmp_path, capsys):
    """The pipeline's old module path and its old output flag stop with an error that names the new ones."""
    result = subprocess.run([sys.executable, "-m", "rlvr_sim.envs.textgame.pipeline", "--help"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "ImportError" in result.stderr
    assert "removed: use python training/textgame_pipeline.py" in result.stderr
    with pytest.raises(SystemExit) as stop:
        pipeline.main(["--runs", str(tmp_path / "runs")])
    assert stop.value.code == 2 and "--runs was removed: use --out" in capsys.readouterr().err
