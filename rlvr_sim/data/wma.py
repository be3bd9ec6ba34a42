"""Web state-change transitions: WMA json/jsonl (also our collector's output) and RLVR-World parquet rows.

WMA (Chae et al., ICLR 2025) records, as in `webarena` WMA data and our collector's jsonl:
`objective`, `current_action` (e.g. `click [12] where [12] is link 'SALES'`), `observation` (tree before),
`next_state_acctree` (tree after, optional), `url`, `previous_actions`, `step_idx`, `task_id`,
`new_items` / `deleted_items` / `updated_items` and `next_state_tao` (the three-section gold answer).

RLVR-World web parquet (`thuml/webarena-world-model-cot`, verl layout): `task_id`, `step_idx`,
`previous_actions`, `next_state_acctree`, `new_items`, `updated_items`, `deleted_items`, `question`,
`answer`, `data_source` ("web_agent"), `prompt` (chat messages), `ability`, `reward_model`
(`{"ground_truth": ..., "style": ...}`), `extra_info`. The gold is `reward_model.ground_truth` (else the
three item columns); objective, URL, tree and action come from columns of those names when present,
otherwise from the prompt text, which follows the official template
(`URL: ... OBJECTIVE: ... PREVIOUS ACTION: ... CURRENT OBSERVATION: ... CURRENT ACTION: ...`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlvr_sim.data.parquet import read_parquet_rows


class WebDataError(ValueError):
    """A record that is not a usable web transition; the message names the file, record and field."""


@dataclass
class WebTransition:
    objective: str
    action: str  # WebArena action text (a WMA "where [id] is ..." suffix is kept as given)
    tree: str  # accessibility tree before the action
    gold: str  # three-section answer: "New items:\n...\n\nDeleted items:\n...\n\nUpdated items:\n..."
    url: str = ""
    next_tree: str | None = None
    previous_actions: list[str] = field(default_factory=list)
    task_id: int | None = None
    step_idx: int | None = None
    source_prompt: str | None = None  # the official prompt text, for parquet rows


def compose_gold(new_items: str, deleted_items: str, updated_items: str) -> str:
    """The three-section answer from WMA's per-section fields ('None' or item lines)."""
    def section(value: Any) -> str:
        text = str(value).strip() if value is not None else ""
        return text or "None"

    return (f"New items:\n{section(new_items)}\n\nDeleted items:\n{section(deleted_items)}"
            f"\n\nUpdated items:\n{section(updated_items)}")


def _gold_from(record: dict[str, Any], where: str) -> str:
    reward_model = record.get("reward_model")
    if isinstance(reward_model, dict) and isinstance(reward_model.get("ground_truth"), str):
        return reward_model["ground_truth"]
    if isinstance(record.get("next_state_tao"), str):
        return record["next_state_tao"]
    if all(k in record for k in ("new_items", "deleted_items", "updated_items")):
        return compose_gold(record["new_items"], record["deleted_items"], record["updated_items"])
    raise WebDataError(f"{where}: no gold answer (need next_state_tao, reward_model.ground_truth or "
                       "new_items/deleted_items/updated_items)")


