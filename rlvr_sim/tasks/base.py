"""The seam between the modality-blind RL loop and a modality.

A task contributes a codec (examples as prompt/answer token ids, completions decoded by the task) and a
verifiable reward. The training loop in `rlvr_sim.rl` only ever sees `Example`s, `GenerationSpec` and
`Task.reward`; it never imports a modality.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Example:
    """One (s, a) -> s' training example in token space."""

    prompt_ids: list[int]
    answer_ids: list[int] | None = None  # gold o(s') tokens: SFT targets; None for RL-only tasks
    # Interleaving (multi-step video): after every `GenerationSpec.interleave_every` generated tokens the
    # sampler appends forced[i] (e.g. ground-truth action tokens); forced tokens never enter the RL loss.
    forced: list[list[int]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # passed back to Task.reward untouched


@dataclass
class GenerationSpec:
    """How a task's answers are sampled."""

    max_new_tokens: int = 64
    stop_token_ids: list[int] = field(default_factory=list)
    interleave_every: int | None = None  # k generated tokens between forced chunks (None: no interleaving)
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    # Restrict sampling to token ids in [vocab_lo, vocab_hi) (e.g. visual codes only); None: whole vocab.
    allowed_token_range: tuple[int, int] | None = None


@runtime_checkable
class Task(Protocol):
    """What a modality plugs into SFT and GRPO."""

    name: str
    tokenizer: Any  # a Hugging Face tokenizer saved with checkpoints, or None for non-text vocabularies
    pad_token_id: int
    vocab_size: int  # size of the token space a fresh model for this task needs

    def examples(self, split: str) -> list[Example]:
        """Examples of a split ("train", "test", ...), deterministic for a fixed task config."""

    def generation_spec(self) -> GenerationSpec:
        """Sampling settings for this task's answers."""

    def reward(
        self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict[str, Any]]
    ) -> list[float]:
        """Verifiable reward per completion (token ids, generated part only, forced tokens included).

        Must return one finite float per completion; an unparseable completion gets the task's
        documented worst reward rather than an exception.
        """
