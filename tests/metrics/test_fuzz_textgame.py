"""Fuzz the text-game answer parser and reward: model output is untrusted text.

`parse_answer` may only return a diff or raise `AnswerParseError`; `text_game_reward` may only return a
reward in its documented range (a malformed answer scores 0, never raises); `load_state` / `split_state`
raise ValueError on a malformed state. Gold diffs of generated transitions must score full marks.
"""

import json

from hypothesis import given
from hypothesis import strategies as st

from rlvr_sim.metrics.textgame import (
    ANSWER_MARKER,
    AnswerParseError,
    changed_pairs,
    make_diff,
    parse_answer,
    split_state,
    text_game_reward,
)

scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                           max_leaves=20)
# answer-shaped objects: the keys the parser looks at, with values of any JSON type
uuids = st.integers(0, 20) | st.text(max_size=3) | st.lists(st.integers(0, 3), max_size=2) | st.none()
objects_any = st.fixed_dictionaries({"uuid": uuids}, optional={"name": json_values, "properties": json_values,
                                                               "contains": json_values})
answer_like = st.fixed_dictionaries({}, optional={
    "modified": st.lists(objects_any | json_values, max_size=3) | json_values,
    "removed": json_values | st.lists(uuids, max_size=3),
    "score": json_values | st.fixed_dictionaries({"score": json_values}, optional={"gameOver": json_values}),
})


def _render(answer: object, form: int, python_repr: bool) -> str:
    """An answer as a model might write it (JSON or a Python repr): after the marker, fenced, bare, or
    truncated (form 3)."""
    blob = repr(answer) if python_repr else json.dumps(answer)
    return [f"thinking...\n{ANSWER_MARKER} {blob}", f"```json\n{blob}\n```", blob, f"{ANSWER_MARKER} {blob[:-3]}"][form]


responses = st.text(max_size=200) | st.builds(_render, answer_like, st.integers(0, 3), st.booleans())

# well-formed states: small objects with scalar properties and integer contents, and a score record
properties = st.dictionaries(st.sampled_from(["isOpen", "temp", "name", "on", "size"]),
                             st.booleans() | st.integers(-5, 5) | st.text(max_size=4), max_size=4)


@st.composite
def transitions(draw: st.DrawFn) -> tuple[dict, dict]:
    """A (current, next) state pair over uuids 0..5: objects may change, appear or disappear."""
    def state(ids: list[int]) -> dict:
        objects = [{"name": f"o{u}", "uuid": u, "type": "thing", "properties": draw(properties),
                    "contains": draw(st.lists(st.integers(0, 5), max_size=3))} for u in ids]
        score = {"score": draw(st.integers(0, 3)), "gameOver": draw(st.booleans()), "gameWon": draw(st.booleans())}
        return {"game_state": objects + [score]}

    return (state(draw(st.lists(st.integers(0, 5), unique=True, max_size=4))),
            state(draw(st.lists(st.integers(0, 5), unique=True, max_size=4))))


@given(responses)
def test_parse_answer_returns_a_diff_or_raises_its_error(response: str) -> None:
    try:
        diff = parse_answer(response)
    except AnswerParseError:
        return
    assert set(diff) == {"modified", "removed", "score"}
    assert all(isinstance(obj, dict) and "uuid" in obj for obj in diff["modified"])
    assert isinstance(diff["removed"], list) and isinstance(diff["score"], dict)


@given(responses, transitions(), st.sampled_from(["binary", "task_specific"]), st.sampled_from([None, "rlvr-world"]))
def test_reward_of_any_response_is_in_range(response: str, transition: tuple[dict, dict], reward_type: str,
                                            compat: str | None) -> None:
    current, gold = transition
    reward = text_game_reward(response, current, gold, reward_type, compat)
    if reward_type == "binary":
        assert reward in (0.0, 1.0)
    else:
        assert 0.0 <= reward <= 1.3 + 1e-9


@given(transitions(), st.integers(0, 2), st.booleans())
def test_the_gold_diff_scores_full_marks(transition: tuple[dict, dict], form: int, python_repr: bool) -> None:
    current, gold = transition
    response = _render(make_diff(current, gold), form, python_repr)
    assert text_game_reward(response, current, gold, "binary") == 1.0
    expected = 1.3 if changed_pairs(current, gold) else 0.3
    assert abs(text_game_reward(response, current, gold, "task_specific") - expected) < 1e-9


@given(json_values | st.text(max_size=50) | st.builds(lambda objs: {"game_state": objs}, st.lists(objects_any | json_values, max_size=3)))
def test_split_state_returns_or_raises_value_error(state: object) -> None:
    try:
        objects, score = split_state(state)
    except ValueError:
        return
    assert isinstance(objects, dict) and (score is None or isinstance(score, dict))
