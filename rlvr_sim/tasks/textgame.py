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
import logging
import random
from pathlib import Path
from typing import Any

from transformers import PreTrainedTokenizerFast

import rlvr_sim.assets
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
from rlvr_sim.tasks.base import Example, GenerationSpec
from rlvr_sim.tasks.bpe import embedded_or_trained, require_special_tokens

log = logging.getLogger(__name__)

ASSETS_DIR = Path(rlvr_sim.assets.__file__).resolve().parent  # repo assets/ (installed as rlvr_sim.assets)
EMBEDDED_TOKENIZER = ASSETS_DIR / "textgame_tokenizer"
DATA_EXTENSIONS = (".jsonl", ".parquet", ".json")


def compact_json(value: Any) -> str:
    """JSON without spaces: the same text every time, and fewer tokens."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def game_rules(game: str) -> str | None:
    """The natural-language rules of one of our games (None for games we do not ship, e.g. ByteSized32's)."""
    from rlvr_sim.envs.textgame.games import GAMES

    return GAMES[game].rules() if game in GAMES else None


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



def resolve_split_file(data_dir: str | Path, split: str) -> Path:
    """data_dir/<split>.jsonl (or .parquet / .json); a path given as the split is used as is."""
    if Path(split).suffix in DATA_EXTENSIONS and Path(split).exists():
        return Path(split)
    for ext in DATA_EXTENSIONS:
        candidate = Path(data_dir) / f"{split}{ext}"
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"no data for split {split!r} in {data_dir} (looked for {split}.jsonl/.parquet/.json); "
        "collect it with: python training/collect.py --task textgame --out " + str(data_dir)
    )


class TextGameTask:
    """ByteSized32-style state prediction as a Task: examples from collected jsonl / RLVR-World parquet,
    reward = text_game_reward(reward_type, compat) of the decoded completion."""

    name = "textgame"

    def __init__(
        self,
        tokenizer: Any = None,
        data_dir: str = "data/textgame",
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
        self.data_dir = Path(data_dir)
        self.reward_type = reward_type
        self.compat = compat
        self.max_prompt_tokens = max_prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.with_rules = with_rules
        self.temperature = temperature
        if train_unchanged_fraction is not None and not 0.0 <= train_unchanged_fraction < 1.0:
            raise ValueError(f"train_unchanged_fraction must be in [0, 1), got {train_unchanged_fraction}")
        self.train_unchanged_fraction = train_unchanged_fraction
        self.seed = seed
        self._transitions: dict[str, list[TextGameTransition]] = {}
        if tokenizer is None:
            tokenizer = self._default_tokenizer(vocab_size)
        self.tokenizer = tokenizer
        require_special_tokens(tokenizer, "text-game")
        self.pad_token_id = tokenizer.pad_token_id
        self.eos_token_id = tokenizer.eos_token_id
        self.bos_token_id = tokenizer.bos_token_id
        self.vocab_size = len(tokenizer)

    def _default_tokenizer(self, vocab_size: int) -> PreTrainedTokenizerFast:
        """The embedded tokenizer if shipped, else one trained on this data set's train split."""
        return embedded_or_trained(EMBEDDED_TOKENIZER, lambda: self.corpus("train"), vocab_size, "text-game")

    # --------------------------------------------------------------------------------------- data
    def transitions(self, split: str) -> list[TextGameTransition]:
        if split not in self._transitions:
            self._transitions[split] = load_transitions(resolve_split_file(self.data_dir, split))
        return self._transitions[split]

    def corpus(self, split: str = "train") -> list[str]:
        """Prompt + answer texts of a split (the tokenizer's training corpus)."""
        return [self.prompt_text(t) + self.answer_text(t) for t in self.transitions(split)]

    def prompt_text(self, transition: TextGameTransition) -> str:
        return encode_prompt_text(transition, self.with_rules)

    def answer_text(self, transition: TextGameTransition) -> str:
        return encode_answer_text(transition)

    def encode_prompt(self, transition: TextGameTransition) -> list[int]:
        ids = self.tokenizer.encode(self.prompt_text(transition), add_special_tokens=False)
        return ([self.bos_token_id] if self.bos_token_id is not None else []) + ids

    def encode_answer(self, transition: TextGameTransition) -> list[int]:
        return self.tokenizer.encode(self.answer_text(transition), add_special_tokens=False) + [self.eos_token_id]

    def example(self, transition: TextGameTransition) -> Example:
        return Example(
            prompt_ids=self.encode_prompt(transition),
            answer_ids=self.encode_answer(transition),
            metadata={
                "current_state": transition.current_state,
                "gold_state": transition.gold_state,
                "changed": is_changed_transition(transition.current_state, transition.gold_state),
                "game": transition.game,
            },
        )

    def _rebalanced(self, transitions: list[TextGameTransition]) -> list[TextGameTransition]:
        """All changed transitions plus a seeded subset of unchanged ones making up train_unchanged_fraction
        of the result. RLVR-World's RL data is built the same way ("gold" changed transitions plus sampled
        "no-gold" ones): on all transitions the group advantages mostly reward answering "no change"."""
        flags = [is_changed_transition(t.current_state, t.gold_state) for t in transitions]
        unchanged = [i for i, changed in enumerate(flags) if not changed]
        fraction = self.train_unchanged_fraction
        n_unchanged = min(len(unchanged), round(sum(flags) * fraction / (1.0 - fraction)))
        random.Random(self.seed).shuffle(unchanged)
        keep = set(unchanged[:n_unchanged])
        return [t for i, (t, changed) in enumerate(zip(transitions, flags)) if changed or i in keep]

    def examples(self, split: str) -> list[Example]:
        """Encoded examples; those whose prompt exceeds max_prompt_tokens or whose answer exceeds
        max_new_tokens are left out, with a warning that counts them. With train_unchanged_fraction set,
        the training splits (train, train_sft, train_rl, ...) are rebalanced towards changed transitions
        (see `_rebalanced`)."""
        kept, dropped = [], 0
        transitions = self.transitions(split)
        if split.startswith("train") and self.train_unchanged_fraction is not None:
            transitions = self._rebalanced(transitions)
        for transition in transitions:
            example = self.example(transition)
            if len(example.prompt_ids) > self.max_prompt_tokens or len(example.answer_ids) > self.max_new_tokens:
                dropped += 1
                continue
            kept.append(example)
        if dropped:
            log.warning("textgame %s: left out %d of %d examples longer than %d prompt / %d answer tokens",
                        split, dropped, dropped + len(kept), self.max_prompt_tokens, self.max_new_tokens)
        return kept

    def generation_spec(self) -> GenerationSpec:
        return GenerationSpec(max_new_tokens=self.max_new_tokens, stop_token_ids=[self.eos_token_id],
                              temperature=self.temperature)

    # ------------------------------------------------------------------------------------- reward
    def decode(self, completion: list[int]) -> str:
        return self.tokenizer.decode(completion, skip_special_tokens=True)

    def reward(self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict]) -> list[float]:
        """text_game_reward of each decoded completion (0 when it cannot be parsed)."""
        return [
            text_game_reward(self.decode(completion), meta["current_state"], meta["gold_state"],
                             self.reward_type, self.compat)
            for completion, meta in zip(completions, metadata)
        ]
