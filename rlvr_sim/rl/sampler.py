"""Batched group sampling for any Hugging Face causal LM, with a KV cache.

Why not `model.generate`: GRPO samples G answers per prompt, and world-model prompts are long while
answers are short, so each prompt is prefilled once and its cache is shared by its whole group. The
sampler also returns the per-token log-probs (reused as the old-policy log-probs) and supports
*interleaving*: after every k generated tokens it appends given tokens (e.g. ground-truth action
tokens between generated video frames) and continues from the cache.

Randomness: every prompt has its own `torch.Generator` seeded from (seed, prompt index) or from an
explicit per-prompt seed, so the samples of a prompt do not depend on which other prompts share the
batch (this is what makes a 2-process run sample exactly what a 1-process run samples).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class SampleOutput:
    """Generated tokens of N = len(prompts) * group_size sequences; groups are contiguous rows."""

    tokens: torch.Tensor  # (N, L) generated + forced ids, right-padded with pad_token_id
    logprobs: torch.Tensor  # (N, L) log-prob of each sampled token under the sampling distribution; 0 elsewhere
    loss_mask: torch.Tensor  # (N, L) bool: True for sampled tokens (not forced, not padding)
    lengths: torch.Tensor  # (N,) valid length of each row (through the stop token, forced tokens included)
    pad_token_id: int

    def completions(self) -> list[list[int]]:
        """Each row's valid tokens (generated and forced, through the stop token)."""
        return [row[:n].tolist() for row, n in zip(self.tokens, self.lengths.tolist())]

    @property
    def attention_mask(self) -> torch.Tensor:
        positions = torch.arange(self.tokens.shape[1])
        return positions[None, :] < self.lengths[:, None]


def prompt_seeds(seed: int, count: int, offset: int = 0) -> list[int]:
    """Per-prompt seeds derived from a run seed and each prompt's global index."""
    return [(seed * 1_000_003 + offset + i) % (2**63 - 1) for i in range(count)]


_CACHE_KEYWORD: dict[type, str] = {}


def _cache_keyword(model: torch.nn.Module) -> str:
    """transformers >= 5.2x names the KV cache argument `cache`; older releases `past_key_values`."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    kind = type(base)
    if kind not in _CACHE_KEYWORD:
        params = inspect.signature(base.forward).parameters
        _CACHE_KEYWORD[kind] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_KEYWORD[kind]


def model_forward(model: torch.nn.Module, cache: Any = None, **kwargs: Any) -> tuple[torch.Tensor, Any]:
    """One forward pass returning (logits, cache) on any transformers release."""
    keyword = _cache_keyword(model)
    if cache is not None:
        kwargs[keyword] = cache
    out = model(**kwargs)
    return out.logits, getattr(out, keyword, None)


def left_pad(prompts: Sequence[Sequence[int]], pad_token_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-pad token lists into (ids, attention_mask)."""
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("every prompt needs at least one token")
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p) :] = torch.as_tensor(list(p), dtype=torch.long)
        mask[i, width - len(p) :] = 1
    return ids, mask


