"""Web state-change prediction as a Task: (objective, URL, action, tree) -> three-section item changes.

Prompt (kept short for a tiny CPU model):

    OBJECTIVE: <objective>
    URL: <path and query; the scheme/host/port is dropped, it changes from run to run>
    ACTION: <WebArena action>
    TREE:
    <accessibility tree, tab header line dropped>
    CHANGES:

The tree is trimmed from the end, whole lines at a time, until the prompt fits `max_prompt_tokens`
(a last line `...` marks a trimmed tree). Answer = the gold three-section text + EOS. Examples whose
answer exceeds `max_new_tokens` are left out (warned with a count). Reward = item-change F1 of the
decoded completion (`rlvr_sim.metrics.web.item_change_f1`, `compat` selectable); unparseable
completions score 0.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from transformers import PreTrainedTokenizerFast

from rlvr_sim.data.wma import WebTransition, load_web_transitions
from rlvr_sim.envs.web.tree import split_header
from rlvr_sim.metrics.web import item_change_f1
from rlvr_sim.tasks.base import Example, GenerationSpec
from rlvr_sim.tasks.bpe import embedded_or_trained, require_special_tokens

log = logging.getLogger(__name__)

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
EMBEDDED_TOKENIZER = ASSETS_DIR / "web_tokenizer"
DATA_EXTENSIONS = (".jsonl", ".json", ".parquet")


def url_path(url: str) -> str:
    """Path and query of a URL ('' stays ''): the origin carries a run-specific port."""
    if not url:
        return ""
    parts = urlsplit(url)
    if not parts.scheme:
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def tree_body(tree: str) -> list[str]:
    """The tree's node lines (header such as `Tab 0 (current): ...` dropped), indentation kept."""
    header, lines = split_header(tree)
    if not lines:
        return [line for line in tree.split("\n") if line.strip()]
    return ["\t" * line.depth + line.text for line in lines]


def format_prompt(objective: str, url: str, action: str, tree_lines: list[str], trimmed: bool = False) -> str:
    tree = "\n".join(tree_lines + (["..."] if trimmed else []))
    return f"OBJECTIVE: {objective}\nURL: {url_path(url)}\nACTION: {action.strip()}\nTREE:\n{tree}\nCHANGES:\n"



def resolve_split_file(data_dir: str | Path, split: str) -> Path:
    for ext in DATA_EXTENSIONS:
        candidate = Path(data_dir) / f"{split}{ext}"
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"no data for split {split!r} in {data_dir} (looked for {split}.jsonl/.json/.parquet); "
        f"collect it with: python training/collect.py --task web --out {data_dir}"
    )


class WebTask:
    """Item-change prediction on web transitions (our collector's jsonl, WMA json, RLVR-World parquet)."""

    name = "web"

    def __init__(self, tokenizer: Any = None, data_dir: str | list[str] = "data/web", compat: str | None = None,
                 max_prompt_tokens: int = 640, max_new_tokens: int = 256, vocab_size: int = 2048,
                 temperature: float = 1.0) -> None:
        # several directories (a list) are read as one data set: each split is their concatenation
        dirs = [data_dir] if isinstance(data_dir, (str, Path)) else list(data_dir)
        if not dirs:
            raise ValueError("data_dir is an empty list; give at least one directory")
        self.data_dirs = [Path(d) for d in dirs]
        self.compat = compat
        self.max_prompt_tokens = max_prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self._transitions: dict[str, list[WebTransition]] = {}
        self.tokenizer = tokenizer if tokenizer is not None else self._default_tokenizer(vocab_size)
        require_special_tokens(self.tokenizer, "web")
        self.pad_token_id = self.tokenizer.pad_token_id
        self.eos_token_id = self.tokenizer.eos_token_id
        self.bos_token_id = self.tokenizer.bos_token_id
        self.vocab_size = len(self.tokenizer)

    def _default_tokenizer(self, vocab_size: int) -> PreTrainedTokenizerFast:
        """The embedded tokenizer if shipped, else one trained on this data set's train split."""
        return embedded_or_trained(EMBEDDED_TOKENIZER, lambda: self.corpus("train"), vocab_size, "web")

    # ------------------------------------------------------------------------------------ data
    def transitions(self, split: str) -> list[WebTransition]:
        if split not in self._transitions:
            self._transitions[split] = [t for d in self.data_dirs
                                        for t in load_web_transitions(resolve_split_file(d, split))]
        return self._transitions[split]

    def corpus(self, split: str = "train") -> list[str]:
        """Untrimmed prompt + answer texts of a split (the tokenizer's training corpus)."""
        return [format_prompt(t.objective, t.url, t.action, tree_body(t.tree)) + t.gold for t in self.transitions(split)]

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def encode_prompt(self, objective: str, url: str, action: str, tree: str) -> list[int]:
        """Prompt ids, the tree trimmed from the end (whole lines) to fit max_prompt_tokens."""
        bos = [self.bos_token_id] if self.bos_token_id is not None else []
        lines = tree_body(tree)
        ids = bos + self._encode(format_prompt(objective, url, action, lines))
        if len(ids) <= self.max_prompt_tokens:
            return ids
        low, high = 0, len(lines)  # binary search on the number of tree lines kept
        best = bos + self._encode(format_prompt(objective, url, action, [], trimmed=True))
        while low <= high:
            middle = (low + high) // 2
            candidate = bos + self._encode(format_prompt(objective, url, action, lines[:middle], trimmed=True))
            if len(candidate) <= self.max_prompt_tokens:
                best, low = candidate, middle + 1
            else:
                high = middle - 1
        return best[: self.max_prompt_tokens]

    def encode_answer(self, gold: str) -> list[int]:
        return self._encode(gold) + [self.eos_token_id]

    def example(self, transition: WebTransition) -> Example:
        return Example(
            prompt_ids=self.encode_prompt(transition.objective, transition.url, transition.action, transition.tree),
            answer_ids=self.encode_answer(transition.gold),
            metadata={"gold": transition.gold, "tree": transition.tree, "action": transition.action,
                      "objective": transition.objective},
        )

    def examples(self, split: str) -> list[Example]:
        """Encoded examples; those whose answer exceeds max_new_tokens are left out (counted in a warning)."""
        kept, dropped = [], 0
        for transition in self.transitions(split):
            example = self.example(transition)
            if len(example.answer_ids) > self.max_new_tokens:
                dropped += 1
                continue
            kept.append(example)
        if dropped:
            log.warning("web %s: left out %d of %d examples with answers over %d tokens",
                        split, dropped, dropped + len(kept), self.max_new_tokens)
        return kept

    def generation_spec(self) -> GenerationSpec:
        return GenerationSpec(max_new_tokens=self.max_new_tokens, stop_token_ids=[self.eos_token_id],
                              temperature=self.temperature)

    # ---------------------------------------------------------------------------------- reward
    def decode(self, completion: list[int]) -> str:
        return self.tokenizer.decode(completion, skip_special_tokens=True)

    def reward(self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict]) -> list[float]:
        """Item-change F1 of each decoded completion against its gold (0.0 when unparseable)."""
        if len(completions) != len(metadata):
            raise ValueError(f"{len(completions)} completions but {len(metadata)} metadata entries")
        rewards = []
        for completion, meta in zip(completions, metadata):
            if "gold" not in meta:
                raise KeyError("web reward needs metadata['gold'] (the three-section answer)")
            rewards.append(float(item_change_f1(self.decode(completion), meta["gold"], self.compat).f1))
        return rewards


