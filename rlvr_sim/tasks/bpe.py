"""Byte-level BPE tokenizers for the text modalities (text game, web): trained on our own corpora with the
`tokenizers` library and wrapped as Hugging Face fast tokenizers, so they save with every checkpoint."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

log = logging.getLogger(__name__)
SPECIALS = ["<pad>", "<bos>", "<eos>"]


def train_tokenizer(texts: Iterable[str], vocab_size: int = 1024, individual_digits: bool = False) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on the corpus (no unknown tokens: every byte is in the alphabet).
    individual_digits=True splits every number into single digits (no merges across digits)."""
    bpe = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.pre_tokenizer = (pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
                         if individual_digits else byte_level)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>")


def embedded_or_trained(embedded_dir: Path, corpus: Callable[[], list[str]], vocab_size: int,
                        label: str) -> PreTrainedTokenizerFast:
    """The tokenizer shipped in `embedded_dir` if present, else one trained on `corpus()`."""
    if (embedded_dir / "tokenizer.json").exists():
        return PreTrainedTokenizerFast.from_pretrained(str(embedded_dir))
    log.warning("no embedded %s tokenizer at %s: training one on the train split", label, embedded_dir)
    return train_tokenizer(corpus(), vocab_size)


def require_special_tokens(tokenizer: Any, label: str) -> None:
    """A task tokenizer needs pad and eos tokens (padding, stop token); say so clearly when one is missing."""
    for special in ("pad_token_id", "eos_token_id"):
        if getattr(tokenizer, special, None) is None:
            raise ValueError(f"the {label} tokenizer needs a {special.replace('_id', '')} token")
