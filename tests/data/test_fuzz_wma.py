"""Fuzz the web data loaders: WMA json/jsonl files and RLVR-World web parquet rows.

`load_wma` / `transition_from_wma` / `transition_from_parquet_row` return `WebTransition`s or raise
`WebDataError` naming the file, record and field (never a bare TypeError/OverflowError from inside).
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr_sim.data.wma import (
    WebDataError,
    WebTransition,
    load_wma,
    parse_official_prompt,
    transition_from_parquet_row,
    transition_from_wma,
)

scalars = (st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats() | st.text(max_size=6))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=10)
texts = st.text(max_size=20)
records = st.fixed_dictionaries({}, optional={
    "objective": texts | json_values, "current_action": texts | json_values, "observation": texts | json_values,
    "next_state_tao": texts | json_values, "new_items": json_values, "deleted_items": json_values,
    "updated_items": json_values, "url": json_values, "previous_actions": st.lists(texts) | json_values,
    "task_id": json_values, "step_idx": json_values, "next_state_acctree": texts | json_values,
}) | st.fixed_dictionaries({"objective": texts, "current_action": texts, "observation": texts},
                           optional={"next_state_tao": texts, "previous_actions": json_values, "task_id": json_values,
                                     "step_idx": json_values, "url": json_values})


def _check(transition: WebTransition) -> None:
    assert all(isinstance(v, str) for v in (transition.objective, transition.action, transition.tree,
                                             transition.gold, transition.url))
    assert all(isinstance(a, str) for a in transition.previous_actions)
    assert all(v is None or isinstance(v, int) for v in (transition.task_id, transition.step_idx))


@given(records | json_values)
def test_wma_record_returns_or_raises_its_error(record: object) -> None:
    try:
        transition = transition_from_wma(record, where="rec")
    except WebDataError as error:
        assert str(error).startswith("rec:")
        return
    _check(transition)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_wma")


@given(st.lists(records | json_values, max_size=3), st.sampled_from([".json", ".jsonl"]), st.sampled_from(["ok", "cut", "bytes"]),
       st.binary(max_size=40))
def test_wma_file_loads_or_raises_its_error(folder, rows: list, suffix: str, damage: str, noise: bytes) -> None:
    path = folder / f"data{suffix}"
    text = json.dumps(rows) if suffix == ".json" else "\n".join(json.dumps(r) for r in rows)
    payload = {"ok": text.encode(), "cut": text.encode()[: len(text) // 2], "bytes": noise}[damage]
    path.write_bytes(payload)
    try:
        transitions = load_wma(path)
    except WebDataError as error:
        assert str(path) in str(error)
        return
    for transition in transitions:
        _check(transition)


prompts = st.builds(lambda parts: "".join(parts), st.lists(
    st.sampled_from(["URL: ", "OBJECTIVE: ", "PREVIOUS ACTION: ", "CURRENT OBSERVATION: ", "CURRENT ACTION: ", "\n"]) | texts,
    max_size=8))
rows = st.fixed_dictionaries({}, optional={
    "prompt": st.lists(st.fixed_dictionaries({"role": st.just("user"), "content": prompts}) | json_values, max_size=2) | json_values,
    "question": prompts | json_values, "reward_model": st.fixed_dictionaries({"ground_truth": texts | json_values}) | json_values,
    "new_items": json_values, "deleted_items": json_values, "updated_items": json_values,
    "task_id": json_values, "step_idx": json_values, "previous_actions": json_values, "objective": texts | json_values,
})


@given(rows | json_values)
def test_parquet_row_returns_or_raises_its_error(row: object) -> None:
    try:
        transition = transition_from_parquet_row(row, where="row 0")
    except WebDataError as error:
        assert str(error).startswith("row 0:")
        return
    _check(transition)


@given(prompts | st.text(max_size=80))
def test_official_prompt_fields_are_text(prompt: str) -> None:
    fields = parse_official_prompt(prompt)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in fields.items())