def _previous(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise WebDataError(f"{where}: previous_actions must be a list of actions, got {type(value).__name__}")
    return [str(v) for v in value]


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
        return None


def _next_tree(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise WebDataError(f"{where}: next_state_acctree must be text, got {type(value).__name__}")
    return value


def transition_from_wma(record: dict[str, Any], where: str = "record") -> WebTransition:
    """One WMA-style record; raises WebDataError naming the missing field."""
    if not isinstance(record, dict):
        raise WebDataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    for key in ("objective", "current_action", "observation"):
        if not isinstance(record.get(key), str):
            raise WebDataError(f"{where}: missing or non-string field {key!r}")
    return WebTransition(
        objective=record["objective"], action=record["current_action"], tree=record["observation"],
        gold=_gold_from(record, where), url=str(record.get("url", "")),
        next_tree=_next_tree(record.get("next_state_acctree"), where),
        previous_actions=_previous(record.get("previous_actions"), where),
        task_id=_int_or_none(record.get("task_id")), step_idx=_int_or_none(record.get("step_idx")),
    )


def load_wma(path: str | Path) -> list[WebTransition]:
    """WMA transitions from a .json file (a list of records) or .jsonl (one record a line)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise WebDataError(f"{path}: not UTF-8 text ({exc})") from exc
    try:
        if path.suffix == ".jsonl":
            records = [(f"{path}:{i + 1}", json.loads(line)) for i, line in enumerate(text.splitlines()) if line.strip()]
        else:
            data = json.loads(text)
            if not isinstance(data, list):
                raise WebDataError(f"{path}: expected a JSON list of transitions, got {type(data).__name__}")
            records = [(f"{path}[{i}]", r) for i, r in enumerate(data)]
    except (json.JSONDecodeError, RecursionError) as exc:
        raise WebDataError(f"{path}: not valid JSON ({exc})") from exc
    return [transition_from_wma(record, where) for where, record in records]


def parse_official_prompt(prompt: str) -> dict[str, str]:
    """Fields of the official RLVR-World world-model prompt (the text after its last `URL:`)."""
    start = prompt.rfind("URL:")
    if start == -1:
        return {}
    body = prompt[start:]
    pattern = r"\s*(URL|OBJECTIVE|PREVIOUS ACTION|CURRENT OBSERVATION|CURRENT ACTION):"
    parts = re.split(pattern, body)
    fields: dict[str, str] = {}
    for name, value in zip(parts[1::2], parts[2::2]):
        fields.setdefault(name, value.strip())
    action = fields.get("CURRENT ACTION", "")
    fields["CURRENT ACTION"] = action.split("\n")[0].strip() if action else ""
    return fields


def _prompt_text(row: dict[str, Any]) -> str | None:
    prompt = row.get("prompt")
    if isinstance(prompt, (list, tuple)) and prompt:
        last = prompt[-1]
        if isinstance(last, dict) and isinstance(last.get("content"), str):
            return last["content"]
    return row["question"] if isinstance(row.get("question"), str) else None


def transition_from_parquet_row(row: dict[str, Any], where: str = "row") -> WebTransition:
    """One RLVR-World web parquet row (see module doc); raises WebDataError if it lacks a field."""
    if not isinstance(row, dict):
        raise WebDataError(f"{where}: expected a row of columns, got {type(row).__name__}")
    prompt = _prompt_text(row)
    fields = parse_official_prompt(prompt) if prompt else {}

    def pick(column: str, field_name: str) -> str | None:
        value = row.get(column)
        return value if isinstance(value, str) else fields.get(field_name)

    objective, tree = pick("objective", "OBJECTIVE"), pick("observation", "CURRENT OBSERVATION")
    action = pick("current_action", "CURRENT ACTION")
    for name, value in (("objective", objective), ("observation", tree), ("current_action", action)):
        if not value:
            raise WebDataError(f"{where}: no {name!r} column and none found in the prompt text")
    return WebTransition(
        objective=objective, action=action, tree=tree, gold=_gold_from(row, where),
        url=pick("url", "URL") or "", next_tree=_next_tree(row.get("next_state_acctree"), where),
        previous_actions=_previous(row.get("previous_actions"), where), task_id=_int_or_none(row.get("task_id")),
        step_idx=_int_or_none(row.get("step_idx")), source_prompt=prompt,
    )


def load_rlvr_world_parquet(path: str | Path) -> list[WebTransition]:
    """Transitions from an RLVR-World web parquet file (needs pyarrow)."""
    return read_parquet_rows(path, transition_from_parquet_row, WebDataError)


def load_web_transitions(path: str | Path) -> list[WebTransition]:
    """Dispatch on the file name: .parquet (RLVR-World) or .json/.jsonl (WMA, our collector)."""
    suffix = Path(path).suffix
    if suffix == ".parquet":
        return load_rlvr_world_parquet(path)
    if suffix in (".json", ".jsonl"):
        return load_wma(path)
    raise WebDataError(f"{path}: unknown web data format {suffix!r} (expected .json, .jsonl or .parquet)")


def to_wma_record(transition: WebTransition) -> dict[str, Any]:
    """A WMA-style record (the format our collector writes)."""
    from rlvr_sim.metrics.web import parse_item_sections

    sections = parse_item_sections(transition.gold) or {}
    def joined(name: str) -> str:
        return "\n".join(sections.get(name, [])) or "None"

    record = asdict(transition)
    return {
        "objective": record["objective"], "current_action": record["action"], "observation": record["tree"],
        "next_state_acctree": record["next_tree"], "url": record["url"],
        "previous_actions": record["previous_actions"] or ["None"], "step_idx": record["step_idx"],
        "task_id": record["task_id"], "new_items": joined("New items"), "deleted_items": joined("Deleted items"),
        "updated_items": joined("Updated items"), "next_state_tao": record["gold"],
    }
