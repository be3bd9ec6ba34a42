"""WebArena-style tree text: item lines, item changes between two trees, and applying changes.

A tree is text with one node a line, `\t`-indented by depth: `[id] role 'name' prop: value`, optionally
under a header line such as `Tab 0 (current): Products / Shop Admin`. An item is identified by its id:

- new items: ids present after the action only (the after line);
- deleted items: ids present before only (the before line);
- updated items: ids in both whose line text differs (the after line).

This is the gold answer format of RLVR-World/WMA ("New items:", "Deleted items:", "Updated items:",
`None` for an empty section). Pure Python, shared by the collector and the world-model env; the line format itself
(`split_header`, `TreeLine`) belongs to the task's codec in `rlvr_sim.tasks.web`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlvr_sim.metrics.web import parse_item_sections
from rlvr_sim.tasks.web import ITEM_LINE, TreeLine, split_header


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
