"""Batched group sampling for any Hugging Face causal LM, with a KV cache.

Why not `model.generate`: GRPO samples G answers per prompt, and world-model prompts are long while
answers are short, so each prompt is prefilled once and its cache is shared by its whole group. The
sampler also returns the per-token log-probs (reused as the old-policy log-probs) and supports
*interleaving*: after every k generated tokens it appends given tokens (e.g. ground-truth action
tokens between generated video frames) and continues from the cache.

Randomness: every prompt has its own `torch.Generator` seeded from (seed, prompt index) or from an
explicit per-prompt seed, so the samples of a prompt do not depend on which other prompts share the
batch (this is what makes a 2-process run sample exactly what a 1-process run samples). A step draws
one uniform number per row (inverse-CDF sampling), `group_size` numbers per prompt from its generator.

Speed: the KV cache and the attention mask are pre-allocated and written in place (no per-step
concatenation; the capacity doubles when exceeded), the mask is skipped while nothing is padded, and
rows that emitted a stop token leave the batch. What remains per step is the model's own work
(matrix multiplies and attention) plus the sampling arithmetic; `benchmarks/sampler.py` (its `profile_ours` figures)
measures the split.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rlvr_sim.models.lean_decode import LeanDecoder


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


try:  # transformers >= 4.56: per-layer cache objects we can replace with in-place buffers
    from transformers.cache_utils import Cache as _HFCache
    from transformers.cache_utils import DynamicLayer as _DynamicLayer
except ImportError:  # pragma: no cover - older transformers: the cache grows by concatenation
    _HFCache = _DynamicLayer = None


if _DynamicLayer is not None:

    class InPlaceLayer(_DynamicLayer):
        """One attention layer's keys and values in pre-allocated (rows, heads, capacity, dim) buffers.

        New keys/values are copied into the buffers at the current length (no concatenation); `keys` and
        `values` are views of the filled part. The capacity doubles when a write would overflow it, and
        `select_rows` compacts the kept rows to the front of the same buffers (dropping finished rows).
        """

        def __init__(self, key_buffer: torch.Tensor, value_buffer: torch.Tensor, rows: int, length: int) -> None:
            super().__init__()
            self.key_buffer, self.value_buffer = key_buffer, value_buffer
            self.rows, self.length = rows, length
            self.device = key_buffer.device
            self.is_initialized = True
            self._views()

        def _views(self) -> None:
            self.keys = self.key_buffer[: self.rows, :, : self.length]
            self.values = self.value_buffer[: self.rows, :, : self.length]

        @property
        def capacity(self) -> int:
            return self.key_buffer.shape[2]

        def reserve(self, capacity: int) -> None:
            """Make room for `capacity` positions (copies the filled part once into larger buffers)."""
            if capacity <= self.capacity:
                return
            grown = []
            for buffer in (self.key_buffer, self.value_buffer):
                new = buffer.new_empty((buffer.shape[0], buffer.shape[1], capacity, buffer.shape[3]))
                new[: self.rows, :, : self.length].copy_(buffer[: self.rows, :, : self.length])
                grown.append(new)
            self.key_buffer, self.value_buffer = grown
            self._views()

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
                   **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
            end = self.length + key_states.shape[-2]
            if end > self.capacity:
                self.reserve(max(end, 2 * self.capacity))
            self.key_buffer[: self.rows, :, self.length : end].copy_(key_states)
            self.value_buffer[: self.rows, :, self.length : end].copy_(value_states)
            self.length = end
            self._views()
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.length

        def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
            return self.length + query_length, 0

        def get_max_length(self) -> int:
            return -1

        def select_rows(self, index: torch.Tensor) -> None:
            """Keep only the rows `index` (ascending), moved to the front of the buffers."""
            for buffer in (self.key_buffer, self.value_buffer):
                buffer[: len(index), :, : self.length] = buffer[index, :, : self.length]
            self.rows = len(index)
            self._views()

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            self.select_rows(torch.as_tensor(indices, device=self.device).flatten())

        def batch_repeat_interleave(self, repeats: int) -> None:
            for name in ("key_buffer", "value_buffer"):
                setattr(self, name, getattr(self, name)[: self.rows].repeat_interleave(repeats, dim=0))
            self.rows *= repeats
            self._views()

        def crop(self, tokens_to_remove: int) -> None:
            if tokens_to_remove > 0:
                raise ValueError("crop takes a negative number of tokens to remove")
            self.length = max(0, self.length + tokens_to_remove)
            self._views()

        def reset(self) -> None:
            self.length = 0
            self._views()


def in_place_cache(cache: Any, group_size: int, capacity: int) -> bool:
    """Move a prefilled transformers cache into `InPlaceLayer`s of `capacity` positions, repeating each
    prompt's rows `group_size` times (one copy). False (cache untouched) for caches it does not cover:
    sliding-window, quantized, offloaded or linear-attention layers, or pre-`Cache` transformers."""
    if _DynamicLayer is None or not isinstance(cache, _HFCache) or getattr(cache, "offloading", False):
        return False
    layers = getattr(cache, "layers", None)
    if not layers or any(type(layer) is not _DynamicLayer or layer.keys is None or layer.keys.dim() != 4
                         for layer in layers):
        return False
    converted = []
    for layer in layers:
        buffers = []
        for states in (layer.keys, layer.values):
            prompts, heads, length, dim = states.shape
            buffer = states.new_empty((prompts * group_size, heads, max(capacity, length), dim))
            buffer.view(prompts, group_size, heads, -1, dim)[:, :, :, :length].copy_(states[:, None])
            buffers.append(buffer)
        converted.append(InPlaceLayer(*buffers, rows=prompts * group_size, length=length))
    cache.layers = converted
    return True


class DecodeSession:
    """Incremental KV-cached decoding of a batch of rows, each prompt with its own seeded generator.

    The one decoding loop of the package: `sample` (GRPO, evaluations) drives it to generate whole
    answers with forced chunks interleaved, and the learned-simulator envs drive it step by step (feed
    the agent's action, draw the next frame's tokens). Rows are prompts x `group_size` (each prompt's
    prefill is computed once and copied to its group); `draw` picks one token per row from the current
    logits, `feed` runs new tokens through the model from the cache.

    The KV cache and the attention mask live in pre-allocated buffers written in place (capacity: the
    prompt plus `reserve_tokens`, doubled whenever a feed would overflow it), so a step costs the model's
    own work, not a copy of the whole cache. `keep_rows` drops rows (e.g. finished answers) from the
    batch. Sampling is inverse-CDF with one uniform number per row drawn from its prompt's generator.
    """

    @torch.no_grad()
    def __init__(self, model: torch.nn.Module, prompts: Sequence[Sequence[int]], *,
                 seeds: Sequence[int] | None = None, generators: Sequence[torch.Generator] | None = None,
                 group_size: int = 1, pad_token_id: int = 0, reserve_tokens: int = 64) -> None:
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
        width = ids.shape[1]
        capacity = width + max(1, int(reserve_tokens))
        self.in_place = in_place_cache(self.cache, group_size, capacity)
        if group_size > 1:  # share each prompt's prefill across its group
            if not self.in_place:
                self.cache.batch_repeat_interleave(group_size)
            logits = logits.repeat_interleave(group_size, 0)
            mask = mask.repeat_interleave(group_size, 0)
        self.rows = len(prompts) * group_size
        self._mask = torch.zeros((self.rows, capacity), dtype=torch.bool, device=self.device)
        self._mask[:, :width] = mask.bool()
        self._all_valid = bool(mask.all())  # no padding held: decode steps need no attention mask at all
        self.length = width  # positions held by the cache (prompt width + fed tokens)
        self.logits = logits
        self.next_pos = mask.sum(-1)  # position id of the next token per row
        attn = getattr(getattr(model, "config", None), "_attn_implementation", None)
        self._mask_4d = self.in_place and attn == "sdpa"  # hand sdpa a ready (rows, 1, q, kv) view
        # decode steps through the lean Llama forward where it reproduces the model's (None: transformers')
        self._lean = LeanDecoder.for_model(model) if self._mask_4d else None
        self.row_prompt = torch.arange(len(prompts)).repeat_interleave(group_size)  # CPU: indexes generators
        self._draw_index: torch.Tensor | None = None  # rows -> position in the per-prompt draws, once rows drop
        self._present = list(range(len(prompts)))  # prompts with at least one row in the batch

    @property
    def mask(self) -> torch.Tensor:
        """The (rows, length) attention mask of everything the cache holds (1 = real token)."""
        return self._mask[: self.rows, : self.length].long()

    def _reserve(self, end: int) -> None:
        """Grow the mask (and the in-place cache) by doubling until `end` positions fit."""
        capacity = self._mask.shape[1]
        if end <= capacity:
            return
        capacity = max(end, 2 * capacity)
        grown = torch.zeros((self._mask.shape[0], capacity), dtype=torch.bool, device=self.device)
        grown[:, : self.length] = self._mask[:, : self.length]
        self._mask = grown
        if self.in_place:
            for layer in self.cache.layers:
                layer.reserve(capacity)

    def _uniforms(self) -> torch.Tensor:
        """One uniform number per row, from its prompt's generator (`group_size` numbers per present prompt)."""
        draws = torch.cat([torch.rand(self.group_size, generator=self.generators[p], dtype=torch.float64)
                           for p in self._present])
        if self._draw_index is not None:
            draws = draws[self._draw_index]
        return draws.to(self.device)

    def draw(self, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
             allowed_token_range: tuple[int, int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(token, log-prob under the sampling distribution) per row from the current logits."""
        logits = restrict_vocab(self.logits, allowed_token_range)
        if temperature == 0:
            return logits.argmax(-1), torch.log_softmax(logits, dim=-1).max(-1).values
        scaled = logits / temperature if temperature != 1 else logits
        normaliser = torch.logsumexp(scaled, dim=-1)
        filtered = filter_logits(scaled, top_k, top_p)
        # Inverse-CDF sampling: the first token whose cumulative (unnormalised) probability exceeds u * total.
        weights = (filtered - filtered.max(-1, keepdim=True).values).exp()
        cdf = weights.cumsum(-1, dtype=torch.float64)
        total = cdf[:, -1:]
        target = torch.minimum(self._uniforms()[:, None] * total, torch.nextafter(total, torch.zeros_like(total)))
        choice = torch.searchsorted(cdf, target, right=True)[:, 0]
        return choice, scaled.gather(-1, choice[:, None])[:, 0] - normaliser

    @property
    def can_drop_rows(self) -> bool:
        """Whether `keep_rows` can shrink this session's cache (ours in place, or a transformers cache that
        selects batch rows); a model with another cache keeps every row, which gives the same tokens."""
        return self.in_place or hasattr(self.cache, "batch_select_indices")

    def keep_rows(self, index: torch.Tensor) -> None:
        """Keep only the rows `index` (ascending positions among the current rows), e.g. drop finished
        answers. Draws stay per prompt: a prompt still present draws `group_size` numbers per step."""
        index = index.to(self.device)
        cpu_index = index.cpu()
        if self.in_place:
            for layer in self.cache.layers:
                layer.select_rows(index)
        else:
            self.cache.batch_select_indices(index)
        self._mask[: len(index), : self.length] = self._mask[index, : self.length]
        self._all_valid = bool(self._mask[: len(index), : self.length].all())
        self.logits, self.next_pos = self.logits[index], self.next_pos[index]
        slot = (torch.arange(self.rows) if self._draw_index is None else self._draw_index) % self.group_size
        self.row_prompt, slot = self.row_prompt[cpu_index], slot[cpu_index]
        self._present = sorted(set(self.row_prompt.tolist()))
        present = torch.tensor(self._present)
        self._draw_index = torch.searchsorted(present, self.row_prompt) * self.group_size + slot
        self.rows = len(index)

    def _attention_mask(self, width: int, end: int) -> torch.Tensor:
        if not self._mask_4d:
            mask = self._mask[: self.rows, :end]
            return mask if self.in_place else mask.long()
        mask = self._mask[: self.rows, None, None, :end]
        if width > 1:  # causal among the new tokens
            keys = torch.arange(end, device=self.device)
            queries = self.length + torch.arange(width, device=self.device)
            mask = mask & (keys[None, :] <= queries[:, None])[None, None]
        return mask

    @torch.no_grad()
    def feed(self, new_ids: torch.Tensor, new_valid: torch.Tensor | None = None) -> None:
        """Run new tokens (rows, m) through the model from the cache (`new_valid` False = padding)."""
        new_ids = new_ids.to(self.device)
        width = new_ids.shape[1]
        end = self.length + width
        self._reserve(end)
        if new_valid is None:
            self._mask[: self.rows, self.length : end] = True
        else:
            new_valid = new_valid.to(self.device, torch.bool)
            self._mask[: self.rows, self.length : end] = new_valid
            self._all_valid = self._all_valid and bool(new_valid.all())
        pos = self.next_pos[:, None] + torch.arange(width, device=self.device)[None, :]
        if self._lean is not None:
            mask = None if self._all_valid and width == 1 else self._attention_mask(width, end)
            logits = self._lean(new_ids, pos, self.cache.layers, mask, positions_bound=end)
        else:
            # with nothing masked, the cache's own length gives transformers the (causal) mask
            attention_mask = None if self.in_place and self._all_valid else self._attention_mask(width, end)
            step_logits, _ = model_forward(self.model, cache=self.cache, input_ids=new_ids,
                                           attention_mask=attention_mask, position_ids=pos, use_cache=True)
            logits = step_logits[:, -1, :]
        self.length = end
        self.next_pos = self.next_pos + width
        self.logits = logits.float()


class _Answers:
    """The output rows of `sample`, filled column by column while a session decodes them. Rows that left
    the session (finished answers) keep padding; `active` maps the session's rows to output rows."""

    def __init__(self, n_rows: int, width: int, pad_token_id: int, device: torch.device) -> None:
        self.pad_token_id = pad_token_id
        self.tokens = torch.full((n_rows, width), pad_token_id, dtype=torch.long, device=device)
        self.logps = torch.zeros((n_rows, width), device=device)
        self.sampled = torch.zeros((n_rows, width), dtype=torch.bool, device=device)
        self.valid = torch.zeros((n_rows, width), dtype=torch.bool, device=device)
        self.finished = torch.zeros(n_rows, dtype=torch.bool, device=device)
        self.active = torch.arange(n_rows, device=device)  # output rows still in the session, in its order
        self.everyone = True  # active is every row (plain slices, no gathers)
        self.column = 0

    @property
    def rows(self) -> slice | torch.Tensor:
        return slice(None) if self.everyone else self.active

    def append_sampled(self, choice: torch.Tensor, logprob: torch.Tensor,
                       stop: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write one drawn token per session row (padding for finished rows); returns (token, alive)."""
        alive = ~self.finished if self.everyone else ~self.finished[self.active]
        token = torch.where(alive, choice, torch.full_like(choice, self.pad_token_id))
        rows = self.rows
        self.tokens[rows, self.column] = token
        self.logps[rows, self.column] = torch.where(alive, logprob, torch.zeros_like(logprob))
        self.sampled[rows, self.column] = alive
        self.valid[rows, self.column] = alive
        self.column += 1
        if stop.numel():
            self.finished[rows] = self.finished[rows] | (alive & torch.isin(token, stop))
        return token, alive

    def drop_finished(self, session: DecodeSession, token: torch.Tensor,
                      alive: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Once finished rows are a quarter of the session, drop them from it; returns the kept rows'
        (token, alive)."""
        gone = self.finished if self.everyone else self.finished[self.active]
        n_gone = int(gone.sum())
        if n_gone and 4 * n_gone >= len(gone):
            keep = (~gone).nonzero()[:, 0]
            session.keep_rows(keep)
            self.active, token, alive, self.everyone = self.active[keep], token[keep], alive[keep], False
        return token, alive

    def append_forced(self, chunk: torch.Tensor, session: DecodeSession) -> None:
        """Write a forced chunk (one row per output row) into the rows still decoding and feed it."""
        alive = ~self.finished
        if not self.everyone:
            chunk, alive = chunk[self.active], alive[self.active]
        chunk = torch.where(alive[:, None], chunk, torch.full_like(chunk, self.pad_token_id))
        chunk_valid = alive[:, None].expand_as(chunk)
        span = slice(self.column, self.column + chunk.shape[1])
        rows = self.rows
        self.tokens[rows, span] = chunk
        self.valid[rows, span] = chunk_valid
        self.column += chunk.shape[1]
        session.feed(chunk, chunk_valid)

    def output(self) -> SampleOutput:
        column = self.column
        return SampleOutput(
            tokens=self.tokens[:, :column].cpu(),
            logprobs=self.logps[:, :column].cpu(),
            loss_mask=self.sampled[:, :column].cpu(),
            lengths=self.valid[:, :column].cpu().long().sum(1),
            pad_token_id=self.pad_token_id,
        )


def _forced_width(n_prompts: int, forced: Sequence[Sequence[Sequence[int]]] | None,
                  interleave_every: int | None) -> int:
    """Check `sample`'s forced chunks and return how many output columns they take."""
    if forced is None:
        return 0
    if interleave_every is None or interleave_every < 1:
        raise ValueError("forced tokens need interleave_every >= 1")
    if len(forced) != n_prompts:
        raise ValueError(f"forced has {len(forced)} entries for {n_prompts} prompts")
    n_chunks = {len(f) for f in forced}
    if len(n_chunks) != 1:
        raise ValueError("every prompt needs the same number of forced chunks")
    return sum(max(len(c) for c in chunks) for chunks in zip(*forced)) if forced[0] else 0


def _forced_chunk(forced: Sequence[Sequence[Sequence[int]]], chunk_index: int, answers: _Answers,
                  group_size: int) -> torch.Tensor:
    """The `chunk_index`-th forced chunk for every output row: the prompt's own chunk, or where `forced`
    is callable, the chunk for each sample's tokens so far (padding for finished rows)."""
    n_rows = answers.tokens.shape[0]
    if callable(forced[0]):
        width_now = len(forced[0][chunk_index])
        done = answers.tokens[:, : answers.column].tolist()
        chunk_rows = [list(forced[r // group_size](chunk_index, done[r])) if not answers.finished[r]
                      else [answers.pad_token_id] * width_now for r in range(n_rows)]
    else:
        chunk_rows = [list(f[chunk_index]) for f in forced]
    if len({len(c) for c in chunk_rows}) != 1 or not chunk_rows[0]:
        raise ValueError(f"forced chunk {chunk_index} must be non-empty and equally long for all prompts")
    chunk = torch.tensor(chunk_rows, dtype=torch.long, device=answers.tokens.device)
    return chunk if callable(forced[0]) else chunk.repeat_interleave(group_size, 0)


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
    drop_finished: bool = True,
) -> SampleOutput:
    """Sample `group_size` continuations of every prompt (see the module docstring).

    temperature 0 means greedy decoding. `forced[i]` lists the token chunks appended to prompt i's
    continuations after every `interleave_every` generated tokens; chunks at the same position must
    have the same length across prompts. Where `forced[i]` is also callable (chunks that depend on what
    was generated, e.g. `rlvr_sim.tasks.video.StateForcing`), each sample's chunk is
    `forced[i](chunk_index, its tokens so far)`; the list itself then only gives the count and lengths.
    `max_new_tokens` counts generated tokens only. With `drop_finished`, rows that emitted a stop token
    leave the batch once they are a quarter of it (the samples are the same either way).
    """
    if group_size < 1 or max_new_tokens < 1:
        raise ValueError("group_size and max_new_tokens must be >= 1")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    width = max_new_tokens + _forced_width(len(prompts), forced, interleave_every)
    seeds = list(seeds) if seeds is not None else prompt_seeds(seed, len(prompts))
    session = DecodeSession(model, prompts, seeds=seeds, group_size=group_size, pad_token_id=pad_token_id,
                            reserve_tokens=width)
    answers = _Answers(session.rows, width, pad_token_id, session.device)
    stop = torch.tensor(sorted(set(stop_token_ids)), dtype=torch.long, device=session.device)
    generated = chunk_index = 0
    while generated < max_new_tokens:
        choice, logprob = session.draw(temperature, top_k, top_p, allowed_token_range)
        token, alive = answers.append_sampled(choice, logprob, stop)
        generated += 1
        if generated >= max_new_tokens or bool(answers.finished.all()):
            break
        if drop_finished and stop.numel() and session.can_drop_rows:
            token, alive = answers.drop_finished(session, token, alive)
        session.feed(token[:, None], alive[:, None])
        if forced is not None and generated % interleave_every == 0 and chunk_index < len(forced[0]):
            answers.append_forced(_forced_chunk(forced, chunk_index, answers, group_size), session)
            chunk_index += 1
    return answers.output()