def positions_from_mask(mask: torch.Tensor) -> torch.Tensor:
    """Position ids that skip left padding."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


def filter_logits(logits: torch.Tensor, top_k: int | None, top_p: float | None) -> torch.Tensor:
    """Top-k then nucleus (top-p) filtering; removed entries become -inf."""
    if top_k is not None and 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
        cumulative = sorted_logits.softmax(-1).cumsum(-1)
        remove_sorted = cumulative - sorted_logits.softmax(-1) >= top_p  # keep the token that crosses top_p
        remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)
        logits = logits.masked_fill(remove, float("-inf"))
    return logits


def restrict_vocab(logits: torch.Tensor, allowed_token_range: tuple[int, int] | None) -> torch.Tensor:
    """Mask every token outside [lo, hi) (e.g. only visual codes may be generated)."""
    if allowed_token_range is None:
        return logits
    lo, hi = allowed_token_range
    if not 0 <= lo < hi <= logits.shape[-1]:
        raise ValueError(f"allowed_token_range {allowed_token_range} outside vocabulary of {logits.shape[-1]}")
    masked = torch.full_like(logits, float("-inf"))
    masked[..., lo:hi] = logits[..., lo:hi]
    return masked


class DecodeSession:
    """Incremental KV-cached decoding of a batch of rows, each prompt with its own seeded generator.

    The one decoding loop of the package: `sample` (GRPO, evaluations) drives it to generate whole
    answers with forced chunks interleaved, and the learned-simulator envs drive it step by step (feed
    the agent's action, draw the next frame's tokens). Rows are prompts x `group_size` (each prompt's
    prefill is computed once and shared by its group); `draw` picks one token per row from the current
    logits, `feed` runs new tokens through the model from the cache.
    """

    @torch.no_grad()
    def __init__(self, model: torch.nn.Module, prompts: Sequence[Sequence[int]], *,
                 seeds: Sequence[int] | None = None, generators: Sequence[torch.Generator] | None = None,
                 group_size: int = 1, pad_token_id: int = 0) -> None:
        if (seeds is None) == (generators is None):
            raise ValueError("pass either seeds or generators (one per prompt)")
        if generators is None:
            generators = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
        if len(generators) != len(prompts):
            raise ValueError(f"got {len(generators)} seeds/generators for {len(prompts)} prompts")
        self.model, self.group_size, self.pad_token_id = model, group_size, pad_token_id
        self.device = next(model.parameters()).device
        self.generators = list(generators)  # continuing streams: a rebuilt session can keep drawing from them
        ids, mask = left_pad(prompts, pad_token_id)
        ids, mask = ids.to(self.device), mask.to(self.device)
        logits, self.cache = model_forward(
            model, input_ids=ids, attention_mask=mask, position_ids=positions_from_mask(mask), use_cache=True
        )
        logits = logits[:, -1, :].float()
        if group_size > 1:  # share each prompt's prefill across its group
            self.cache.batch_repeat_interleave(group_size)
            logits = logits.repeat_interleave(group_size, 0)
            mask = mask.repeat_interleave(group_size, 0)
        self.logits, self.mask = logits, mask
        self.next_pos = mask.sum(-1)  # position id of the next token per row
        self.rows = len(prompts) * group_size

    def draw(self, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
             allowed_token_range: tuple[int, int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(token, log-prob under the sampling distribution) per row from the current logits."""
        logits = restrict_vocab(self.logits, allowed_token_range)
        if temperature == 0:
            return logits.argmax(-1), torch.log_softmax(logits, dim=-1).max(-1).values
        logprob_all = torch.log_softmax(logits / temperature, dim=-1)
        probs = filter_logits(logits / temperature, top_k, top_p).softmax(-1)
        # Exponential-race sampling with one generator per prompt: argmax(p / E), E ~ Exp(1).
        noise = torch.cat(
            [torch.empty((self.group_size, probs.shape[-1])).exponential_(generator=g) for g in self.generators]
        ).to(self.device)
        choice = (probs / noise).argmax(-1)
        return choice, logprob_all.gather(-1, choice[:, None])[:, 0]

    @torch.no_grad()
    def feed(self, new_ids: torch.Tensor, new_valid: torch.Tensor | None = None) -> None:
        """Run new tokens (rows, m) through the model from the cache (`new_valid` False = padding)."""
        new_ids = new_ids.to(self.device)
        valid = torch.ones_like(new_ids, dtype=torch.bool) if new_valid is None else new_valid.to(self.device)
        width = new_ids.shape[1]
        self.mask = torch.cat([self.mask, valid.long()], dim=1)
        pos = self.next_pos[:, None] + torch.arange(width, device=self.device)[None, :]
        step_logits, _ = model_forward(self.model, cache=self.cache, input_ids=new_ids, attention_mask=self.mask,
                                       position_ids=pos, use_cache=True)
        self.next_pos = self.next_pos + width
        self.logits = step_logits[:, -1, :].float()


