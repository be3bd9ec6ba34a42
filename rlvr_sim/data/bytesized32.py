"""Loaders for text-game state-prediction data.

(a) The ByteSized32 state-prediction jsonl schema (Wang et al. 2024; our collector writes it too): one object
per line with ``game``, ``state_id``, ``current_state``, ``action_state``, ``tick_state`` (each
``{observation, look, inventory, taskDesc, lastAction, objects[], max_UUID}``), ``current_score_state`` and
``next_score_state``. The "full" transition is current_state -> tick_state plus next_score_state; the
action is ``tick_state.lastAction``; ``max_UUID`` is the first free uuid for created objects.

(b) RLVR-World parquet rows (thuml/RLVR-World ``lang_wm/data_process/text_game``): ``prompt`` (a chat
list of ``{role, content}``), ``reward_model.ground_truth`` (JSON string of the gold next state
``{"game_state": [objects..., score]}``), ``extra_info.data_state`` (JSON string of the current state, same
layout) and ``extra_info.data_action``. Both become `TextGameTransition`s.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr_sim.data.parquet import read_parquet_rows

RECORD_KEYS = ("game", "current_state", "tick_state", "current_score_state", "next_score_state")
STATE_KEYS = ("objects", "lastAction")
TRANSITION_KINDS = ("full", "action", "tick")


class TextGameDataError(ValueError):
    """A data file or row that does not follow its documented schema; the message names the problem."""


@dataclass
class TextGameTransition:
    """One (s, a) -> s' transition with states in RLVR-World's ground-truth layout."""

    current_state: dict  # {"game_state": [objects..., {"score", "gameOver", "gameWon"}]}
    gold_state: dict
    action: str
    uuid_base: int | None = None  # first free uuid (max_UUID); None when the source does not say
    task_description: str = ""
    game: str = ""
    state_id: Any = None
    prompt: str | None = None  # the source's own prompt text (RLVR-World rows), if any
    extra: dict = field(default_factory=dict)


def _game_state(state: dict, score: dict | None) -> dict:
    return {"game_state": list(state["objects"]) + ([dict(score)] if score is not None else [])}


def record_to_transition(record: dict, kind: str = "full", where: str = "record") -> TextGameTransition:
    """A ByteSized32 jsonl record as a transition: "full" = current -> tick state (+ score), "action" =
    current -> action state, "tick" = action -> tick state (the last two without score, as in the paper)."""
    if kind not in TRANSITION_KINDS:
        raise ValueError(f"kind must be one of {TRANSITION_KINDS}, got {kind!r}")
    if not isinstance(record, dict):
        raise TextGameDataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    needed = RECORD_KEYS + (("action_state",) if kind != "full" else ())
    missing = [k for k in needed if k not in record]
    if missing:
        raise TextGameDataError(f"{where}: missing field(s) {missing}")
    for key in ("current_state", "tick_state") + (("action_state",) if kind != "full" else ()):
        state = record[key]
        if not isinstance(state, dict) or any(k not in state for k in STATE_KEYS):
            raise TextGameDataError(f"{where}: {key} must be an object with {list(STATE_KEYS)}")
        if not isinstance(state["objects"], list) or not all(isinstance(o, dict) and "uuid" in o for o in state["objects"]):
            raise TextGameDataError(f"{where}: {key}.objects must be a list of objects with a uuid")
    if kind == "full":
        for key in ("current_score_state", "next_score_state"):
            if not isinstance(record[key], dict):
                raise TextGameDataError(f"{where}: {key} must be an object, got {type(record[key]).__name__}")
    before, after = {"full": ("current_state", "tick_state"), "action": ("current_state", "action_state"),
                     "tick": ("action_state", "tick_state")}[kind]
    with_score = kind == "full"
    return TextGameTransition(
        current_state=_game_state(record[before], record["current_score_state"] if with_score else None),
        gold_state=_game_state(record[after], record["next_score_state"] if with_score else None),
        action=str(record["tick_state"]["lastAction"]),
        uuid_base=record[before].get("max_UUID"),
        task_description=str(record["current_state"].get("taskDesc", "")),
        game=str(record["game"]),
        state_id=record.get("state_id"),
    )


def read_jsonl(path: str | Path) -> list[dict]:
    """Rows of a jsonl file; a bad line is reported with its number."""
    rows = []
    number = 0
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except (ValueError, RecursionError) as exc:
                    raise TextGameDataError(f"{path}:{number}: not valid JSON ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise TextGameDataError(f"{path}:{number + 1}: not UTF-8 text ({exc})") from exc
    return rows


def load_bytesized32_jsonl(path: str | Path, kind: str = "full") -> list[TextGameTransition]:
    """Transitions of a ByteSized32-schema jsonl file (the real test set loads unchanged)."""
    return [record_to_transition(row, kind, f"{path}:{i + 1}") for i, row in enumerate(read_jsonl(path))]


def write_bytesized32_jsonl(records: list[dict], path: str | Path) -> None:
    """Write raw ByteSized32-schema records, one JSON object per line."""
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


# ------------------------------------------------------------------------------------- RLVR-World parquet

_UUID_BASE_RE = re.compile(r"The current game UUID base is\s*(-?\d+)")
_TASK_RE = re.compile(r"Here is the game that you need to simulate:\s*Task Description:\s*\n(.*?)\n", re.DOTALL)


def _json_field(value: Any, name: str, where: str) -> Any:
    try:
        if isinstance(value, (bytes, bytearray)):
            value = value.decode("utf-8")
        if isinstance(value, str):
            return json.loads(value)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise TextGameDataError(f"{where}: {name} is not UTF-8 JSON ({exc})") from exc
    return value


def _state_field(value: Any, name: str, where: str) -> dict:
    state = _json_field(value, name, where)
    if not isinstance(state, dict) or not isinstance(state.get("game_state"), list):
        hint = " (an SFT row whose ground_truth is a response text?)" if name == "reward_model.ground_truth" else ""
        raise TextGameDataError(f"{where}: {name} must be a JSON state {{'game_state': [...]}}{hint}")
    return state


def _prompt_text(prompt: Any, where: str) -> str:
    """The user content of a chat-format prompt (a list of {role, content}), or a plain string prompt."""
    if isinstance(prompt, str):
        return prompt
    try:
        messages = list(prompt)
        return "\n".join(str(m["content"]) for m in messages if m.get("role", "user") == "user")
    except (TypeError, KeyError, AttributeError) as exc:
        raise TextGameDataError(f"{where}: prompt must be a list of {{role, content}} messages") from exc


def row_to_transition(row: dict, where: str = "row") -> TextGameTransition:
    """One RLVR-World parquet row (as a dict of its columns) as a transition."""
    if not isinstance(row, dict):
        raise TextGameDataError(f"{where}: expected a row of columns, got {type(row).__name__}")
    for column in ("reward_model", "extra_info"):
        if row.get(column) is not None and not isinstance(row[column], dict):
            raise TextGameDataError(f"{where}: {column} must be a struct, got {type(row[column]).__name__}")
    for key, sub in (("prompt", None), ("reward_model", "ground_truth"), ("extra_info", "data_state"),
                     ("extra_info", "data_action")):
        if key not in row or row[key] is None or (sub is not None and sub not in row[key]):
            raise TextGameDataError(f"{where}: missing {key + ('.' + sub if sub else '')}")
    prompt = _prompt_text(row["prompt"], where)
    uuid_bases = _UUID_BASE_RE.findall(prompt)
    task = _TASK_RE.search(prompt)
    extra = {k: v for k, v in row["extra_info"].items() if k not in ("data_state", "data_action")}
    return TextGameTransition(
        current_state=_state_field(row["extra_info"]["data_state"], "extra_info.data_state", where),
        gold_state=_state_field(row["reward_model"]["ground_truth"], "reward_model.ground_truth", where),
        action=str(row["extra_info"]["data_action"]),
        uuid_base=int(uuid_bases[-1]) if uuid_bases else None,  # the last one: earlier ones are the examples'
        task_description=task.group(1).strip() if task else "",
        game=str(row.get("data_source", "")),
        state_id=extra.get("index"),
        prompt=prompt,
        extra=extra,
    )


def load_rlvr_world_parquet(path: str | Path) -> list[TextGameTransition]:
    """Transitions of an RLVR-World text-game parquet file (e.g. test_state_difference.parquet)."""
    return read_parquet_rows(path, row_to_transition, TextGameDataError)


def write_rlvr_world_parquet(transitions: list[TextGameTransition], path: str | Path, prompts: list[str],
                             split: str = "test") -> None:
    """Write transitions as RLVR-World parquet rows (our data in the official layout; test fixtures)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if len(prompts) != len(transitions):
        raise ValueError(f"{len(prompts)} prompts for {len(transitions)} transitions")
    rows = [
        {
            "data_source": "llm_simulator",
            "prompt": [{"role": "user", "content": prompt}],
            "ability": "next state prediction",
            "reward_model": {"style": "rule", "ground_truth": json.dumps(t.gold_state)},
            "extra_info": {"split": split, "index": i, "data_state": json.dumps(t.current_state),
                           "data_action": t.action},
        }
        for i, (t, prompt) in enumerate(zip(transitions, prompts))
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)


def load_transitions(path: str | Path, kind: str = "full") -> list[TextGameTransition]:
    """Load either format by file extension (.jsonl / .json lines, or .parquet)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no data file at {path}")
    if path.suffix == ".parquet":
        return load_rlvr_world_parquet(path)
    return load_bytesized32_jsonl(path, kind)
