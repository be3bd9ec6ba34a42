"""Web state-change prediction as a Task: (objective, URL, action, tree) -> three-section item changes.

Prompt (kept short for a tiny CPU model):

    OBJECTIVE: <objective>
    URL: <path and query; the scheme/host/port is dropped, it changes from run to run>
    ACTION: <WebArena action>
    TREE:
    <accessibility tree, tab header line dropped>
    CHANGES:

The tree is trimmed from the end, whole lines at a time, until the prompt fits `max_prompt_tokens`
(a last line `...` marks a trimmed tree). Answer = the gold three-section text + EOS. Examples whose
answer exceeds `max_new_tokens` are left out (warned with a count). Reward = item-change F1 of the
decoded completion (`rlvr_sim.metrics.web.item_change_f1`, `compat` selectable); unparseable
completions score 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rlvr_sim.data.wma import WebTransition, load_web_transitions
from rlvr_sim.metrics.web import item_change_f1, parse_item_sections
from rlvr_sim.resources import asset_path
from rlvr_sim.tasks.text_transition import TextTransitionTask

EMBEDDED_TOKENIZER = asset_path("web_tokenizer")
ITEM_LINE = re.compile(r"^(\t*)\[(\d+)\] (.*)$")  # "\t\t[12] link 'Products'": depth, id, text


@dataclass(frozen=True)
class TreeLine:
    node_id: int
    depth: int
    text: str  # the line without indentation, e.g. "[12] link 'Products'"


def split_header(tree: str) -> tuple[str, list[TreeLine]]:
    """The header text (lines before the first item, e.g. the tab title) and the item lines.

    Lines after the first item that are not items (wrapped text) are kept as part of the previous item's
    text so that nothing is silently dropped.
    """
    header: list[str] = []
    lines: list[TreeLine] = []
    for raw in tree.split("\n"):
        match = ITEM_LINE.match(raw.rstrip("\r"))
        if match:
            lines.append(TreeLine(int(match.group(2)), len(match.group(1)), f"[{match.group(2)}] {match.group(3)}".rstrip()))
        elif not lines:
            header.append(raw)
        elif raw.strip():
            last = lines[-1]
            lines[-1] = TreeLine(last.node_id, last.depth, last.text + " " + raw.strip())
    return "\n".join(header).strip("\n"), lines


def url_path(url: str) -> str:
    """Path and query of a URL ('' stays ''): the origin carries a run-specific port."""
    if not url:
        return ""
    parts = urlsplit(url)
    if not parts.scheme:
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def tree_body(tree: str) -> list[str]:
    """The tree's node lines (header such as `Tab 0 (current): ...` dropped), indentation kept."""
    header, lines = split_header(tree)
    if not lines:
        return [line for line in tree.split("\n") if line.strip()]
    return ["\t" * line.depth + line.text for line in lines]


def format_prompt(objective: str, url: str, action: str, tree_lines: list[str], trimmed: bool = False) -> str:
    tree = "\n".join(tree_lines + (["..."] if trimmed else []))
    return f"OBJECTIVE: {objective}\nURL: {url_path(url)}\nACTION: {action.strip()}\nTREE:\n{tree}\nCHANGES:\n"



# ------------------------------------------------------------------------------ the answer: item changes
# An item is identified by its id. New items: ids present after the action only (the after line); deleted
# items: ids present before only (the before line); updated items: ids in both whose line text differs
# (the after line). This is the gold answer format of RLVR-World/WMA ("New items:", "Deleted items:",
# "Updated items:", `None` for an empty section).


@dataclass
class ItemChanges:
    new: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.new or self.deleted or self.updated)


def item_changes(before: str, after: str) -> ItemChanges:
    """New, deleted and updated items going from tree `before` to tree `after` (in tree order)."""
    _, old = split_header(before)
    _, new = split_header(after)
    old_text = {line.node_id: line.text for line in old}
    new_ids = {line.node_id for line in new}
    return ItemChanges(
        new=[line.text for line in new if line.node_id not in old_text],
        deleted=[line.text for line in old if line.node_id not in new_ids],
        updated=[line.text for line in new if line.node_id in old_text and old_text[line.node_id] != line.text],
    )


def format_changes(changes: ItemChanges) -> str:
    """The three-section answer text (`None` for an empty section)."""
    parts = []
    for title, items in (("New items", changes.new), ("Deleted items", changes.deleted),
                         ("Updated items", changes.updated)):
        parts.append(f"{title}:\n" + ("\n".join(items) if items else "None"))
    return "\n\n".join(parts)


def parse_changes(answer: str) -> tuple[ItemChanges, int]:
    """Item changes from answer text, and the number of lines dropped for not being `[id] ...` items.

    Raises ValueError if the text has no section header at all.
    """
    sections = parse_item_sections(answer)
    if sections is None:
        raise ValueError("answer has no 'New items:' / 'Deleted items:' / 'Updated items:' section")
    dropped = 0
    kept: dict[str, list[str]] = {}
    for name, items in sections.items():
        valid = [item for item in items if ITEM_LINE.match(item)]
        dropped += len(items) - len(valid)
        kept[name] = valid
    return ItemChanges(kept["New items"], kept["Deleted items"], kept["Updated items"]), dropped


