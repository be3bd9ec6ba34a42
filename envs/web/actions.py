"""WebArena's id-based action syntax: parse text such as `click [12]` or `type [7] [tea] [1]`.

Accepted (WebArena `create_id_based_action` vocabulary):
`click [id]`, `hover [id]`, `type [id] [text]` or `type [id] [text] [0|1]` (1, the default, presses Enter
after typing), `press [key_comb]`, `scroll [up|down]`, `goto [url]`, `go_back`, `go_forward`,
`new_tab`, `tab_focus [index]`, `close_tab`, `stop [answer]` (or bare `stop`: empty answer).
Surrounding whitespace and backticks are ignored, and so is a trailing WMA-style description
(`click [12] where [12] is link 'SALES'`). Anything else raises `ActionParseError` naming the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ACTION_TYPES = (
    "click", "hover", "type", "press", "scroll", "goto", "go_back", "go_forward",
    "new_tab", "tab_focus", "close_tab", "stop",
)
_ELEMENT_ACTIONS = ("click", "hover", "type")


class ActionParseError(ValueError):
    """Text that is not a valid WebArena action."""


@dataclass(frozen=True)
class WebAction:
    """One parsed action; fields not used by the action type keep their defaults."""

    kind: str
    element_id: str = ""
    text: str = ""  # typed text, key combination, scroll direction, URL or stop answer
    press_enter: bool = True
    tab_index: int = 0

    def to_text(self) -> str:
        """The canonical WebArena text of this action (parse(a.to_text()) == a)."""
        if self.kind in ("click", "hover"):
            return f"{self.kind} [{self.element_id}]"
        if self.kind == "type":
            return f"type [{self.element_id}] [{self.text}] [{int(self.press_enter)}]"
        if self.kind in ("press", "scroll", "goto", "stop"):
            return f"{self.kind} [{self.text}]"
        if self.kind == "tab_focus":
            return f"tab_focus [{self.tab_index}]"
        return self.kind


def _brackets(rest: str) -> list[str]:
    """Split '[a] [b c] [d]' into ['a', 'b c', 'd'] ('[...]' may hold ']' only as the last group)."""
    groups = []
    rest = rest.strip()
    while rest.startswith("["):
        close = rest.find("] [")
        if close == -1:
            end = rest.rfind("]")
            if end == -1:
                raise ActionParseError(f"unclosed '[' in {rest!r}")
            groups.append(rest[1:end])
            rest = rest[end + 1:].strip()
            break
        groups.append(rest[1:close])
        rest = rest[close + 2:].strip()
    return groups


def parse_action(text: str) -> WebAction:
    """Parse WebArena action text; raises ActionParseError with the reason on malformed input."""
    if not isinstance(text, str):
        raise ActionParseError(f"action must be a string, got {type(text).__name__}")
    cleaned = text.strip().strip("`").strip()
    cleaned = re.split(r"\s+where\s+\[", cleaned, maxsplit=1)[0].strip()
    if not cleaned:
        raise ActionParseError("empty action text")
    match = re.match(r"^([a-z_]+)\s*(.*)$", cleaned, re.DOTALL)
    if not match or match.group(1) not in ACTION_TYPES:
        head = cleaned.split()[0][:40]
        raise ActionParseError(f"unknown action {head!r}; expected one of {', '.join(ACTION_TYPES)}")
    kind, rest = match.group(1), match.group(2)
    if kind == "stop" and not rest.strip():
        return WebAction("stop", text="")
    groups = _brackets(rest)
    if kind in _ELEMENT_ACTIONS:
        if not groups or not re.fullmatch(r"\d+", groups[0].strip()):
            raise ActionParseError(f"{kind} needs a numeric element id in brackets, e.g. '{kind} [12]'; got {cleaned!r}")
        element_id = groups[0].strip()
        if kind != "type":
            return WebAction(kind, element_id=element_id)
        if len(groups) < 2:
            raise ActionParseError(f"type needs the text to type: 'type [id] [text]'; got {cleaned!r}")
        press_enter = True
        if len(groups) >= 3:
            flag = groups[2].strip()
            if flag not in ("0", "1"):
                raise ActionParseError(f"type's third argument must be 0 or 1 (press Enter); got {flag!r}")
            press_enter = flag == "1"
        return WebAction("type", element_id=element_id, text=groups[1], press_enter=press_enter)
    if kind in ("go_back", "go_forward", "new_tab", "close_tab"):
        return WebAction(kind)
    if not groups:
        raise ActionParseError(f"{kind} needs an argument in brackets; got {cleaned!r}")
    arg = groups[0]
    if kind == "scroll":
        direction = arg.strip().lower()
        if direction not in ("up", "down"):
            raise ActionParseError(f"scroll direction must be up or down; got {arg!r}")
        return WebAction("scroll", text=direction)
    if kind == "tab_focus":
        if not arg.strip().isdecimal():  # isdigit() would pass '²', which int() refuses
            raise ActionParseError(f"tab_focus needs a tab index; got {arg!r}")
        return WebAction("tab_focus", tab_index=int(arg))
    if kind in ("goto", "press") and not arg.strip():
        raise ActionParseError(f"{kind} needs a non-empty argument")
    return WebAction(kind, text=arg.strip() if kind != "stop" else arg)
