"""Multi-digit addition with an exact-match reward: a verifiable test task that proves the SFT and GRPO
loop before any world model exists. Not a world model; never used outside tests, demos and benchmarks.

Prompt `<bos>07+45=`, answer `52<eos>`. Operands are zero-padded to a fixed width so every prompt has the
same length (no padding, which keeps multi-process runs bit-comparable with single-process ones).
"""

from __future__ import annotations

import random
from typing import Any

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from rlvr_sim.tasks.base import Example, GenerationSpec

SPECIALS = ["<pad>", "<bos>", "<eos>"]
SYMBOLS = list("0123456789+=")


def character_tokenizer() -> PreTrainedTokenizerFast:
    """A one-character-per-token tokenizer over digits, '+' and '='."""
    vocab = {tok: i for i, tok in enumerate(SPECIALS + SYMBOLS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    tok.decoder = decoders.Fuse()  # "1", "2" decode to "12", not "1 2"
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>")


class AdditionTask:
    """a + b with `digits`-digit operands; reward 1 for the exact sum followed by <eos>, else 0."""

    name = "addition"
    worst_reward = 0.0

    def __init__(self, tokenizer: Any = None, digits: int = 2, train_size: int = 2000, test_size: int = 200,
                 seed: int = 0) -> None:
        if digits < 1:
            raise ValueError("digits must be >= 1")
        self.tokenizer = tokenizer if tokenizer is not None else character_tokenizer()
        self.digits = digits
        self.pad_token_id = self.tokenizer.pad_token_id
        self.eos_token_id = self.tokenizer.eos_token_id
        self.vocab_size = len(self.tokenizer)
        rng = random.Random(seed)
        top = 10**digits
        pairs = [(rng.randrange(top), rng.randrange(top)) for _ in range(train_size + test_size)]
        self._splits = {"train": pairs[:train_size], "test": pairs[train_size:]}

    def _example(self, a: int, b: int) -> Example:
        prompt = f"{a:0{self.digits}d}+{b:0{self.digits}d}="
        prompt_ids = [self.tokenizer.bos_token_id] + self.tokenizer.encode(prompt, add_special_tokens=False)
        answer_ids = self.tokenizer.encode(str(a + b), add_special_tokens=False) + [self.eos_token_id]
        return Example(prompt_ids=prompt_ids, answer_ids=answer_ids, metadata={"sum": a + b})

    def examples(self, split: str) -> list[Example]:
        if split not in self._splits:
            raise ValueError(f"unknown split {split!r}; splits: {list(self._splits)}")
        return [self._example(a, b) for a, b in self._splits[split]]

    def generation_spec(self) -> GenerationSpec:
        return GenerationSpec(max_new_tokens=self.digits + 2, stop_token_ids=[self.eos_token_id])

    def checkpoint_meta(self) -> dict[str, Any]:
        return {}

    def reward(self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict]) -> list[float]:
        rewards = []
        for completion, meta in zip(completions, metadata):
            text = self.tokenizer.decode(completion, skip_special_tokens=True)
            exact = bool(completion) and completion[-1] == self.eos_token_id and text == str(meta["sum"])
            rewards.append(1.0 if exact else 0.0)
        return rewards
