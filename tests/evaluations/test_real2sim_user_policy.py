"""Bring your own policy: the `FramePolicy` example in docs/real2sim.md, written from the page alone, runs
through Real2Sim by `--policies module:Class`; a class that breaks the protocol fails before any episode."""

import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # must precede the first `import mujoco` (headless rendering)
pytest.importorskip("gym_pusht")
pytest.importorskip("mujoco")
from rlvr_sim.evaluations.real2sim import main  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs" / "real2sim.md"


def _docs_policy_module() -> str:
    """The one python block of docs/real2sim.md that defines a policy module (it names its file)."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    (module,) = [block for block in blocks if block.startswith('"""my_policies.py')]
    return module


def test_a_policy_written_from_the_docs_runs_through_real2sim(tmp_path, monkeypatch):
    (tmp_path / "my_policies.py").write_text(_docs_policy_module())
    monkeypatch.syspath_prepend(str(tmp_path))
    name = "my_policies:CentrePusher"
    args = ["--rollout", "--no-ray", "--quiet", "--sims", "real,mujoco", "--policies", f"{name},random",
            "--episodes", "2", "--horizon", "3", "--out", str(tmp_path / "out")]  # fmt: skip
    report = main(args)
    assert report["policies"] == [name, "random"] and set(report["rates"]["mujoco"]) == {name, "random"}
    mine = [r for r in report["episodes_detail"] if r["policy"] == name]
    assert len(mine) == 4 and all(r["steps"] >= 1 for r in mine)
    assert f"| {name} |" in (tmp_path / "out" / "real2sim.md").read_text()
    again = main(args)  # seeded from (--seed, episode, policy): the same episodes replay
    assert again["episodes_detail"] == report["episodes_detail"]
    saved = json.loads((tmp_path / "out" / "real2sim.json").read_text())
    assert saved["settings"]["command"].endswith(" ".join(args))


def test_a_class_that_breaks_the_protocol_fails_with_an_error_naming_it(tmp_path, monkeypatch):
    (tmp_path / "bad_policies.py").write_text(
        "import numpy as np\n\n"
        "class NoAct:\n    def __init__(self, seed=0):\n        pass\n\n    def reset(self, seed):\n        pass\n\n"
        "class NoSeed:\n    def reset(self, seed):\n        pass\n\n    def act(self, frame):\n        return np.zeros(2)\n\n"
        "class WrongShape:\n    def __init__(self, seed=0):\n        pass\n\n    def reset(self, seed):\n        pass\n\n"
        "    def act(self, frame):\n        return np.zeros(3)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    base = ["--rollout", "--no-ray", "--quiet", "--sims", "real", "--episodes", "1", "--horizon", "2", "--out", str(out)]
    with pytest.raises(ValueError, match=r"bad_policies:NoAct' lacks act"):
        main([*base, "--policies", "bad_policies:NoAct,random"])
    with pytest.raises(ValueError, match=r"must be built as NoSeed\(seed=\.\.\.\)"):
        main([*base, "--policies", "bad_policies:NoSeed,random"])
    with pytest.raises(ValueError, match=r"cannot load policy 'no_such_module:Policy'"):
        main([*base, "--policies", "no_such_module:Policy,random"])
    with pytest.raises(ValueError, match=r"'bad_policies:WrongShape' returned .* finite \(x, y\)"):
        main([*base, "--policies", "bad_policies:WrongShape,random"])
    assert not (out / "episodes.jsonl").exists() or not (out / "episodes.jsonl").read_text().strip()
