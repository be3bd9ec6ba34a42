"""Verifiable metric and rewards for text-game state prediction (ByteSized32, RLVR-World section "Text game").

States use RLVR-World's ground-truth layout ``{"game_state": [obj, ..., {"score", "gameOver", "gameWon"}]}``
where an object is ``{name, uuid, type, properties{}, contains[]}``. A model answers with a diff after the
marker ``The final answer is:`` -> ``{"modified": [objects], "removed": [uuids], "score": {...}}``.

Checks are counted per (object, property): each gold property is one check, the object's ``contains``
(a multiset) one more, a missing object one error. The default semantics are the correct ones; the
``compat="rlvr-world"`` mode reproduces the official scorer's quirks so that numbers compare with the
paper's. Pure python: no torch, no model code.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

ANSWER_MARKER = "The final answer is:"
# Markers the official scorer looks for, in its order of preference.
_OFFICIAL_MARKERS = (
    "The final answer is:",
    "the final answer is:",
    "The final state is:",
    "the final state is:",
    "The final game state is:",
    "the final game state is:",
)
_MARKER_RE = re.compile(r"the final (?:answer|state|game state) is\s*:", re.IGNORECASE)
_FENCED_RE = re.compile(r"```(?:json|python)?\s*([\s\S]*?)\s*```", re.IGNORECASE)
REWARD_TYPES = ("binary", "task_specific")
COMPAT_MODES = (None, "rlvr-world")
# Task-specific reward weights (RLVR-World, Wu et al. 2025): objects accuracy, score accuracy, all-correct bonus, changed pairs.
W_OBJECTS, W_SCORE, W_ALL_CORRECT, W_CHANGED = 0.09, 0.01, 0.2, 1.0
CONTAINS = "contains"
OBJECT_PRESENCE = "<object>"  # the pseudo-property of a removed object in the changed-pair list


class AnswerParseError(ValueError):
    """A model output that cannot be read as a state diff; the message says why."""


# ----------------------------------------------------------------------------------------------- parsing


def _balanced_object(text: str) -> str:
    """The first complete ``{...}`` in text (string-aware brace matching), or raise why there is none."""
    start = text.find("{")
    if start < 0:
        raise AnswerParseError("no JSON object ('{') in the answer")
    depth, quote, escaped = 0, None, False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    raise AnswerParseError("unterminated JSON object (output truncated?)")


def _loads_lenient(blob: str) -> Any:
    """JSON, then Python literal (repr with True/None, single quotes), then JSON without trailing commas,
    then a Python literal that spells constants the JSON way (single quotes with true/null)."""
    errors = []
    python_literal = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", blob)))
    attempts = (
        ("json", json.loads, blob),
        ("python literal", ast.literal_eval, blob),
        ("json without trailing commas", json.loads, re.sub(r",\s*([}\]])", r"\1", blob)),
        ("python literal with JSON constants", ast.literal_eval, python_literal),
    )
    for label, loader, text in attempts:
        try:
            return loader(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            errors.append(f"{label}: {exc}")
    raise AnswerParseError("answer is neither JSON nor a Python literal (" + "; ".join(errors)[:300] + ")")


def extract_answer_text(response: str) -> str:
    """The part of a response that holds the answer: after the last final-answer marker, else the last
    fenced block, else the whole response."""
    markers = list(_MARKER_RE.finditer(response))
    if markers:
        return response[markers[-1].end() :]
    fenced = _FENCED_RE.findall(response)
    if fenced:
        return fenced[-1]
    return response


def _is_hashable(value: Any) -> bool:
    """uuids key dicts: a list or dict uuid cannot name an object."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _as_uuid(value: Any) -> Any:
    """uuids are ints in ByteSized32; accept "7" as 7, keep anything else as is."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


def parse_answer(response: str) -> dict:
    """Read a model output as ``{"modified": [...], "removed": [...], "score": {...}}``.

    Tolerates what models emit: Python repr, fenced json, a missing marker, text after the object, a
    missing "removed"/"score" key (read as empty). Raises AnswerParseError naming the problem otherwise.
    """
    if not isinstance(response, str):
        raise AnswerParseError(f"response must be a string, got {type(response).__name__}")
    parsed = _loads_lenient(_balanced_object(extract_answer_text(response)))
    if not isinstance(parsed, dict):
        raise AnswerParseError(f"answer must be a JSON object, got {type(parsed).__name__}")
    if "modified" not in parsed:
        raise AnswerParseError("answer has no 'modified' key")
    modified = parsed["modified"]
    if isinstance(modified, dict):
        modified = [modified]
    if not isinstance(modified, list):
        raise AnswerParseError(f"'modified' must be a list of objects, got {type(modified).__name__}")
    for i, obj in enumerate(modified):
        if not isinstance(obj, dict) or "uuid" not in obj:
            raise AnswerParseError(f"'modified'[{i}] is not an object with a 'uuid'")
        if not _is_hashable(obj["uuid"]):
            raise AnswerParseError(f"'modified'[{i}] has a uuid that is not a scalar: {obj['uuid']!r:.80}")
    removed = parsed.get("removed", [])
    if removed is None:
        removed = []
    if not isinstance(removed, list):
        removed = [removed]
    score = parsed.get("score", {})
    if score is None:
        score = {}
    if not isinstance(score, dict):
        raise AnswerParseError(f"'score' must be an object, got {type(score).__name__}")
    if score and "score" not in score:
        raise AnswerParseError(f"'score' must be empty or a full score record with a 'score' key, got {score}")
    modified = [{**obj, "uuid": _as_uuid(obj["uuid"])} for obj in modified]
    return {"modified": modified, "removed": [_as_uuid(u) for u in removed], "score": score}


# ------------------------------------------------------------------------------------------------ states


def load_state(state: dict | str | list) -> dict:
    """A state as ``{"game_state": [...]}``; accepts that dict, its JSON string, or the bare list."""
    if isinstance(state, str):
        try:
            state = json.loads(state)
        except ValueError as exc:
            raise ValueError(f"state string is not JSON: {exc}") from exc
    if isinstance(state, list):
        state = {"game_state": state}
    if not isinstance(state, dict) or not isinstance(state.get("game_state"), list):
        raise ValueError("state must be {'game_state': [objects..., score record]}")
    return state


def split_state(state: dict | str | list) -> tuple[dict[Any, dict], dict | None]:
    """(objects by uuid in order, score record or None) of a ground-truth-layout state."""
    objects: dict[Any, dict] = {}
    score = None
    for entry in load_state(state)["game_state"]:
        if not isinstance(entry, dict):
            raise ValueError(f"state entry must be an object, got {type(entry).__name__}")
        if "uuid" in entry:
            if not _is_hashable(entry["uuid"]):
                raise ValueError(f"state object has a uuid that is not a scalar: {entry['uuid']!r:.80}")
            objects[entry["uuid"]] = entry
        elif "score" in entry:
            score = entry
        else:
            raise ValueError(f"state entry is neither an object (uuid) nor a score record: {str(entry)[:80]}")
    return objects, score


def join_state(objects: dict[Any, dict] | list[dict], score: dict | None) -> dict:
    """Inverse of split_state."""
    entries = list(objects.values()) if isinstance(objects, dict) else list(objects)
    return {"game_state": entries + ([score] if score is not None else [])}


def apply_diff(current_state: dict | str | list, diff: dict) -> dict:
    """The predicted next state: current objects with modified ones replaced or added (new uuids appended),
    removed uuids dropped, and the score record replaced when the diff gives a non-empty one."""
    objects, score = split_state(current_state)
    objects = dict(objects)
    for obj in diff.get("modified", []):
        objects[obj["uuid"]] = obj
    for uuid in diff.get("removed", []):
        try:
            objects.pop(uuid, None)
        except TypeError:  # an unhashable "uuid" (e.g. a list) removes nothing
            continue
    new_score = diff.get("score") or None
    return join_state(objects, new_score if new_score is not None else score)


def make_diff(current_state: dict | str | list, next_state: dict | str | list) -> dict:
    """The gold answer o(s') in the official diff format: changed or created objects in full, removed
    uuids, and the next score record when it differs from the current one (``{}`` otherwise)."""
    cur_objects, cur_score = split_state(current_state)
    next_objects, next_score = split_state(next_state)
    modified = [
        copy.deepcopy(obj)
        for uuid, obj in next_objects.items()
        if uuid not in cur_objects or not objects_equal(cur_objects[uuid], obj)
    ]
    removed = [uuid for uuid in cur_objects if uuid not in next_objects]
    score = next_score if next_score is not None and not values_equal(cur_score, next_score) else {}
    return {"modified": modified, "removed": removed, "score": score}


# ------------------------------------------------------------------------------------------- comparisons


def values_equal(a: Any, b: Any) -> bool:
    """Property equality: list and tuple alike, dicts by key, bools never equal to numbers (JSON typing)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple, dict)) or isinstance(b, (list, tuple, dict)):
        return False
    return a == b


