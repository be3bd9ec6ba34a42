"""Fuzz the text-game data loaders: ByteSized32 jsonl files and RLVR-World parquet rows.

`load_bytesized32_jsonl` / `record_to_transition` / `row_to_transition` return transitions or raise
`TextGameDataError` naming the file/row and the problem (never a bare KeyError/TypeError from inside).
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr_sim.data.bytesized32 import (
    TextGameDataError,
    TextGameTransition,
    load_bytesized32_jsonl,
    record_to_transition,
    row_to_transition,
)

scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=6)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=12)
objects = st.fixed_dictionaries({"uuid": st.integers(0, 9)}, optional={"name": st.text(max_size=4), "properties": json_values})
states = st.fixed_dictionaries({}, optional={"objects": st.lists(objects, max_size=3) | json_values,
                                             "lastAction": json_values, "taskDesc": json_values, "max_UUID": json_values})
scores = st.fixed_dictionaries({"score": st.integers(0, 3), "gameOver": st.booleans(), "gameWon": st.booleans()})
# the documented keys, each usually present and well-typed, sometimes absent or of any JSON type
records = st.fixed_dictionaries({}, optional={
    "game": json_values, "state_id": json_values, "current_state": states | states | json_values, "action_state": states,
    "tick_state": states | states | json_values, "current_score_state": scores | scores | json_values,
    "next_score_state": scores | scores | json_values,
}) | st.fixed_dictionaries({"game": st.text(max_size=4), "current_state": states, "tick_state": states,
                            "current_score_state": scores | json_values, "next_score_state": scores | json_values},
                           optional={"action_state": states})


def _check(transition: TextGameTransition) -> None:
    for state in (transition.current_state, transition.gold_state):
        assert isinstance(state["game_state"], list) and all(isinstance(e, dict) for e in state["game_state"])
    assert isinstance(transition.action, str)


@given(records | json_values, st.sampled_from(["full", "action", "tick"]))
def test_record_to_transition_returns_or_raises_its_error(record: object, kind: str) -> None:
    try:
        transition = record_to_transition(record, kind, where="rec")
    except TextGameDataError as error:
        assert str(error).startswith("rec:")
        return
    _check(transition)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_bytesized32") / "data.jsonl"


lines = st.builds(json.dumps, records) | st.text(max_size=40).map(lambda t: t.replace("\n", " "))


@given(st.lists(lines, max_size=4) | st.binary(max_size=80))
def test_jsonl_file_loads_or_raises_its_error(data_file, content: list[str] | bytes) -> None:
    data_file.write_bytes(content if isinstance(content, bytes) else "\n".join(content).encode())
    try:
        transitions = load_bytesized32_jsonl(data_file)
    except TextGameDataError as error:
        assert str(data_file) in str(error)
        return
    for transition in transitions:
        _check(transition)


state_json = st.builds(lambda objs: json.dumps({"game_state": objs}), st.lists(objects, max_size=2))
rows = st.fixed_dictionaries({}, optional={
    "prompt": st.text(max_size=30) | st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]),
                                                                    "content": st.text(max_size=20)}) | json_values, max_size=2) | json_values,
    "reward_model": st.fixed_dictionaries({}, optional={"ground_truth": state_json | json_values | st.binary(max_size=8)}) | json_values,
    "extra_info": st.fixed_dictionaries({}, optional={"data_state": state_json | json_values | st.binary(max_size=8),
                                                      "data_action": json_values, "index": json_values}) | json_values,
    "data_source": json_values,
})


@given(rows | json_values)
def test_parquet_row_to_transition_returns_or_raises_its_error(row: object) -> None:
    try:
        transition = row_to_transition(row, where="row 0")
    except TextGameDataError as error:
        assert str(error).startswith("row 0:")
        return
    _check(transition)
