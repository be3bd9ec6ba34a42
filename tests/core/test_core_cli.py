"""The `rlvr-sim` console script routes every subcommand and fails clearly on bad ones."""

from rlvr_sim.cli import main, reward_curve


def test_help_and_unknown_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("demo", "sft", "grpo", "eval", "play textgame", "collect", "view"):
        assert command in out
    assert main(["frobnicate"]) == 2
    assert main(["eval", "nothing"]) == 2
    assert main(["play", "chess"]) == 2


def test_train_subcommand_reports_bad_settings(capsys):
    assert main(["grpo", "--task", "addition", "steps=-3"]) == 2
    assert "steps must be" in capsys.readouterr().err


def test_collect_requires_a_known_task(capsys):
    assert main(["collect", "--task", "nothing"]) == 2
    assert "usage" in capsys.readouterr().err


def test_reward_curve_draws_one_line_per_step():
    text = reward_curve([{"step": 1, "reward": 0.25, "kl": 0.0}, {"step": 2, "reward": 0.75, "kl": 0.01}])
    lines = text.splitlines()
    assert len(lines) == 2 and lines[1].count("#") == 30 and "0.750" in lines[1]