def _hashable(item: Any) -> Any:
    """A ``contains`` entry as a Counter key: scalars as they are, containers (a Python-literal answer
    may hold sets, or dicts with mixed key types) by a canonical text."""
    if _is_hashable(item) and not isinstance(item, tuple):
        return item
    try:
        return json.dumps(item, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(item)


def contains_equal(a: Any, b: Any) -> bool:
    """``contains`` compared as a multiset (order does not matter)."""
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    return Counter(map(_hashable, a)) == Counter(map(_hashable, b))


def _properties(obj: dict) -> dict | None:
    props = obj.get("properties")
    return props if isinstance(props, dict) else None


def objects_equal(a: dict, b: dict) -> bool:
    """Same properties (keys and values) and the same ``contains`` multiset."""
    pa, pb = _properties(a), _properties(b)
    if pa is None or pb is None:
        return False
    return values_equal(pa, pb) and contains_equal(a.get(CONTAINS, []), b.get(CONTAINS, []))


@dataclass
class StateComparison:
    """Counts of correct / wrong checks between a predicted and a gold state."""

    num_correct: int
    num_errors: int
    num_correct_score: int
    num_errors_score: int
    errors: list[str]

    @property
    def objects_accuracy(self) -> float:
        total = self.num_correct + self.num_errors
        return self.num_correct / total if total else 1.0

    @property
    def score_accuracy(self) -> float:
        total = self.num_correct_score + self.num_errors_score
        return self.num_correct_score / total if total else 1.0

    @property
    def all_correct(self) -> bool:
        return self.num_errors == 0 and self.num_errors_score == 0


def compare_states(predicted_state: dict | str | list, gold_state: dict | str | list) -> StateComparison:
    """Per-(object, property) checks of a prediction against gold. A missing object, a missing or extra
    property, and an object the gold state does not have (hallucinated, or not removed) are one error each."""
    pred_objects, pred_score = split_state(predicted_state)
    gold_objects, gold_score = split_state(gold_state)
    correct = errors = 0
    messages: list[str] = []
    for uuid, gold in gold_objects.items():
        name = gold.get("name", uuid)
        pred = pred_objects.get(uuid)
        if pred is None:
            errors += 1
            messages.append(f"missing object {name}")
            continue
        gold_props, pred_props = _properties(gold) or {}, _properties(pred)
        if pred_props is None:
            errors += 1 + len(gold_props)
            messages.append(f"no properties predicted for {name}")
        else:
            for key, value in gold_props.items():
                if key in pred_props and values_equal(value, pred_props[key]):
                    correct += 1
                else:
                    errors += 1
                    messages.append(f"{name}.{key}: predicted {pred_props.get(key, '<missing>')!r}, gold {value!r}")
            for key in pred_props.keys() - gold_props.keys():
                errors += 1
                messages.append(f"{name}: unexpected property {key!r}")
        if contains_equal(gold.get(CONTAINS, []), pred.get(CONTAINS)):
            correct += 1
        else:
            errors += 1
            messages.append(f"{name}.contains: predicted {pred.get(CONTAINS)!r}, gold {gold.get(CONTAINS, [])!r}")
    for uuid, pred in pred_objects.items():
        if uuid not in gold_objects:
            errors += 1
            messages.append(f"object {pred.get('name', uuid)} should not exist")
    score_correct = score_errors = 0
    if gold_score is not None:
        for key, value in gold_score.items():
            if pred_score is not None and key in pred_score and values_equal(value, pred_score[key]):
                score_correct += 1
            else:
                score_errors += 1
                messages.append(f"score.{key}: predicted {(pred_score or {}).get(key, '<missing>')!r}, gold {value!r}")
    return StateComparison(correct, errors, score_correct, score_errors, messages)


def changed_pairs(current_state: dict | str | list, gold_state: dict | str | list) -> list[tuple[Any, str]]:
    """(uuid, property) pairs that differ between the current and the gold next state: changed, added or
    dropped properties and ``contains`` of kept objects, every property and ``contains`` of created objects,
    and one presence pair per removed object."""
    cur_objects, _ = split_state(current_state)
    gold_objects, _ = split_state(gold_state)
    pairs: list[tuple[Any, str]] = []
    for uuid, gold in gold_objects.items():
        gold_props = _properties(gold) or {}
        if uuid not in cur_objects:
            pairs += [(uuid, key) for key in gold_props] + [(uuid, CONTAINS)]
            continue
        cur_props = _properties(cur_objects[uuid]) or {}
        for key in gold_props.keys() | cur_props.keys():
            if key not in gold_props or key not in cur_props or not values_equal(gold_props[key], cur_props[key]):
                pairs.append((uuid, key))
        if not contains_equal(gold.get(CONTAINS, []), cur_objects[uuid].get(CONTAINS, [])):
            pairs.append((uuid, CONTAINS))
    pairs += [(uuid, OBJECT_PRESENCE) for uuid in cur_objects if uuid not in gold_objects]
    return pairs


def _pair_correct(pred_objects: dict, gold_objects: dict, uuid: Any, key: str) -> bool:
    if key == OBJECT_PRESENCE:
        return uuid not in pred_objects
    pred = pred_objects.get(uuid)
    if pred is None:
        return False
    if key == CONTAINS:
        return contains_equal(gold_objects[uuid].get(CONTAINS, []), pred.get(CONTAINS))
    gold_props, pred_props = _properties(gold_objects[uuid]) or {}, _properties(pred)
    if pred_props is None:
        return False
    if key not in gold_props:  # the property was dropped: right if the prediction dropped it too
        return key not in pred_props
    return key in pred_props and values_equal(gold_props[key], pred_props[key])


def is_changed_transition(current_state: dict | str | list, gold_state: dict | str | list) -> bool:
    """A transition is "Changed" (Table 1) when any object changes, appears or disappears."""
    return bool(changed_pairs(current_state, gold_state))


# --------------------------------------------------------------------------------------------- rewards


def _default_reward(response: str, current_state: Any, gold_state: Any, reward_type: str) -> float:
    try:
        diff = parse_answer(response)
    except AnswerParseError:
        return 0.0
    predicted = apply_diff(current_state, diff)
    comparison = compare_states(predicted, gold_state)
    if reward_type == "binary":
        return float(comparison.all_correct)
    pairs = changed_pairs(current_state, gold_state)
    reward = (
        W_OBJECTS * comparison.objects_accuracy
        + W_SCORE * comparison.score_accuracy
        + W_ALL_CORRECT * comparison.all_correct
    )
    if pairs:
        pred_objects, _ = split_state(predicted)
        gold_objects, _ = split_state(gold_state)
        hits = sum(_pair_correct(pred_objects, gold_objects, uuid, key) for uuid, key in pairs)
        reward += W_CHANGED * hits / len(pairs)
    return reward


def text_game_reward(
    response: str,
    current_state: dict,
    gold_state: dict,
    reward_type: str = "binary",
    compat: str | None = None,
) -> float:
    """Verifiable reward of one model response for the transition current_state -> gold_state.

    reward_type "binary": 1 if every check and the score record are right, else 0. "task_specific":
    0.09*acc_objects + 0.01*acc_score + 0.2*all_correct + 1.0*acc_changed (max 1.3 on a changed
    transition, 0.3 on an unchanged one). Unparseable output scores 0. compat="rlvr-world" reproduces the
    official scorer (created objects never counted, listed removals never checked, an extra property key
    zeroes the task-specific reward). States may also be given as JSON strings (as in the parquet rows).
    """
    if reward_type not in REWARD_TYPES:
        raise ValueError(f"reward_type must be one of {REWARD_TYPES}, got {reward_type!r}")
    if compat not in COMPAT_MODES:
        raise ValueError(f"compat must be one of {COMPAT_MODES}, got {compat!r}")
    if compat == "rlvr-world":
        try:
            return _official_reward(response, current_state, gold_state, reward_type)
        except Exception:  # the official scorer maps every exception to 0; compat mode keeps that
            return 0.0
    return _default_reward(response, load_state(current_state), load_state(gold_state), reward_type)


# ------------------------------------------------------------- compat="rlvr-world": the official scorer
# Re-implemented from reading thuml/RLVR-World lang_wm/verl/verl/utils/reward_score/text_game.py. Every
# quirk of it follows from its structure, kept here on purpose: the predicted state is rebuilt
# from the current objects only (created objects are dropped), only gold objects are checked (an object
# the prediction failed to remove is never seen), and its changed-pair bookkeeping raises (-> reward 0) on
# a property key the gold object does not have. Python `!=` is used, so True == 1 as in the original.


def _official_answer(response: str) -> Any:
    """Answer extraction and JSON reading as the official scorer does them (json_repair when installed)."""
    for marker in _OFFICIAL_MARKERS:
        if marker in response:
            answer = response.split(marker)[-1].strip()
            break
    else:
        fenced = re.findall(r"```json\s*([\s\S]*?)\s*```", response, re.DOTALL)
        answer = fenced[-1] if fenced and len(fenced[-1]) >= 10 else response
    answer = answer.replace("True", "true").replace("False", "false").replace("None", "null")
    try:
        import json_repair
    except ImportError:
        return _loads_lenient(_balanced_object(answer))
    return json_repair.loads(answer)


def _official_recover(current: dict, prediction: dict) -> dict:
    """The official partial-state recovery: only current objects survive (new uuids in 'modified' are
    dropped), a removal counts only when `uuid in removed` works, the score record only if 'score' is given."""
    modified: dict = {}
    try:
        for obj in prediction["modified"]:
            try:
                modified[obj["uuid"]] = obj
            except Exception:
                continue
    except TypeError:
        modified = {}
    recovered = []
    for obj in current["game_state"][:-1]:
        try:
            if obj["uuid"] in prediction["removed"] or obj["uuid"] == prediction["removed"]:
                continue
        except TypeError:
            pass
        recovered.append(modified.get(obj["uuid"], obj))
    if "score" in prediction:
        try:
            recovered.append(prediction["score"] if len(prediction["score"]) > 0 else current["game_state"][-1])
        except TypeError:
            recovered.append(current["game_state"][-1])
    return {"game_state": recovered}


def _official_split(entries: list) -> tuple[dict, dict]:
    objects, score = {}, {}
    for entry in entries:
        if "uuid" in entry:
            objects[entry["uuid"]] = entry
        elif "score" in entry:
            score = entry
    return objects, score


def _official_same(a: Any, b: Any) -> bool:
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        return list(a) == list(b)
    if type(a) is dict and type(b) is dict:
        return len(a) == len(b) and all(key in b and _official_same(a[key], b[key]) for key in a)
    return a == b


def _official_pair_diff(state_1: dict, state_2: dict) -> list[tuple[str, Any, int]]:
    """(key, uuid, code) per property of objects kept from state_1 to state_2 (the official
    get_state_diff_detail_v2 'modified' list): 1 same, 0 different, 2 key dropped, 3 key added."""
    objects_1, _ = _official_split(state_1["game_state"])
    objects_2, _ = _official_split(state_2["game_state"])
    entries = []
    for uuid, obj_1 in objects_1.items():
        if uuid not in objects_2:
            continue
        props_1, props_2 = obj_1["properties"], objects_2[uuid]["properties"]
        for key in props_1:
            entries.append((key, uuid, 2 if key not in props_2 else int(_official_same(props_1[key], props_2[key]))))
        entries += [(key, uuid, 3) for key in props_2 if key not in props_1]
        same_contents = sorted(obj_1.get(CONTAINS, [])) == sorted(objects_2[uuid].get(CONTAINS, []))
        entries.append((CONTAINS, uuid, int(same_contents)))
    return entries


def _official_counts(prediction: dict, target: dict) -> tuple[int, int, int, int]:
    """(errors, score errors, correct, score correct) as the official evaluate() counts them."""
    target_objects, target_score = _official_split(target["game_state"])
    pred_objects, pred_score = _official_split(prediction["game_state"])
    errors = score_errors = correct = score_correct = 0
    for uuid, gold in target_objects.items():
        pred = pred_objects.get(uuid)
        if pred is None:
            errors += 1
            continue
        if "properties" not in pred:
            errors += 1
        else:
            for key, value in gold["properties"].items():
                ok = key in pred["properties"] and _official_same(value, pred["properties"][key])
                correct, errors = correct + ok, errors + (not ok)
        ok = CONTAINS in pred and sorted(gold[CONTAINS]) == sorted(pred[CONTAINS])
        correct, errors = correct + ok, errors + (not ok)
    for key, value in target_score.items():
        ok = key in pred_score and pred_score[key] == value
        score_correct, score_errors = score_correct + ok, score_errors + (not ok)
    return errors, score_errors, correct, score_correct


def _official_reward(response: str, current_state: Any, gold_state: Any, reward_type: str) -> float:
    current = json.loads(current_state) if isinstance(current_state, str) else current_state
    gold = json.loads(gold_state) if isinstance(gold_state, str) else gold_state
    prediction = _official_answer(response)
    if "modified" not in prediction or "removed" not in prediction:
        return 0.0
    predicted = _official_recover(current, prediction)
    try:
        errors, score_errors, correct, score_correct = _official_counts(predicted, gold)
    except Exception:  # the official evaluate() reports "Wrong prediction format" -> reward 0
        return 0.0
    item_accuracy = correct / (correct + errors)
    score_accuracy = score_correct / (score_correct + score_errors)
    all_correct = item_accuracy == 1 and score_accuracy == 1
    if reward_type == "binary":
        return float(all_correct)
    gold_changed: dict[Any, dict[str, int]] = {}
    for key, uuid, code in _official_pair_diff(current, gold):
        gold_changed.setdefault(uuid, {})[key] = int(code != 1)
    current_objects, _ = _official_split(current["game_state"])
    gold_objects, _ = _official_split(gold["game_state"])
    for uuid in (gold_objects.keys() - current_objects.keys()) | (current_objects.keys() - gold_objects.keys()):
        gold_changed[uuid] = {CONTAINS: 1}  # created/removed objects: properties "na", never reached below
    hits: list[int] = []
    try:
        pred_pairs = _official_pair_diff(gold, predicted)
    except Exception:  # malformed predicted object: the official code silently skips the changed term
        pred_pairs = []
    for key, uuid, code in pred_pairs:
        if gold_changed[uuid][key] == 1:  # KeyError on an unexpected property -> reward 0 (official quirk)
            hits.append(int(code == 1))
    reward = W_OBJECTS * item_accuracy + W_SCORE * score_accuracy + W_ALL_CORRECT * all_correct
    return reward + (sum(hits) / len(hits) if hits else 0.0)


# ------------------------------------------------------------------------------------ accuracy (Table 1)


def exact_match(response: str, current_state: dict, gold_state: dict, compat: str | None = None) -> bool:
    """The prediction is exactly right (binary reward 1)."""
    return text_game_reward(response, current_state, gold_state, "binary", compat) == 1.0


def accuracy_report(changed_flags: list[bool], correct_flags: list[bool]) -> dict[str, Any]:
    """Exact-match accuracy (%) on Unchanged / Changed / Overall transitions, with counts (Table 1)."""
    if len(changed_flags) != len(correct_flags):
        raise ValueError(f"{len(changed_flags)} changed flags but {len(correct_flags)} correctness flags")

    def pct(flags: list[bool]) -> float | None:
        return round(100.0 * sum(flags) / len(flags), 2) if flags else None

    unchanged = [c for ch, c in zip(changed_flags, correct_flags) if not ch]
    changed = [c for ch, c in zip(changed_flags, correct_flags) if ch]
    return {
        "unchanged": pct(unchanged),
        "changed": pct(changed),
        "overall": pct(list(correct_flags)),
        "n_unchanged": len(unchanged),
        "n_changed": len(changed),
        "n": len(correct_flags),
    }


def format_accuracy_table(rows: dict[str, dict[str, Any]]) -> str:
    """Markdown table of accuracy_report rows (model -> report), optional mean-reward columns included."""
    header = "| Model | Unchanged | Changed | Overall | mean binary reward | mean task-specific reward | n |"
    lines = [header, "|---|---|---|---|---|---|---|"]

    def cell(value: Any) -> str:
        return "-" if value is None else (f"{value:.2f}" if isinstance(value, float) else str(value))

    for model, row in rows.items():
        lines.append(
            f"| {model} | {cell(row.get('unchanged'))} | {cell(row.get('changed'))} | {cell(row.get('overall'))} | "
            f"{cell(row.get('mean_binary_reward'))} | {cell(row.get('mean_task_specific_reward'))} | {cell(row.get('n'))} |"
        )
    return "\n".join(lines) + "\n"
