"""Fuzz the Real2Sim success-table loader with CSV, markdown and JSON files.

`load_success_table` returns per-task tables of rates in [0, 1] with at least two policies and one
simulator, or raises ValueError naming the problem (FileNotFoundError only for a missing file). It
accepts simpler-env style JSON that carries metadata keys beside REAL_PERF / SIMPLER_PERF.
"""

import json

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rlvr_sim.metrics.real2sim import load_success_table

policies = st.sampled_from(["rt-1", "rt-2-x", "octo", "Average", "", "policy"]) | st.text(max_size=5)
sources = st.sampled_from(["real", "Real (%)", "REAL_PERF", "simpler", "SIMPLER_PERF", "sim %", "task", "policy"]) | st.text(max_size=5)
cells = (st.floats(-0.5, 1.5) | st.integers(-5, 150) | st.sampled_from(["85%", "0.5", "", "nan", "high", "1e400", "-0"])
         | st.text(max_size=4))
numbers = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**400, 10**400) | st.booleans() | st.none()
json_values = st.recursive(cells | numbers, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(policies | sources, inner, max_size=4), max_leaves=16)


@st.composite
def csv_texts(draw: st.DrawFn) -> str:
    """Long or wide tables with ragged rows, odd headers and any cell text (quotes, delimiters, NUL)."""
    header = draw(st.lists(sources | policies, min_size=1, max_size=4))
    rows = draw(st.lists(st.lists(cells.map(str) | policies, max_size=5), max_size=4))
    delimiter = draw(st.sampled_from([",", "\t"]))
    return "\n".join(delimiter.join(row) for row in [header, *rows])


@st.composite
def markdown_texts(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            parts.append("## " + draw(st.text(max_size=6)))
        table = draw(csv_texts()).split("\n")
        rows = ["| " + " | ".join(line.replace("\t", ",").split(",")) + " |" for line in table]
        parts.append("\n".join(rows[:1] + ["|---|---|"] + rows[1:]))
    return "\n\n".join(parts)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_real2sim")


def _check_load(path) -> None:
    try:
        tables = load_success_table(path)
    except ValueError as error:
        assert str(path) in str(error)
        return
    for table in tables:
        assert len(table.policies) >= 2 and table.sims
        for rates in [table.real, *table.sims.values()]:
            assert rates.shape == (len(table.policies),) and np.all((rates >= 0) & (rates <= 1))


@given(csv_texts(), st.sampled_from([".csv", ".tsv"]))
@example("task", ".csv")  # found: StopIteration (no column besides the task)
@example("real,sim,policy\n0.5,0.4\n0.1,0.2,b", ".csv")  # found: IndexError (row shorter than the header)
def test_csv_tables(folder, text: str, suffix: str) -> None:
    path = folder / f"table{suffix}"
    path.write_text(text, encoding="utf-8")
    _check_load(path)


@given(markdown_texts())
def test_markdown_tables(folder, text: str) -> None:
    path = folder / "table.md"
    path.write_text(text, encoding="utf-8")
    _check_load(path)


@given(json_values | st.lists(st.dictionaries(policies | sources, cells | numbers, max_size=4), max_size=3))
@example([{}])  # found: StopIteration
@example([{"task": 1, "policy": "a", "real": 0.5, "sim": 0.4}, {"task": 1, "policy": "b", "real": 0.1, "sim": 0.3}])
@example({"real": {"a": 10**400, "b": 0.1}, "sim": {"a": 0.1, "b": 0.2}})  # found: OverflowError
def test_json_tables(folder, data: object) -> None:
    path = folder / "table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    _check_load(path)


@given(st.binary(max_size=60), st.sampled_from([".csv", ".md", ".json"]))
def test_bytes_that_are_not_text(folder, payload: bytes, suffix: str) -> None:
    path = folder / f"raw{suffix}"
    path.write_bytes(payload)
    _check_load(path)


SIMPLER_REAL = {"google_robot_pick_coke_can": {"rt-1-converged": 0.853, "octo-base": 0.293, "rt-1-begin": 0.133}}
SIMPLER_SIM = {"google_robot_pick_coke_can": {"rt-1-converged": 0.857, "octo-base": 0.17, "rt-1-begin": 0.027}}
metadata = st.dictionaries(
    st.sampled_from(["description", "ckpt_alias", "num_trials", "env", "tasks", "version", "notes"]),
    st.text(max_size=8) | st.integers(0, 500) | st.lists(st.text(max_size=4), max_size=2) | st.none()
    | st.dictionaries(st.text(max_size=6), st.text(st.characters(categories=["L"]), max_size=6), max_size=2), max_size=4)


@given(metadata)
def test_simpler_env_json_with_metadata_keys_loads(folder, extra: dict) -> None:
    path = folder / "simpler.json"
    path.write_text(json.dumps({"REAL_PERF": SIMPLER_REAL, "SIMPLER_PERF": SIMPLER_SIM, **extra}), encoding="utf-8")
    (table,) = load_success_table(path)
    assert table.task == "google_robot_pick_coke_can" and set(table.sims) == {"SIMPLER_PERF"}
    np.testing.assert_allclose(table.real, [0.853, 0.293, 0.133])
    np.testing.assert_allclose(table.sims["SIMPLER_PERF"], [0.857, 0.17, 0.027])


def test_a_simulator_with_an_unreadable_rate_is_still_an_error(folder) -> None:
    path = folder / "bad_sim.json"
    path.write_text(json.dumps({"REAL_PERF": SIMPLER_REAL, "SIMPLER_PERF": {"google_robot_pick_coke_can": {
        "rt-1-converged": "high", "octo-base": 0.17, "rt-1-begin": 0.027}}, "description": "v1"}))
    with pytest.raises(ValueError, match="cannot read success rate 'high'"):
        load_success_table(path)
