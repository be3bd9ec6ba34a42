"""The `rlvr-sim` console script routes every subcommand and fails clearly on bad ones; scripts share one
output flag."""

import argparse

import pytest

from rlvr_sim.cli import main, reward_curve
from rlvr_sim.reporting import add_out_argument


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


def test_out_flag_and_its_removed_spellings(capsys):
    parser = argparse.ArgumentParser(prog="script")
    add_out_argument(parser, help="where to write", default="results", removed=("--out-dir", "--runs"))
    assert parser.parse_args([]).out == "results"
    assert parser.parse_args(["--out", "a"]).out == "a"
    assert capsys.readouterr().err == ""
    for argv in (["--out-dir", "b"], ["--runs", "c", "--out", "d"], ["--out-dir"]):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(argv)
        assert stop.value.code == 2
        assert f"{argv[0]} was removed: use --out {argv[1] if len(argv) > 1 else 'DIR'}" in capsys.readouterr().err
    help_text = parser.format_help()
    assert "--out OUT" in help_text and "--out-dir" not in help_text and "--runs" not in help_text


@pytest.mark.parametrize("module", ["rlvr_sim.evaluations.web", "rlvr_sim.evaluations.web_agent"])
def test_evaluation_scripts_take_out_and_refuse_out_dir(module, monkeypatch, tmp_path, capsys):
    """What each script does with the folder is tested with the script; here: `--out` reaches `results_dir`, the
    removed `--out-dir` stops before it with a usage error naming `--out`."""
    import importlib

    script = importlib.import_module(module)
    seen = []

    def stop(out):
        seen.append(out)
        raise SystemExit(0)

    monkeypatch.setattr(script, "results_dir", stop)
    for flag, code in (("--out", 0), ("--out-dir", 2)):
        with pytest.raises(SystemExit) as stop:
            script.main([flag, str(tmp_path / flag)])
        assert stop.value.code == code
    assert seen == [str(tmp_path / "--out")]
    assert "--out-dir was removed: use --out" in capsys.readouterr().err


def _script_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="script")
    parser.add_argument("--data", required=True)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lpips-weight", type=float, default=0.3)
    parser.add_argument("--kind", default="fsq", choices=("fsq", "pose"))
    parser.add_argument("--quiet", action="store_true")
    return parser


def test_preset_and_overrides_beside_flags_later_wins(tmp_path, capsys):
    from rlvr_sim.rl.cli import parse_with_preset

    preset = tmp_path / "p.yaml"
    preset.write_text("data: episodes\nsteps: 200\nlpips_weight: 1\nkind: pose\nquiet: true\n")
    args = parse_with_preset(_script_parser(), ["--preset", str(preset)])
    assert (args.data, args.steps, args.lpips_weight, args.kind, args.quiet) == ("episodes", 200, 1.0, "pose", True)
    assert isinstance(args.lpips_weight, float)
    args = parse_with_preset(_script_parser(), ["--preset", str(preset), "--steps", "7", "steps=9", "kind=fsq"])
    assert (args.steps, args.kind) == (9, "fsq")  # key=value beats the flag
    args = parse_with_preset(_script_parser(), ["--preset", str(preset), "--steps", "7"])
    assert args.steps == 7  # the flag beats the preset
    args = parse_with_preset(_script_parser(), ["--data", "d"])
    assert (args.steps, args.lpips_weight, args.kind, args.quiet) == (10, 0.3, "fsq", False)  # defaults
    for argv, message in ((["steps=3"], "missing --data"), (["--data", "d", "stpes=3"], "unknown settings"),
                          (["--data", "d", "steps=2.5"], "not a whole number"),
                          (["--data", "d", "kind=video"], "must be one of"),
                          (["--data", "d", "steps"], "key=value"),
                          (["--preset", str(tmp_path / "none.yaml")], "cannot read preset")):
        with pytest.raises(SystemExit) as exit_info:
            parse_with_preset(_script_parser(), argv)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err, argv


def test_tokenizer_script_reads_a_preset_like_its_flags(tmp_path):
    from rlvr_sim.training.tokenizer import parse_args

    flags = vars(parse_args(["--data", "d", "--out", "o", "--kind", "pose", "--steps", "50", "--levels", "8,5,5"]))
    (tmp_path / "tok.yaml").write_text("data: d\nout: o\nkind: pose\nsteps: 20\n")
    preset = vars(parse_args(["--preset", str(tmp_path / "tok.yaml"), "steps=50", "levels=8,5,5"]))
    for settings in (flags, preset):
        settings.pop("argv"), settings.pop("preset"), settings.pop("overrides")
    assert flags == preset
