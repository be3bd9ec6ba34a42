"""The seam between the modality-blind RL loop and a modality.

A task contributes a codec (examples as prompt/answer token ids, completions decoded by the task) and a
verifiable reward. The training loop in `rlvr_sim.rl` only ever sees `Example`s, `GenerationSpec` and the
members of `Task`; it never imports a modality, and it uses nothing a task does not declare here.

Writing your own task (`--task mypackage.module:MyTask`): a class with every member of `Task` below.
Constructor contract: `make_task` calls `MyTask(**task_args)` with the run's `task_args` as keyword
arguments, plus `tokenizer=` (the loaded checkpoint's Hugging Face tokenizer, or None for a fresh model)
only when `__init__` has a `tokenizer` parameter (or `**kwargs`). A minimal task:

    class MyTask:
        name = "mytask"
        tokenizer = None          # or a Hugging Face tokenizer, saved with checkpoints
        pad_token_id = 0
        vocab_size = 16
        worst_reward = 0.0        # the lowest value reward() can give

        def __init__(self, size: int = 64) -> None: ...
        def examples(self, split): return [Example(prompt_ids=[1, 2], answer_ids=[3])]
        def generation_spec(self): return GenerationSpec(max_new_tokens=4)
        def reward(self, prompts, completions, metadata): return [float(3 in c) for c in completions]
        def checkpoint_meta(self): return {}
"""

from __future__ import annotations

from collections.abc import Sequence
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
class WorldModelCodec(Protocol):
    """A modality's codec as a world model: what serving a trained model (the envs of `envs/lm_env.py`,
    the evaluations, the viewer) needs, and what a task adds its data set and reward to.

    The text tasks (`rlvr_sim.tasks.text_transition.TextTransitionTask`: text game, web) are such codecs.
    Video is served differently because its world keeps state between steps: `rlvr_sim.tasks.video.VideoCodec`
    gives the prompt (`window_tokens`), the forced chunk after each frame (`chunks`, computed from the frame
    the model itself generated) and the decoding of generated tokens into frame codes (`to_codes`); the env,
    the evaluations and GRPO's `sample()` (through `StateForcing`) all call those same methods.
    """

    def prompt_ids(self, transition: Any) -> list[int]:
        """q(s, a): the prompt token ids of a (state, action) transition (its next state is not read)."""

    def decode(self, completion: list[int]) -> str:
        """The generated token ids as the answer text."""

    def decode_state(self, transition: Any, text: str) -> tuple[Any | None, str | None]:
        """(next state the answer predicts from the transition's state, None), or (None, why not)."""

    def score(self, text: str, meta: dict[str, Any]) -> float:
        """The verifiable reward of one answer against the truth in `meta` (the example's metadata)."""


@runtime_checkable
class Task(Protocol):
    """What a modality plugs into SFT and GRPO."""

    name: str
    tokenizer: Any  # a Hugging Face tokenizer saved with checkpoints, or None for non-text vocabularies
    pad_token_id: int
    vocab_size: int  # size of the token space a fresh model for this task needs
    # The lowest value `reward` can give: what a batch gets when the reward function raises, so that a
    # failure is never rewarded (0.0 is the *best* value of a negative-error reward).
    worst_reward: float

    def examples(self, split: str) -> Sequence[Example]:
        """Examples of a split ("train", "test", ...), deterministic for a fixed task config: a list, or any
        sequence (`len`, indexing, slices) that makes them on demand (the video task's `LazyExamples`)."""

    def generation_spec(self) -> GenerationSpec:
        """Sampling settings for this task's answers."""

    def reward(
        self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict[str, Any]]
    ) -> list[float]:
        """Verifiable reward per completion (token ids, generated part only, forced tokens included).

        Must return one finite float per completion; an unparseable completion gets the task's
        documented worst reward rather than an exception.
        """

    def checkpoint_meta(self) -> dict[str, Any]:
        """Extra entries for the final checkpoint's metadata (what a reader needs to rebuild the codec)."""
