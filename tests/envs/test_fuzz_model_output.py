"""Fuzz the decoders that turn a model's reply into something an env or agent acts on.

`extract_action` (a chat model's reply -> a WebArena action) returns None or an action's canonical text;
`extract_likert` (a judge's reply -> a 1-5 score) returns None or a number in [1, 5]; the web world model's
`decode_changes` returns (next tree, None or a note) or (None, why), never raises; the text-game task's
`decode_answer` returns (next state, None) or (None, why), never raises. A reply that states a valid answer
plainly is read as that answer.
"""

import json

from hypothesis import example, given
from hypothesis import strategies as st
from rlvr_sim.envs.textgame.games import GAMES, make_game
from rlvr_sim.envs.web.actions import ACTION_TYPES, parse_action
from rlvr_sim.envs.web.tree import format_changes, item_changes
from rlvr_sim.envs.web.world_model_env import decode_changes
from rlvr_sim.policies.web_llm import extract_action, extract_likert

from rlvr_sim.metrics.textgame import ANSWER_MARKER, apply_diff, make_diff
from rlvr_sim.tasks.textgame import decode_answer

any_text = st.text(max_size=200)
words = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
actions = st.builds(lambda kind, n, word: {"click": f"click [{n}]", "hover": f"hover [{n}]", "type": f"type [{n}] [{word}] [1]",
                                           "scroll": "scroll [down]", "go_back": "go_back", "press": "press [Enter]"}[kind],
                    st.sampled_from(["click", "hover", "type", "scroll", "go_back", "press"]), st.integers(0, 999),
                    st.text(st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"], blacklist_characters="[]"),
                            min_size=1, max_size=8).map(str.strip).filter(bool))
action_like = st.builds(lambda kind, args: kind + " " + " ".join(f"[{a}]" for a in args),
                        st.sampled_from(ACTION_TYPES) | words, st.lists(words, max_size=3))
replies = st.builds(lambda before, action, after, form: [
    f"{before}\n```\n{action}\n```\n{after}", f"{before}\n```text\n{action}```", f"{action}\n{after}",
    f"{before} {action}", f"```{action}", f"{before}\n```\n{action}\n"][form],
    any_text, actions | action_like | any_text, any_text, st.integers(0, 5))


@given(replies | any_text)
def test_extract_action_returns_none_or_a_canonical_action(reply: str) -> None:
    action = extract_action(reply)
    assert action is None or (isinstance(action, str) and parse_action(action).to_text() == action)


@given(actions, words.filter(lambda w: "`" not in w and "\n" not in w))
def test_a_fenced_action_is_read_whatever_precedes_it(action: str, before: str) -> None:
    assert extract_action(f"{before}\n```\n{action}\n```") == parse_action(action).to_text()


numbers = st.floats(-100, 100, allow_nan=False).map(lambda x: f"{x:g}") | st.integers(-20, 20).map(str)


@given(st.builds(lambda a, n, b: f"{a}{n}{b}", any_text, numbers, any_text) | any_text)
@example("5.27854e-244")  # found: read as 5.27854 (the mantissa), not as the tiny number it is
@example("Score: 5.5/5")  # found: 5.5, outside the 1-5 scale
def test_extract_likert_returns_none_or_a_score_in_range(reply: str) -> None:
    score = extract_likert(reply)
    assert score is None or (isinstance(score, float) and 1.0 <= score <= 5.0)


@given(st.sampled_from(["1", "2", "3", "4", "5", "2.5", "4.75"]), st.sampled_from(["Score: ", "", "I rate it ", "\n"]),
       st.sampled_from(["", "/5", " out of five.", "\n"]))
def test_a_plain_score_is_read(number: str, before: str, after: str) -> None:
    assert extract_likert(f"{before}{number}{after}") == float(number)
    assert extract_likert(f"{before}7.5 or rather {number}{after}") == float(number)  # out-of-range numbers skipped


names = st.text(st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=8).map(str.strip)


@st.composite
def trees(draw: st.DrawFn) -> str:
    ids = draw(st.lists(st.integers(1, 40), unique=True, min_size=1, max_size=6))
    lines = [f"[{ids[0]}] RootWebArea '{draw(names)}' focused: True"]
    lines += ["\t" * draw(st.integers(1, 3)) + f"[{i}] {draw(st.sampled_from(['link', 'button', 'StaticText']))} "
              f"'{draw(names)}'" for i in ids[1:]]
    return "Tab 0 (current): Shop\n\n" + "\n".join(lines)


sections = st.builds(lambda new, deleted, updated: f"New items:\n{new}\n\nDeleted items:\n{deleted}\n\nUpdated items:\n{updated}",
                     any_text | st.just("None"), any_text | st.just("None"), any_text | st.just("None"))


@given(trees(), sections | any_text | st.builds(lambda t, u: format_changes(item_changes(t, u)), trees(), trees()))
def test_decode_changes_returns_a_tree_or_why_not(tree: str, prediction: str) -> None:
    next_tree, note = decode_changes(tree, prediction)
    assert next_tree is not None or isinstance(note, str) and note
    assert next_tree is None or isinstance(next_tree, str)
    assert note is None or isinstance(note, str)


@given(trees(), trees())
def test_decode_changes_of_the_gold_answer_has_no_note(tree: str, after: str) -> None:
    next_tree, note = decode_changes(tree, format_changes(item_changes(tree, after)))
    assert next_tree is not None and note is None


def _state(game: str, seed: int, steps: int) -> dict:
    g = make_game(game, seed=seed)
    for _ in range(steps):
        if g.game_over:
            break
        g.step(g.expert_action())
    return {"game_state": list(g.snapshot()["objects"]) + [g.score_state()]}


states = st.builds(_state, st.sampled_from(sorted(GAMES)), st.integers(0, 50), st.integers(0, 6))
scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=12)
answers = st.fixed_dictionaries({}, optional={
    "modified": st.lists(st.fixed_dictionaries({"uuid": st.integers(0, 8) | json_values}, optional={"name": json_values})
                         | json_values, max_size=3) | json_values,
    "removed": st.lists(st.integers(0, 8) | json_values, max_size=3) | json_values,
    "score": json_values})
texts = any_text | st.builds(lambda a, form: [f"{ANSWER_MARKER} {json.dumps(a)}", f"```json\n{json.dumps(a)}\n```",
                                              f"{ANSWER_MARKER} {json.dumps(a)[:-2]}", repr(a)][form],
                             answers, st.integers(0, 3))


@given(texts, states)
def test_decode_answer_returns_a_state_or_why_not(text: str, state: dict) -> None:
    predicted, error = decode_answer(text, state)
    assert (predicted is None) != (error is None)
    if predicted is not None:
        assert isinstance(predicted, dict) and isinstance(predicted["game_state"], list)
    else:
        assert isinstance(error, str) and error


@given(states, states)
def test_decode_answer_of_the_gold_diff_is_the_next_state(state: dict, after: dict) -> None:
    predicted, error = decode_answer(f"{ANSWER_MARKER} {json.dumps(make_diff(state, after))}", state)
    assert error is None and predicted == apply_diff(state, make_diff(state, after))
