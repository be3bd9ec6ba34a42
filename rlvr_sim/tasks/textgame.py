"""Text-game world-model task: codec q(s, a) / o(s') in the official diff format, and the verifiable reward.

Prompt (one block per line): task description, the game's rules (objects, actions, score), the current
state as compact JSON, the uuid base for created objects and the action. Answer: ``The final answer is:``
then ``{"modified": [...], "removed": [...], "score": {...}}`` (the official RLVR-World / ByteSized32
partial-state format; ``score`` is ``{}`` when the score record does not change). The reward decodes the
completion and scores it with `rlvr_sim.metrics.textgame.text_game_reward`; unparseable output scores 0.

    task = make_task("textgame", data_dir="data/textgame", reward_type="task_specific")
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from rlvr_sim.data.bytesized32 import TextGameTransition, load_transitions
from rlvr_sim.metrics.textgame import (
    ANSWER_MARKER,
    AnswerParseError,
    apply_diff,
    is_changed_transition,
    make_diff,
    parse_answer,
    text_game_reward,
)
from rlvr_sim.resources import asset_path
from rlvr_sim.tasks.text_transition import TextTransitionTask

EMBEDDED_TOKENIZER = asset_path("textgame_tokenizer")

# The rules block of our games' prompts (objects, actions, score): part of the task's vocabulary, so
# it lives with the codec; rlvr_sim.envs.textgame.games implements these rules.
GAME_RULES: dict[str, tuple[str, str, str]] = {
    "boil-water": (
        "stove: on is true when lit; holds the pot. pot: a container. water: temperature in degrees; each"
        " tick on a lit stove it rises by 20 up to 100; at 100 the water is removed and steam is created "
        "in the pot.",
        "turn on/off stove; put pot on stove; take pot (off the stove).",
        "1 for the pot on the stove, 1 for a lit stove, 2 more once there is steam; steam ends and wins "
        "the game.",
    ),
    "lit-lightbulb": (
        "wire: battery and bulb say whether each end is connected. switch: on when closed. bulb: on is "
        "set at each tick, true exactly when the wire joins battery and bulb and the switch is on.",
        "connect/disconnect wire to battery; connect/disconnect wire to bulb; turn on/off switch.",
        "1 per connected wire end, 1 for the switch on; a shining bulb adds 2 and wins the game.",
    ),
    "grow-plant": (
        "seed: water is its moisture (0 to 4), growth counts ticks. Each tick with water above 0 the seed"
        " uses 1 water and growth rises by 1; at growth 3 the seed is removed and a flower is created in "
        "the pot.",
        "water seed (adds 2 water, at most 4).",
        "score is the seed's growth; a flower gives 4 and wins the game.",
    ),
    "cook-potato": (
        "stove: on when lit. pan: a container on the stove. potato: sliced, cook counts ticks in the pan "
        "on a lit stove (+1 each tick); cook 3 or 4 is cooked, cook 5 or more is burnt.",
        "slice potato; put potato in pan (it must be sliced); turn on/off stove.",
        "1 for sliced, 1 when in the pan, 2 when cooked; cooked with the stove off wins; burnt loses.",
    ),
    "mix-paint": (
        "cup: holds poured paints. red, blue, yellow paint. Mixing a cup with exactly two paints removes "
        "them and creates the mixed paint in the cup: red+blue=purple paint, red+yellow=orange paint, "
        "blue+yellow=green paint.",
        "pour <color> paint into cup; mix cup.",
        "1 per correct paint in the cup; the target color wins, any other mixed color loses.",
    ),
    "measure-volume": (
        "cylinder: level is the water level in ml; putting the stone in raises it by the stone's volume, "
        "taking it out lowers it again. stone: volume in ml is unknown to the player. agent: holds what "
        "you carry.",
        "put stone in cylinder; take stone; answer <number> (volume of the stone).",
        "1 while the stone is in the cylinder; the right answer gives 3 and wins, a wrong one loses.",
    ),
    "sweep-floor": (
        "floor: dirt is the amount of dirt left. broom: must be carried to sweep. dustpan: dust it has "
        "collected. agent: holds what you carry.",
        "take broom; drop broom; sweep floor (with the broom: floor dirt -1, dustpan dust +1).",
        "1 per unit of dust in the dustpan; a clean floor wins the game.",
    ),
    "make-ice": (
        "freezer: open or closed; holds the tray. tray: a container. water/ice: temperature in degrees. "
        "Each tick in the closed freezer it falls by 10 (down to -10), outside it rises by 10 (up to 20)."
        " Water at 0 or below is removed and ice is created in the tray; ice above 0 is removed and water"
        " is created.",
        "open/close freezer; put tray in freezer (freezer open); take tray (freezer open).",
        "1 for the tray in the freezer, 1 for the freezer closed with the tray inside; ice wins (score "
        "3).",
    ),
    "refrigerate-milk": (
        "fridge: open or closed; holds food. milk: temperature in degrees and fresh (ticks left before it"
        " spoils). Each tick in the closed fridge the milk cools by 5 (down to 5); elsewhere it warms by "
        "5 (up to 25) and, above 10 degrees, fresh drops by 1.",
        "open/close fridge; put milk in fridge (fridge open); take milk (fridge open).",
        "1 for the milk in the fridge, 1 for the fridge closed with it; milk at 5 wins, fresh 0 loses.",
    ),
}


def compact_json(value: Any) -> str:
    """JSON without spaces: the same text every time, and fewer tokens."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def game_rules(game: str) -> str | None:
    """The natural-language rules of one of our games (None for games we do not ship, e.g. ByteSized32's)."""
    if game not in GAME_RULES:
        return None
    objects, actions, score = GAME_RULES[game]
    return f"Objects: {objects}\nActions: {actions}\nScore: {score}"


