"""Item-change F1 for web state prediction (RLVR-World / WMA three-section answers).

An answer lists how the accessibility tree changes after an action, in three sections:

    New items:
    [1273] StaticText 'Vortex Running Shoes'

    Deleted items:
    None

    Updated items:
    [1220] textbox 'Search' focused: True

Default scoring (`compat=None`), pooled over the three sections:
- an item is the pair (section, line stripped); order and duplicates do not matter, matching is exact;
- blank lines are skipped; a line reading `None` (any case) marks an empty section and is not an item;
- a header's own line may carry a first item after the colon (`New items: [3] link 'A'`);
- text before the first section header is ignored (reasoning), and so is everything up to a final
  `</think>` if the response has one;
- precision = matched / predicted, recall = matched / gold; when a side has no items, its ratio is 1.0
  only if the other side has none either (so "no change" predicted for "no change" scores 1.0 and any
  other empty side scores 0.0);
- a response with no section header at all is unparseable and scores 0.0 everywhere.

`compat="rlvr-world"` reproduces the official scorer (thuml/RLVR-World,
`verl/utils/reward_score/web_agent.py`): case-sensitive headers at the start of a stripped line with the
rest of that line dropped, `None` lines counted as items, per-section sets matched exactly (its Hungarian
match with p=0 reduces to the set intersection), and precision/recall 0 when their denominator is 0.
Pure Python: no model code, no third-party imports.
"""

from __future__ import annotations

import re
from typing import NamedTuple

SECTIONS = ("New items", "Deleted items", "Updated items")
COMPAT_MODES = ("rlvr-world",)
_HEADER = re.compile(r"^(new items|deleted items|updated items)\s*:(.*)$", re.IGNORECASE)


class ItemChangeScore(NamedTuple):
    precision: float
    recall: float
    f1: float


def parse_item_sections(text: str) -> dict[str, list[str]] | None:
    """The items of each section (stripped lines, in order, `None` markers removed), or None if the
    text has no section header at all. Text before the first header and up to a final `</think>` is
    skipped."""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
    current: str | None = None
    for raw in text.split("\n"):
        line = raw.strip()
        header = _HEADER.match(line)
        if header:
            current = next(name for name in SECTIONS if name.lower() == header.group(1).lower())
            line = header.group(2).strip()
        if current is None or not line or line.lower() == "none":
            continue
        sections[current].append(line)
    return sections if current is not None else None


def _ratio(matched: int, total: int, other_total: int) -> float:
    if total == 0:
        return 1.0 if other_total == 0 else 0.0
    return matched / total


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _official_sections(text: str) -> dict[str, set[str]]:
    sections: dict[str, set[str]] = {name: set() for name in SECTIONS}
    current: str | None = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        for name in SECTIONS:
            if line.startswith(name + ":"):
                current = name
                break
        else:
            if current:
                sections[current].add(line)
    return sections


def _official_score(response: str, gold: str) -> ItemChangeScore:
    predicted, reference = _official_sections(response), _official_sections(gold)
    matched = sum(len(reference[s] & predicted[s]) for s in SECTIONS)
    n_gold = sum(len(reference[s]) for s in SECTIONS)
    n_pred = sum(len(predicted[s]) for s in SECTIONS)
    precision = matched / n_pred if n_pred > 0 else 0.0
    recall = matched / n_gold if n_gold > 0 else 0.0
    return ItemChangeScore(precision, recall, _f1(precision, recall))


def item_change_f1(response: str, gold: str, compat: str | None = None) -> ItemChangeScore:
    """Precision, recall and F1 of the predicted item changes against the gold answer (see module doc)."""
    if not isinstance(response, str) or not isinstance(gold, str):
        raise TypeError(f"response and gold must be str, got {type(response).__name__} and {type(gold).__name__}")
    if compat is not None:
        if compat not in COMPAT_MODES:
            raise ValueError(f"unknown compat mode {compat!r}; known: {', '.join(COMPAT_MODES)}")
        return _official_score(response, gold)
    reference = parse_item_sections(gold)
    if reference is None:
        raise ValueError("gold answer has no 'New items:' / 'Deleted items:' / 'Updated items:' section")
    predicted = parse_item_sections(response)
    if predicted is None:
        return ItemChangeScore(0.0, 0.0, 0.0)
    gold_items = {(s, line) for s in SECTIONS for line in reference[s]}
    pred_items = {(s, line) for s in SECTIONS for line in predicted[s]}
    matched = len(gold_items & pred_items)
    precision = _ratio(matched, len(pred_items), len(gold_items))
    recall = _ratio(matched, len(gold_items), len(pred_items))
    return ItemChangeScore(precision, recall, _f1(precision, recall))
