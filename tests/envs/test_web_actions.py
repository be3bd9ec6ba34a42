"""WebArena action syntax: round trips and clear errors on malformed text."""

import pytest
from rlvr_sim.envs.web.actions import ActionParseError, WebAction, parse_action


@pytest.mark.parametrize("text, expected", [
    ("click [12]", WebAction("click", element_id="12")),
    ("hover [5]", WebAction("hover", element_id="5")),
    ("type [7] [green tea] [0]", WebAction("type", element_id="7", text="green tea", press_enter=False)),
    ("type [7] [tea]", WebAction("type", element_id="7", text="tea", press_enter=True)),
    ("scroll [Down]", WebAction("scroll", text="down")),
    ("goto [/orders?status=pending]", WebAction("goto", text="/orders?status=pending")),
    ("go_back", WebAction("go_back")),
    ("press [Control+a]", WebAction("press", text="Control+a")),
    ("stop [$4.20]", WebAction("stop", text="$4.20")),
    ("stop", WebAction("stop", text="")),
    ("```click [3]```", WebAction("click", element_id="3")),
    ("click [1121] where [1121] is tab 'Bestsellers' expanded: True", WebAction("click", element_id="1121")),
])
def test_parse_and_round_trip(text, expected):
    action = parse_action(text)
    assert action == expected
    assert parse_action(action.to_text()) == action


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("jump [3]", "unknown action"),
    ("click [abc]", "numeric element id"),
    ("click", "numeric element id"),
    ("type [3]", "text to type"),
    ("type [3] [x] [2]", "0 or 1"),
    ("scroll [left]", "up or down"),
    ("goto []", "non-empty"),
    ("click [3", "unclosed"),
])
def test_malformed_actions_raise_with_reason(text, message):
    with pytest.raises(ActionParseError, match=message):
        parse_action(text)


def test_non_string_action_is_rejected():
    with pytest.raises(ActionParseError, match="string"):
        parse_action(3)  # type: ignore[arg-type]
