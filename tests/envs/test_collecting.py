"""The collectors' shared helper (`rlvr_sim.envs.collecting`): one command-line idiom for the three
collectors, policies named by class (collectors import none), the seedless key split."""

from __future__ import annotations

import importlib
import importlib.util
import textwrap

import numpy as np
import pytest
from rlvr_sim.envs import collecting
from rlvr_sim.envs.collecting import collector_parser, key_digest, key_split, load_class
from rlvr_sim.training.collect import COLLECTORS


@pytest.mark.parametrize("task", sorted(COLLECTORS))
def test_every_collector_takes_out_and_seed(task, capsys):
    try:
        module = importlib.import_module(COLLECTORS[task])
    except ImportError as err:  # an optional modality's dependencies are not installed
        pytest.skip(f"{task}: {err}")
    with pytest.raises(SystemExit) as exit_info:
        module.main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "--out OUT" in text and "--seed SEED" in text and "--out-dir" not in text


def test_collector_parser_requires_out_unless_it_has_a_default(capsys):
    assert collector_parser("d", out_default="data/x").parse_args([]).out == "data/x"
    parsed = collector_parser("d").parse_args(["--out", "o", "--seed", "3"])
    assert (parsed.out, parsed.seed) == ("o", 3)
    with pytest.raises(SystemExit):
        collector_parser("d").parse_args([])
    assert "required: --out" in capsys.readouterr().err


def test_load_class_and_its_error():
    assert load_class("collections:OrderedDict").__name__ == "OrderedDict"
    for spec in ("no_such_module:Policy", "collections:NoSuchClass", "collections"):
        with pytest.raises(ValueError, match="cannot load policy"):
            load_class(spec, "policy")


def test_key_split_is_seedless_and_twins_count_repeats():
    keys = [key_digest(f"page\x00click [{i}]") for i in range(2000)]
    assert key_digest("a") == key_digest("a") != key_digest("b")
    sides = [key_split(k, 0.25) for k in keys]
    assert sides == [key_split(k, 0.25) for k in keys] and 0.2 < sides.count("test") / len(keys) < 0.3
    twins = collecting.count_key_twins(keys[:10], [keys[0], keys[0], keys[10]], key=str)
    assert twins == {"test": 3, "key_twins": 2}


def test_split_transitions_reads_files_as_given_and_directories_by_split(tmp_path):
    (tmp_path / "train.jsonl").write_text("a\nb\n")
    (tmp_path / "test.jsonl").write_text("c\n")
    lines = lambda path: path.read_text().split()  # noqa: E731 - a one-line loader
    assert collecting.split_transitions([tmp_path], "train", lines, "textgame") == ["a", "b"]
    assert collecting.split_transitions([tmp_path, tmp_path / "test.jsonl"], "train", lines, "textgame") == ["a", "b", "c"]
    with pytest.raises(FileNotFoundError, match="--task textgame"):
        collecting.split_transitions([tmp_path], "valid", lines, "textgame")


POLICY = '''
import numpy as np


class StillPolicy:
    """Holds the agent at one point per skill name."""

    TARGETS = {"left": (100.0, 256.0), "right": (400.0, 256.0)}

    def __init__(self, skill, seed=0):
        if skill not in self.TARGETS:
            raise ValueError(f"no such skill {skill!r}")
        self.target = np.array(self.TARGETS[skill], np.float32)

    def act(self, info):
        return self.target.copy()
'''


def test_video_collector_plays_the_policy_class_named_on_its_command_line(tmp_path, monkeypatch):
    if importlib.util.find_spec("gym_pusht") is None:
        pytest.skip("gym-pusht (the video extra) is not installed")
    from rlvr_sim.envs.video.collect import main

    (tmp_path / "still_policy.py").write_text(textwrap.dedent(POLICY))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "episodes"
    main(["--out", str(out), "--episodes", "2", "--max-steps", "8", "--mix", "left:1,right:1",
          "--policy", "still_policy:StillPolicy"])
    for path in sorted(out.glob("*.npz")):
        with np.load(path) as episode:
            target = {"left": (100.0, 256.0), "right": (400.0, 256.0)}[str(episode["policy"])]
            assert np.array_equal(episode["action"], np.tile(np.float32(target), (len(episode["action"]), 1)))
    with pytest.raises(ValueError, match="unknown policy 'up' in --mix: no such skill"):
        main(["--out", str(out), "--episodes", "1", "--mix", "up:1", "--policy", "still_policy:StillPolicy"])
