"""Every text-game command docs/textgame.md's commands section, the text-game model cards and the committed text-game
table print re-runs from a clone, in a reduced form: the collect commands play 2 episodes per game, the training
commands take one step on that data, the evaluation commands score 2 transitions per data set. A command that no
longer parses or runs, or reads data or a checkpoint that no printed command creates (a `runs/` or `data/` path
left over on the machine that trained the embedded models), fails here.

Not re-run: the one-command pipeline (`training/textgame_pipeline.py`, formerly `rlvr_sim.envs.textgame.pipeline`:
the model cards' commands in sequence at full length, 38 min; each of them is re-run here) and `rlvr-sim play textgame` (interactive; tests/viewer plays it)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CARDS = ("textgame_sft", "textgame_rlvr_binary", "textgame_rlvr_task_specific")
NOT_RERUN = ("python -m rlvr_sim.envs.textgame.pipeline", "python -m rlvr_sim.training.textgame_pipeline",
             "python training/textgame_pipeline.py")


def textgame_commands_section() -> str:
    """docs/textgame.md's commands section (the README links there; it once held these commands itself)."""
    text = (REPO / "docs" / "textgame.md").read_text()
    start = text.index("## Commands, and what RLVR did at this size")
    end = text.find("\n## ", start + 1)
    return text[start: end if end >= 0 else len(text)]


def printed_commands() -> list[str]:
    """`python ...` commands of docs/textgame.md's commands section, the text-game model cards and the table."""
    commands = [line.split("  #")[0].strip() for line in textgame_commands_section().splitlines()
                if line.startswith("python ")]
    for card in CARDS:
        commands += re.findall(r"`(python [^`]+)`", (REPO / "assets" / card / "README.md").read_text())
    table = json.loads((REPO / "evaluations" / "results" / "textgame.json").read_text())
    commands.append(table["command"])
    unique = dict.fromkeys(" ".join(c.split()) for c in commands if not c.startswith(NOT_RERUN))
    return list(unique)


def test_printed_commands_found():
    commands = printed_commands()
    for prefix in ("python training/collect.py --task textgame", "python training/sft.py",
                   "python training/grpo.py", "python evaluations/textgame.py"):
        assert any(c.startswith(prefix) for c in commands), prefix
    assert sum(c.startswith("python training/") for c in commands) >= 6  # README's + the three cards'


def _remap(value: str, outputs: dict[str, Path], command: str) -> str:
    """`value` with a `data/...` or `runs/...` prefix replaced by where the reduced run of the printed command
    that creates it wrote; a path that no printed command creates fails the test."""
    if not value.startswith(("data/", "runs/")):
        return value
    for target in sorted(outputs, key=len, reverse=True):
        if value == target or value.startswith(target + "/"):
            return str(outputs[target]) + value[len(target):]
    pytest.fail(f"{command}: reads {value}, which no printed command creates")