def encode_prompt_text(transition: TextGameTransition, with_rules: bool = True) -> str:
    """q(s, a) as text."""
    lines = [f"Task: {transition.task_description}"]
    rules = game_rules(transition.game) if with_rules else None
    if rules:
        lines.append(rules)
    lines.append("State: " + compact_json(transition.current_state["game_state"]))
    if transition.uuid_base is not None:
        lines.append(f"UUID base: {transition.uuid_base}")
    lines.append(f"Action: {transition.action}")
    return "\n".join(lines) + "\n"


def encode_answer_text(transition: TextGameTransition) -> str:
    """o(s') as text: the marker and the gold diff."""
    return f"{ANSWER_MARKER} {compact_json(make_diff(transition.current_state, transition.gold_state))}"


def decode_answer(text: str, current_state: dict) -> tuple[dict | None, str | None]:
    """(predicted next state, None) or (None, why it could not be parsed)."""
    try:
        return apply_diff(current_state, parse_answer(text)), None
    except AnswerParseError as exc:
        return None, str(exc)


class TextGameTask(TextTransitionTask):
    """ByteSized32-style state prediction as a Task: examples from collected jsonl / RLVR-World parquet,
    reward = text_game_reward(reward_type, compat) of the decoded completion (0 when unparseable)."""

    name = "textgame"
    tokenizer_asset = "textgame_tokenizer"

    def __init__(
        self,
        tokenizer: Any = None,
        data_dir: str | list[str] = "data/textgame",
        reward_type: str = "task_specific",
        compat: str | None = None,
        max_prompt_tokens: int = 512,
        max_new_tokens: int = 192,
        with_rules: bool = True,
        vocab_size: int = 1024,
        temperature: float = 1.0,
        train_unchanged_fraction: float | None = None,
        seed: int = 0,
    ) -> None:
        if reward_type not in ("binary", "task_specific"):
            raise ValueError(f"reward_type must be 'binary' or 'task_specific', got {reward_type!r}")
        if train_unchanged_fraction is not None and not 0.0 <= train_unchanged_fraction < 1.0:
            raise ValueError(f"train_unchanged_fraction must be in [0, 1), got {train_unchanged_fraction}")
        self.reward_type = reward_type
        self.compat = compat
        self.with_rules = with_rules
        self.train_unchanged_fraction = train_unchanged_fraction
        self.seed = seed
        super().__init__(tokenizer, data_dir, max_prompt_tokens, max_new_tokens, vocab_size, temperature)

    def load(self, path: Path) -> list[TextGameTransition]:
        return load_transitions(path)

    def prompt_text(self, transition: TextGameTransition) -> str:
        return encode_prompt_text(transition, self.with_rules)

    def answer_text(self, transition: TextGameTransition) -> str:
        return encode_answer_text(transition)

    def metadata(self, transition: TextGameTransition) -> dict[str, Any]:
        return {
            "current_state": transition.current_state,
            "gold_state": transition.gold_state,
            "changed": is_changed_transition(transition.current_state, transition.gold_state),
            "game": transition.game,
        }

    def select(self, split: str, transitions: list[TextGameTransition]) -> list[TextGameTransition]:
        """With train_unchanged_fraction set, a training split (train, train_sft, train_rl, ...) keeps all
        changed transitions plus a seeded subset of unchanged ones making up that fraction of the result.
        RLVR-World's RL data is built the same way ("gold" changed transitions plus sampled "no-gold"
        ones): on all transitions the group advantages mostly reward answering "no change"."""
        if not split.startswith("train") or self.train_unchanged_fraction is None:
            return transitions
        flags = [is_changed_transition(t.current_state, t.gold_state) for t in transitions]
        unchanged = [i for i, changed in enumerate(flags) if not changed]
        fraction = self.train_unchanged_fraction
        n_unchanged = min(len(unchanged), round(sum(flags) * fraction / (1.0 - fraction)))
        random.Random(self.seed).shuffle(unchanged)
        keep = set(unchanged[:n_unchanged])
        return [t for i, (t, changed) in enumerate(zip(transitions, flags)) if changed or i in keep]

    def decode_state(self, transition: TextGameTransition, text: str) -> tuple[dict | None, str | None]:
        """The predicted next state: the answer's diff applied to the transition's current state."""
        return decode_answer(text, transition.current_state)

    def score(self, text: str, meta: dict[str, Any]) -> float:
        return text_game_reward(text, meta["current_state"], meta["gold_state"], self.reward_type, self.compat)