@torch.no_grad()
def sample(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    *,
    group_size: int = 1,
    max_new_tokens: int = 64,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    stop_token_ids: Sequence[int] = (),
    pad_token_id: int = 0,
    seed: int = 0,
    seeds: Sequence[int] | None = None,
    forced: Sequence[Sequence[Sequence[int]]] | None = None,
    interleave_every: int | None = None,
    allowed_token_range: tuple[int, int] | None = None,
) -> SampleOutput:
    """Sample `group_size` continuations of every prompt (see the module docstring).

    temperature 0 means greedy decoding. `forced[i]` lists the token chunks appended to prompt i's
    continuations after every `interleave_every` generated tokens; chunks at the same position must
    have the same length across prompts. `max_new_tokens` counts generated tokens only.
    """
    if group_size < 1 or max_new_tokens < 1:
        raise ValueError("group_size and max_new_tokens must be >= 1")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if forced is not None:
        if interleave_every is None or interleave_every < 1:
            raise ValueError("forced tokens need interleave_every >= 1")
        if len(forced) != len(prompts):
            raise ValueError(f"forced has {len(forced)} entries for {len(prompts)} prompts")
        n_chunks = {len(f) for f in forced}
        if len(n_chunks) != 1:
            raise ValueError("every prompt needs the same number of forced chunks")
    seeds = list(seeds) if seeds is not None else prompt_seeds(seed, len(prompts))
    session = DecodeSession(model, prompts, seeds=seeds, group_size=group_size, pad_token_id=pad_token_id)
    device, n_rows = session.device, session.rows
    stop = torch.tensor(sorted(set(stop_token_ids)), dtype=torch.long, device=device)
    finished = torch.zeros(n_rows, dtype=torch.bool, device=device)
    tokens: list[torch.Tensor] = []
    logps: list[torch.Tensor] = []
    sampled: list[torch.Tensor] = []
    valid: list[torch.Tensor] = []
    generated = 0
    chunk_index = 0

    while generated < max_new_tokens and not bool(finished.all()):
        choice, logprob = session.draw(temperature, top_k, top_p, allowed_token_range)
        alive = ~finished
        token = torch.where(alive, choice, torch.full_like(choice, pad_token_id))
        tokens.append(token)
        logps.append(torch.where(alive, logprob, torch.zeros_like(logprob)))
        sampled.append(alive)
        valid.append(alive)
        generated += 1
        if stop.numel():
            finished = finished | (alive & torch.isin(token, stop))
        if generated >= max_new_tokens or bool(finished.all()):
            break
        session.feed(token[:, None], alive[:, None])
        if forced is not None and generated % interleave_every == 0 and chunk_index < len(forced[0]):
            chunk_rows = [list(f[chunk_index]) for f in forced]
            if len({len(c) for c in chunk_rows}) != 1 or not chunk_rows[0]:
                raise ValueError(f"forced chunk {chunk_index} must be non-empty and equally long for all prompts")
            chunk = torch.tensor(chunk_rows, dtype=torch.long, device=device).repeat_interleave(group_size, 0)
            alive = ~finished
            chunk = torch.where(alive[:, None], chunk, torch.full_like(chunk, pad_token_id))
            chunk_valid = alive[:, None].expand_as(chunk)
            for j in range(chunk.shape[1]):
                tokens.append(chunk[:, j])
                logps.append(torch.zeros(n_rows, device=device))
                sampled.append(torch.zeros(n_rows, dtype=torch.bool, device=device))
                valid.append(chunk_valid[:, j])
            session.feed(chunk, chunk_valid)
            chunk_index += 1

    token_t = torch.stack(tokens, 1).cpu()
    valid_t = torch.stack(valid, 1).cpu()
    return SampleOutput(
        tokens=token_t,
        logprobs=torch.stack(logps, 1).cpu(),
        loss_mask=torch.stack(sampled, 1).cpu(),
        lengths=valid_t.long().sum(1),
        pad_token_id=pad_token_id,
    )