def _rerun_all(tmp_path: Path) -> dict[str, list[str]]:
    from rlvr_sim.envs.textgame.collect import main as collect_main
    from rlvr_sim.evaluations.textgame import DEFAULT_DATA_DIR, DEFAULT_DATASETS
    from rlvr_sim.evaluations.textgame import main as evaluate_main

    from rlvr_sim.config import load_config
    from rlvr_sim.rl.cli import main as train_main

    commands = printed_commands()
    outputs: dict[str, Path] = {}
    done: dict[str, list[str]] = {"collect": [], "train": [], "evaluate": []}
    for command in (c for c in commands if c.startswith("python training/collect.py")):
        argv = shlex.split(command)[2:]
        argv.remove("--task"), argv.remove("textgame")
        target = argv[argv.index("--out") + 1].rstrip("/")
        outputs.setdefault(target, tmp_path / "data" / target.replace("/", "_"))
        argv[argv.index("--out") + 1] = str(outputs[target])
        assert collect_main(argv + ["--episodes-per-game", "2", "--max-steps", "4"]) == 0, command
        done["collect"].append(command)
    training = [c for c in commands if c.startswith(("python training/sft.py", "python training/grpo.py"))]
    for command in sorted(training, key=lambda c: "grpo.py" in c):  # SFT first: GRPO starts from its output
        mode, argv = ("grpo" if "grpo.py" in command else "sft"), shlex.split(command)[2:]
        preset = argv[argv.index("--preset") + 1]
        overrides = [a for a in argv if "=" in a and not a.startswith("--")]
        config = load_config(str(REPO / preset), overrides)
        target = str(config.output_dir).rstrip("/")
        outputs[target] = tmp_path / "runs" / f"{len(done['train'])}_{target.replace('/', '_')}"
        reduced = [f"output_dir={outputs[target]}", "steps=1", "batch_size=2", "micro_batch_size=2", "save_every=0",
                   f"task_args.data_dir={_remap(str(config.task_args['data_dir']), outputs, command)}"]
        name_or_path = (config.model or {}).get("name_or_path")
        if name_or_path:
            reduced.append(f"model.name_or_path={_remap(str(name_or_path), outputs, command)}")
        if mode == "grpo":
            reduced.append("group_size=2")
        argv[argv.index("--preset") + 1] = str(REPO / preset)
        assert train_main(mode, argv + reduced) == 0, command
        assert (outputs[target] / "final" / "model.safetensors").exists(), command
        done["train"].append(command)
    for command in (c for c in commands if c.startswith("python evaluations/textgame.py")):
        argv = shlex.split(command)[2:]
        for i, arg in enumerate(argv):
            if arg.startswith(("--data=", "--checkpoint=")) or (i and argv[i - 1] in ("--data", "--checkpoint")):
                head, _, value = arg.rpartition("=")
                argv[i] = f"{head}={_remap(value, outputs, command)}"
        if not any(a == "--data" or a.startswith("--data=") for a in argv):  # its default data: data/textgame
            argv += [f"--data={name}={_remap(str(DEFAULT_DATA_DIR / file), outputs, command)}"
                     for name, file in DEFAULT_DATASETS.items()]
        out = tmp_path / "eval" / str(len(done["evaluate"]))
        assert evaluate_main(argv + ["--limit", "2", "--jobs", "1", "--out", str(out)]) == 0, command
        results = json.loads(out.with_suffix(".json").read_text())
        assert results["datasets"] and all(
            0 <= row["overall"] <= 100 for data in results["datasets"].values() for row in data["rows"].values())
        done["evaluate"].append(command)
    return done


def test_every_printed_textgame_command_reruns_reduced(tmp_path):
    done = _rerun_all(tmp_path)
    assert sorted(sum(done.values(), [])) == sorted(printed_commands())  # every printed command, none left out


def test_model_card_names_the_card_whose_command_writes_its_starting_checkpoint(tmp_path):
    from rlvr_sim.training.textgame_pipeline import write_model_card

    meta = json.loads((REPO / "assets" / "textgame_rlvr_binary" / "rlvr_sim.json").read_text())
    (tmp_path / "rlvr_sim.json").write_text(json.dumps(meta))
    write_model_card(tmp_path, "card", {"train": {"transitions": 3}}, started_from="textgame_sft")
    card = (tmp_path / "README.md").read_text()
    assert f"- command: `{meta['command']}`" in card
    started = next(line for line in card.splitlines() if line.startswith("- started from:"))
    assert meta["config"]["model"]["name_or_path"] in started and "`assets/textgame_sft` card" in started
    write_model_card(tmp_path, "card")
    assert "card;" not in (tmp_path / "README.md").read_text()
    for card_name in CARDS[1:]:  # the committed cards say where their starting checkpoint comes from
        assert "`assets/textgame_sft` card" in (REPO / "assets" / card_name / "README.md").read_text()


def test_readme_twin_counts_are_those_of_the_documented_collection(tmp_path):
    """The split figures docs/textgame.md prints, from its own collect command at full size (~5 s)."""
    from rlvr_sim.envs.textgame.collect import main as collect_main

    section = textgame_commands_section()
    command = next(c for c in printed_commands() if c.startswith("python training/collect.py") and "--seed" in c)
    argv = shlex.split(command)[4:]
    argv[argv.index("--out") + 1] = str(tmp_path)
    assert collect_main(argv) == 0
    twins = json.loads((tmp_path / "stats.json").read_text())["test_twins"]
    printed = re.search(r"twin[^.]*?: (\d+) of the (\d+) of the documented\s+collection.*?(\d+) are near twins.*?"
                        r"\((\d+) with the same answer\)", section, re.S)
    assert printed, "docs/textgame.md's commands section no longer prints the twin counts"
    assert [int(g) for g in printed.groups()] == [twins["key_twins"], twins["test"], twins["object_twins"],
                                                  twins["object_twins_same_answer"]]
