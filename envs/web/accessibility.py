"""Flatten Chromium's accessibility tree (CDP `Accessibility.getFullAXTree`) into WebArena-style text.

One node a line, tab-indented by depth: `[id] role 'name' prop: value` (name through Python `repr`,
as WebArena does), with WebArena's filters: properties it ignores are dropped, unnamed structural
nodes are skipped (their children move up), and a StaticText repeating text of the previous lines is
removed. Inline text boxes, list bullets and ignored nodes are skipped too.

Ids: WebArena prints CDP node ids, which change from one page load to the next. Here ids are small
integers assigned in document order the first time a DOM node is seen in the current document and kept
for as long as the document lives, so they are stable within a page, identical across reloads of the
same page, and an element that appears later (a dialog, a hover menu) gets a fresh id above the others.
"""

from __future__ import annotations

import re
from typing import Any

IGNORED_PROPERTIES = ("focusable", "editable", "readonly", "level", "settable", "multiline", "invalid", "url")
_SKIP_ROLES = ("InlineTextBox", "none", "LineBreak", "ListMarker")  # ListMarker: bullets, pure noise
_UNNAMED_SKIPPED = ("generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section",
                    "LabelText", "Legend", "listitem", "group", "form")


class TreeFlattener:
    """Turns CDP AX node lists into tree text, keeping our element ids stable within a document."""

    def __init__(self) -> None:
        self._ids: dict[Any, int] = {}
        self.backend_ids: dict[int, int] = {}  # our id -> backendDOMNodeId of the current document

    def new_document(self) -> None:
        """Forget all ids: the next flatten numbers the page from 1 again."""
        self._ids.clear()
        self.backend_ids.clear()

    def _our_id(self, key: Any) -> int:
        if key not in self._ids:
            self._ids[key] = len(self._ids) + 1
        return self._ids[key]

    def flatten(self, nodes: list[dict[str, Any]], title: str = "") -> str:
        """Tree text of a CDP node list (`Accessibility.getFullAXTree()["nodes"]`) under a tab header."""
        by_id: dict[str, dict[str, Any]] = {}
        for node in nodes:
            by_id.setdefault(node["nodeId"], node)
        roots = [n for n in by_id.values() if not n.get("parentId") or n["parentId"] not in by_id]
        candidates: list[tuple[int, str, Any, Any]] = []  # (depth, line without id, key, backend id)
        for root in roots[:1]:
            self._visit(root, by_id, 0, (), candidates)
        lines = []
        for depth, text, key, backend in _drop_repeated_static_text(candidates):
            node_id = self._our_id(key)
            if backend is not None:
                self.backend_ids[node_id] = backend
            lines.append("\t" * depth + f"[{node_id}] {text}")
        return f"Tab 0 (current): {title}\n\n" + "\n".join(lines)

    def _visit(self, node: dict[str, Any], by_id: dict[str, dict[str, Any]], depth: int, path: tuple,
               out: list[tuple[int, str, Any, Any]]) -> None:
        role = node.get("role", {}).get("value", "")
        name = str(node.get("name", {}).get("value", ""))
        if role != "StaticText":  # a computed accessible name is whitespace-collapsed and trimmed (accname 1.2);
            name = " ".join(name.split())  # Chromium 150 keeps a label's trailing space ('Stock '), 156 does not
        backend = node.get("backendDOMNodeId")
        kept = False
        if not node.get("ignored") and role and role not in _SKIP_ROLES:
            properties = []
            for prop in node.get("properties", []):
                if prop.get("name") in IGNORED_PROPERTIES or "value" not in prop.get("value", {}):
                    continue
                properties.append(f"{prop['name']}: {prop['value']['value']}")
            kept = bool(name.strip()) or (bool(properties) and role != "listitem") or role not in _UNNAMED_SKIPPED
            if kept:
                key = ("dom", backend, role) if backend is not None else ("path", path, role, name)
                text = f"{role} {name!r}" + (" " + " ".join(properties) if properties else "")
                out.append((depth, text, key, backend))
        child_depth = depth + 1 if kept else depth
        for index, child_id in enumerate(node.get("childIds", [])):
            child = by_id.get(child_id)
            if child is not None:
                self._visit(child, by_id, child_depth, path + (index,), out)


def _drop_repeated_static_text(candidates: list[tuple[int, str, Any, Any]]) -> list[tuple[int, str, Any, Any]]:
    """WebArena's clean-up: drop a StaticText whose text is blank or already appears in one of the
    3 lines kept before it."""
    kept: list[tuple[int, str, Any, Any]] = []
    for candidate in candidates:
        match = re.match(r"StaticText (.+)$", candidate[1])
        if match:
            text = match.group(1)[1:-1]
            if not text.strip() or any(text in previous[1] for previous in kept[-3:]):
                continue
        kept.append(candidate)
    return kept