def _id_of(item: str) -> int:
    match = ITEM_LINE.match(item)
    if match is None:
        raise ValueError(f"not a tree item line: {item!r}")
    return int(match.group(2))


def apply_changes(tree: str, changes: ItemChanges) -> str:
    """The tree after `changes`: deleted ids removed, updated ids replaced in place (keeping depth),
    new items inserted after the line with the nearest smaller id (ids grow in document order on our
    site and in WebArena), at that line's depth; the tab header follows the RootWebArea's name; an update for an unknown id is treated as new and a new
    item whose id already exists as an update."""
    header, lines = split_header(tree)
    deleted = {_id_of(item) for item in changes.deleted}
    replacement: dict[int, str] = {}
    for item in changes.updated + changes.new:
        replacement[_id_of(item)] = item
    result = [TreeLine(line.node_id, line.depth, replacement.pop(line.node_id, line.text))
              for line in lines if line.node_id not in deleted]
    for node_id, text in sorted(replacement.items()):
        position = 0
        for index, line in enumerate(result):
            if line.node_id < node_id:
                position = index + 1
        depth = result[position - 1].depth if position > 0 else 0
        result.insert(position, TreeLine(node_id, depth, text))
    body = "\n".join("\t" * line.depth + line.text for line in result)
    root = next((re.match(r"\[\d+\] RootWebArea (['\"])(.*)\1", line.text) for line in result[:1]), None)
    if root and re.match(r"^Tab \d+ \(current\): ", header):
        header = re.sub(r"^(Tab \d+ \(current\): ).*$", lambda m: m.group(1) + root.group(2), header, count=1)
    return f"{header}\n\n{body}" if header else body


def decode_changes(tree: str, prediction: str) -> tuple[str | None, str | None]:
    """(tree after applying the predicted changes, None) or, when only some item lines were malformed,
    (tree, how many were ignored); (None, why) when the prediction cannot be parsed at all."""
    try:
        changes, dropped = parse_changes(prediction)
    except ValueError as exc:
        return None, str(exc)
    return apply_changes(tree, changes), (f"{dropped} malformed item lines ignored" if dropped else None)

class WebTask(TextTransitionTask):
    """Item-change prediction on web transitions (our collector's jsonl, WMA json, RLVR-World parquet)."""

    name = "web"
    tokenizer_asset = "web_tokenizer"

    def __init__(self, tokenizer: Any = None, data_dir: str | list[str] = "data/web", compat: str | None = None,
                 max_prompt_tokens: int = 640, max_new_tokens: int = 256, vocab_size: int = 2048,
                 temperature: float = 1.0) -> None:
        self.compat = compat
        super().__init__(tokenizer, data_dir, max_prompt_tokens, max_new_tokens, vocab_size, temperature)

    def load(self, path: Path) -> list[WebTransition]:
        return load_web_transitions(path)

    def prompt_text(self, transition: WebTransition) -> str:
        return format_prompt(transition.objective, transition.url, transition.action, tree_body(transition.tree))

    def answer_text(self, transition: WebTransition) -> str:
        return transition.gold

    def metadata(self, transition: WebTransition) -> dict[str, Any]:
        return {"gold": transition.gold, "tree": transition.tree, "action": transition.action,
                "objective": transition.objective}

    def encode_prompt(self, objective: str, url: str, action: str, tree: str) -> list[int]:
        """Prompt ids, the tree trimmed from the end (whole lines) to fit max_prompt_tokens."""
        bos = self.bos()
        lines = tree_body(tree)
        ids = bos + self.encode(format_prompt(objective, url, action, lines))
        if len(ids) <= self.max_prompt_tokens:
            return ids
        low, high = 0, len(lines)  # binary search on the number of tree lines kept
        best = bos + self.encode(format_prompt(objective, url, action, [], trimmed=True))
        while low <= high:
            middle = (low + high) // 2
            candidate = bos + self.encode(format_prompt(objective, url, action, lines[:middle], trimmed=True))
            if len(candidate) <= self.max_prompt_tokens:
                best, low = candidate, middle + 1
            else:
                high = middle - 1
        return best[: self.max_prompt_tokens]

    def prompt_ids(self, transition: WebTransition) -> list[int]:
        return self.encode_prompt(transition.objective, transition.url, transition.action, transition.tree)

    def decode_state(self, transition: WebTransition, text: str) -> tuple[str | None, str | None]:
        """The page after the answer's item changes (`decode_changes` of the transition's tree)."""
        return decode_changes(transition.tree, text)

    def score(self, text: str, meta: dict[str, Any]) -> float:
        """Item-change F1 against the gold three-section answer (0.0 when unparseable)."""
        if "gold" not in meta:
            raise KeyError("web reward needs metadata['gold'] (the three-section answer)")
        return item_change_f1(text, meta["gold"], self.compat).f1
