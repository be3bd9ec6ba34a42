"""Fuzz the web parsers of untrusted model output: the three-section F1 and WebArena action text.

`item_change_f1` returns scores in [0, 1] for any response (a response with no section scores 0) and
raises ValueError only for a gold answer without sections (TypeError for non-text); `parse_action`
returns a `WebAction` or raises `ActionParseError`, and a parsed action's canonical text parses back to it.
"""

from hypothesis import given
from hypothesis import strategies as st
from rlvr_sim.envs.web.actions import ACTION_TYPES, ActionParseError, WebAction, parse_action

from rlvr_sim.metrics.web import SECTIONS, item_change_f1, parse_item_sections

item_lines = st.builds(lambda i, role, name: f"[{i}] {role} '{name}'", st.integers(0, 50),
                       st.sampled_from(["link", "button", "StaticText", "textbox"]), st.text(max_size=6))
noise_lines = st.text(max_size=30).map(lambda t: t.replace("\n", " ")) | st.sampled_from(["None", "none", "", "  "])


@st.composite
def answers(draw: st.DrawFn) -> str:
    """Section answers as models write them: any header case, items on the header line, reasoning
    before, a `</think>`, `None` markers, stray lines."""
    parts = [draw(st.sampled_from(["", "Let me think.\n", "<think>New items: [1] x</think>\n"]))]
    for name in draw(st.lists(st.sampled_from(SECTIONS), max_size=4)):
        header = draw(st.sampled_from([name, name.lower(), name.upper()])) + draw(st.sampled_from([":", " :", ":  "]))
        lines = draw(st.lists(item_lines | noise_lines, max_size=4))
        parts.append(header + ("\n" + "\n".join(lines) if lines else ""))
    return "\n".join(parts)


texts = st.text(max_size=200) | answers()


@given(texts, answers(), st.sampled_from([None, "rlvr-world"]))
def test_f1_of_any_response_is_a_score(response: str, gold: str, compat: str | None) -> None:
    try:
        score = item_change_f1(response, gold, compat)
    except ValueError:
        assert compat is None and parse_item_sections(gold) is None
        return
    assert all(0.0 <= value <= 1.0 for value in score)
    if compat is None and parse_item_sections(response) is None:
        assert score == (0.0, 0.0, 0.0)


@given(answers())
def test_a_parseable_answer_scores_one_against_itself(answer: str) -> None:
    if parse_item_sections(answer) is None:
        return
    assert item_change_f1(answer, answer) == (1.0, 1.0, 1.0)


@given(texts, texts)
def test_f1_raises_only_its_documented_errors(response: str, gold: str) -> None:
    try:
        item_change_f1(response, gold)
    except ValueError as error:
        assert "no 'New items:'" in str(error)


element_ids = st.integers(0, 9999).map(str) | st.text(max_size=4)
arguments = st.text(max_size=12)
action_texts = st.builds(
    lambda kind, args, spacing, suffix: (kind + spacing + " ".join(f"[{a}]" for a in args) + suffix),
    st.sampled_from(ACTION_TYPES) | st.text(max_size=8),
    st.lists(element_ids | arguments | st.sampled_from(["0", "1", "up", "DOWN", "²", "٣"]), max_size=4),
    st.sampled_from([" ", "", "  "]),
    st.sampled_from(["", " where [3] is link 'A'", "`", "\n", " extra"]),
).map(lambda t: t if not t.endswith("`") else "`" + t)


def _check_action(text: str) -> None:
    """`text` parses to an action whose canonical text parses back to it, or raises ActionParseError."""
    try:
        action = parse_action(text)
    except ActionParseError:
        return
    assert isinstance(action, WebAction) and action.kind in ACTION_TYPES
    assert parse_action(action.to_text()) == action


@given(action_texts | st.text(max_size=60))
def test_parse_action_returns_an_action_or_raises_its_error(text: str) -> None:
    _check_action(text)


# ids and tab indices are digits: any Unicode digit or number character ('٣', '²', '½') must parse or be refused
digit_like = st.text(st.characters(categories=["Nd", "No"]) | st.sampled_from("0123456789 "), min_size=1, max_size=4)


@given(st.sampled_from(["tab_focus", "click", "hover", "type"]), digit_like, st.sampled_from(["", " [tea]", " [tea] [0]"]))
def test_numeric_arguments_of_any_script(kind: str, number: str, rest: str) -> None:
    _check_action(f"{kind} [{number}]{rest}")
