"""What the text modalities (text game, web) share as Tasks: a BPE tokenizer with pad/bos/eos, transitions
read per split from one or more data directories and cached, examples that leave out (and count) what
does not fit the token budgets, sampling settings, decoding and a per-completion reward.

A modality subclass says how a transition reads as prompt and answer text, how an answer decodes against
the transition's state into the next state, what metadata its reward needs, and how one decoded completion
is scored: with the base, a `WorldModelCodec` (`rlvr_sim.tasks.base`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from rlvr_sim.resources import asset_path
from rlvr_sim.tasks.base import Example, GenerationSpec

log = logging.getLogger(__name__)

DATA_EXTENSIONS = (".jsonl", ".parquet", ".json")


def resolve_split_file(data_dir: str | Path, split: str, task: str) -> Path:
    """data_dir/<split>.jsonl (else .parquet, else .json); a data file given as the split is used as is."""
    if Path(split).suffix in DATA_EXTENSIONS and Path(split).exists():
        return Path(split)
    for ext in DATA_EXTENSIONS:
        candidate = Path(data_dir) / f"{split}{ext}"
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"no data for split {split!r} in {data_dir} (looked for {split}.jsonl/.parquet/.json); "
        f"collect it with: python training/collect.py --task {task} --out {data_dir}"
    )


class TextTransitionTask:
    """Base of the (s, a) -> s' text tasks; subclasses set `name`, `tokenizer_asset` and the hooks below."""

    name: str
    tokenizer_asset: str  # the embedded tokenizer's asset name, used when no tokenizer is given
    worst_reward = 0.0  # the lowest of both rewards (text game: 0 to 1.3, web item-change F1: 0 to 1)

    def __init__(self, tokenizer: Any, data_dir: str | Path | list[str | Path], max_prompt_tokens: int,
                 max_new_tokens: int, vocab_size: int, temperature: float) -> None:
        # several directories (a list) are read as one data set: each split is their concatenation
        dirs = [data_dir] if isinstance(data_dir, (str, Path)) else list(data_dir)
        if not dirs:
            raise ValueError("data_dir is an empty list; give at least one directory")
        self.data_dirs = [Path(d) for d in dirs]
        self.max_prompt_tokens = max_prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self._transitions: dict[str, list[Any]] = {}
        # imported here: the web tree format in `rlvr_sim.tasks.web` is used without tokenizers (policies,
        # collectors), and transformers takes seconds to import
        from rlvr_sim.tasks.bpe import embedded_or_trained, require_special_tokens

        if tokenizer is None:  # the embedded tokenizer if shipped, else one trained on the train split
            tokenizer = embedded_or_trained(asset_path(self.tokenizer_asset), lambda: self.corpus("train"),
                                            vocab_size, self.name)
        require_special_tokens(tokenizer, self.name)
        self.tokenizer = tokenizer
        self.pad_token_id = tokenizer.pad_token_id
        self.eos_token_id = tokenizer.eos_token_id
        self.bos_token_id = tokenizer.bos_token_id
        self.vocab_size = len(tokenizer)

    # ------------------------------------------------------------------------------- modality hooks
    def load(self, path: Path) -> list[Any]:
        """The transitions stored in one data file."""
        raise NotImplementedError

    def prompt_text(self, transition: Any) -> str:
        """q(s, a) as text, untrimmed."""
        raise NotImplementedError

    def answer_text(self, transition: Any) -> str:
        """o(s') as text (the gold answer)."""
        raise NotImplementedError

    def metadata(self, transition: Any) -> dict[str, Any]:
        """What `score` needs besides the completion."""
        raise NotImplementedError

    def decode_state(self, transition: Any, text: str) -> tuple[Any | None, str | None]:
        """(the next state an answer predicts from the transition's state, None), or (None, why not)."""
        raise NotImplementedError

    def score(self, text: str, meta: dict[str, Any]) -> float:
        """The reward of one decoded completion."""
        raise NotImplementedError

    def select(self, split: str, transitions: list[Any]) -> list[Any]:
        """The transitions of a split that become examples (all; a subclass may rebalance)."""
        return transitions

    # --------------------------------------------------------------------------------------- data
    def transitions(self, split: str) -> list[Any]:
        if split not in self._transitions:
            files = list(dict.fromkeys(resolve_split_file(d, split, self.name) for d in self.data_dirs))
            self._transitions[split] = [t for path in files for t in self.load(path)]
        return self._transitions[split]

    def corpus(self, split: str = "train") -> list[str]:
        """Untrimmed prompt + answer texts of a split (the tokenizer's training corpus)."""
        return [self.prompt_text(t) + self.answer_text(t) for t in self.transitions(split)]

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def bos(self) -> list[int]:
        return [self.bos_token_id] if self.bos_token_id is not None else []

    def prompt_ids(self, transition: Any) -> list[int]:
        return self.bos() + self.encode(self.prompt_text(transition))

    def answer_ids(self, transition: Any) -> list[int]:
        return self.encode(self.answer_text(transition)) + [self.eos_token_id]

    def example(self, transition: Any) -> Example:
        return Example(prompt_ids=self.prompt_ids(transition), answer_ids=self.answer_ids(transition),
                       metadata=self.metadata(transition))

    def examples(self, split: str) -> list[Example]:
        """Encoded examples; those whose prompt exceeds max_prompt_tokens or whose answer exceeds
        max_new_tokens are left out, with a warning that counts them."""
        kept, dropped = [], 0
        for transition in self.select(split, self.transitions(split)):
            example = self.example(transition)
            if len(example.prompt_ids) > self.max_prompt_tokens or len(example.answer_ids) > self.max_new_tokens:
                dropped += 1
                continue
            kept.append(example)
        if dropped:
            log.warning("%s %s: left out %d of %d examples longer than %d prompt / %d answer tokens", self.name,
                        split, dropped, dropped + len(kept), self.max_prompt_tokens, self.max_new_tokens)
        return kept

    def generation_spec(self) -> GenerationSpec:
        return GenerationSpec(max_new_tokens=self.max_new_tokens, stop_token_ids=[self.eos_token_id],
                              temperature=self.temperature)

    # ------------------------------------------------------------------------------------- reward
    def decode(self, completion: list[int]) -> str:
        return self.tokenizer.decode(completion, skip_special_tokens=True)

    def reward(self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict]) -> list[float]:
        """`score` of each decoded completion (`worst_reward` when it cannot be parsed)."""
        if len(completions) != len(metadata):
            raise ValueError(f"{len(completions)} completions but {len(metadata)} metadata entries")
        return [float(self.score(self.decode(c), meta)) for c, meta in zip(completions, metadata)]

    def checkpoint_meta(self) -> dict[str, Any]:
        return {}
