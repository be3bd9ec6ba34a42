"""A lean decode-step forward for Hugging Face Llama models: the same weights and the same arithmetic as
`LlamaForCausalLM.forward`, without the module machinery around it.

Why: on a CPU, a decode step of a small world model is mostly Python, not arithmetic. Profiled on the
embedded text-game model (4 layers, batch 1), the matrix multiplies and attention are about a quarter of
a `LlamaForCausalLM` forward; the rest is module dispatch, decorators, output capturing, mask and cache
bookkeeping, the same for every step. The sampler's decode steps (`DecodeSession.feed`: one token, or a
forced chunk, from an in-place KV cache, under `no_grad`) need none of it, so they call this function
instead: embedding, per layer RMSNorm, the q/k/v projections, rotary embedding, cache write, scaled-dot-product
attention, output projection, RMSNorm, gated SiLU MLP, then the final norm and the LM head on the last
position only. The prefill, training and scoring forwards stay transformers' own.

The projections that read the same input are concatenated (q|k|v, gate|up: three and two matrix
multiplies become one each); those copies are kept per model and rebuilt whenever a weight changed in
place or moved (an optimizer step, `load_state_dict`, `.to()`), so a model being trained is decoded with
its current weights. Everything else is read by reference. What is left of a step on a CPU is the count
of tensor operations (each costs microseconds whatever its size), so the step also spends as few as it
can: rotary cos/sin come from a table per model (built once, as transformers computes them per
position), the queries and keys are rotated together (one roll of half the head stands in for
`rotate_half`), and RMSNorm is one fused call in float32 (bit-identical there to the spelled-out form).
The cost is memory: one extra copy of those
projections (about two thirds of a Llama's layer weights) per model decoded; where that matters (a large
model on a full GPU), `RLVR_SIM_LEAN_DECODE=0`. `LeanDecoder.for_model` returns None (the caller keeps the
transformers forward) for anything it does not reproduce exactly: another architecture, an attention
implementation other than sdpa, scaled or dynamic rotary embeddings, another activation, a wrapped or
sharded model (PEFT, FSDP), a model in training mode with attention dropout. Set
`RLVR_SIM_LEAN_DECODE=0` to turn it off everywhere (the benchmarks time both).
Tests (`tests/models/test_lean_decode.py`) hold it to the transformers forward's logits and to the
same sampled tokens.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F

ENV_VAR = "RLVR_SIM_LEAN_DECODE"


def lean_decode_enabled() -> bool:
    return os.environ.get(ENV_VAR, "1") != "0"


@contextlib.contextmanager
def lean_decode(enabled: bool) -> Iterator[None]:
    """Within the block, decode with the lean step on or off (sets `RLVR_SIM_LEAN_DECODE`; restores it after):
    the benchmarks time both sides with it. Also a decorator: `lean_decode(False)(run)` is `run` with it off."""
    previous = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = "1" if enabled else "0"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = previous


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Llama's RMSNorm: one fused call in float32 (bit-identical to the spelled-out form there), else the
    spelled-out form (normalise in float32, cast back, then scale), as transformers computes it."""
    if x.dtype == weight.dtype == torch.float32:
        return F.rms_norm(x, (x.shape[-1],), weight, eps)
    dtype = x.dtype
    x32 = x.to(torch.float32)
    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x32.to(dtype)


# rotary module -> (key of inv_freq, cos table, signed sin table), rows = positions; grown by doubling
_ROPE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rope_tables(rotary: torch.nn.Module, positions: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and signed sin of every position below `positions` (at least), computed as transformers computes
    them for one position (`position * inv_freq` in float32, duplicated halves, times the attention
    scaling, cast to `dtype`). The sin table's first half is negated, so that rotating x by half its last
    dimension and multiplying by it equals transformers' `rotate_half(x) * sin`."""
    inv_freq = rotary.inv_freq
    key = (inv_freq._version, inv_freq.data_ptr(), inv_freq.device, dtype, rotary.attention_scaling)
    cached = _ROPE.get(rotary)
    if cached is not None and cached[0] == key and cached[1].shape[0] >= positions:
        return cached[1], cached[2]
    size = max(positions, 2 * cached[1].shape[0] if cached is not None and cached[0] == key else 0, 256)
    freqs = torch.arange(size, device=inv_freq.device).float()[:, None] * inv_freq.float()
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = (emb.cos() * rotary.attention_scaling).to(dtype)
    sin = (emb.sin() * rotary.attention_scaling).to(dtype)
    half = sin.shape[-1] // 2
    signed_sin = torch.cat((-sin[:, :half], sin[:, half:]), dim=-1)
    _ROPE[rotary] = (key, cos, signed_sin)
    return cos, signed_sin


class LeanDecoder:
    """The decode-step forward of one `LlamaForCausalLM` (see the module docstring)."""

    def __init__(self, model: torch.nn.Module) -> None:
        config = model.config
        base = model.model
        layers = list(base.layers[: config.num_hidden_layers])
        attn = layers[0].self_attn
        self.head_dim, self.scaling = attn.head_dim, attn.scaling
        self.q_size = config.num_attention_heads * self.head_dim
        self.kv_size = config.num_key_value_heads * self.head_dim
        self.gqa = config.num_key_value_heads != config.num_attention_heads
        self.eps = layers[0].input_layernorm.variance_epsilon
        self.final_eps = base.norm.variance_epsilon
        self.embed, self.norm = base.embed_tokens.weight, base.norm.weight
        self.lm_head, self.lm_head_bias = model.lm_head.weight, model.lm_head.bias
        self.rotary = base.rotary_emb
        self.layers = _fused_layers(model, layers)
        self._rope = _rope_tables(self.rotary, getattr(config, "max_position_embeddings", None) or 256,
                                  self.embed.dtype)

    @staticmethod
    def for_model(model: torch.nn.Module) -> LeanDecoder | None:
        """A lean decoder for `model`, or None where the transformers forward must run."""
        if not lean_decode_enabled():
            return None
        try:
            from transformers import LlamaForCausalLM
        except ImportError:  # pragma: no cover - transformers without Llama
            return None
        if type(model) is not LlamaForCausalLM:  # exact: PEFT, FSDP and other wrappers change the type
            return None
        config = model.config
        rope = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
        if (getattr(config, "_attn_implementation", None) != "sdpa" or config.hidden_act != "silu"
                or rope.get("rope_type", rope.get("type", "default")) != "default"
                or getattr(config, "pretraining_tp", 1) != 1
                or (model.training and getattr(config, "attention_dropout", 0.0))
                or model._forward_hooks or model._forward_pre_hooks):
            return None
        return LeanDecoder(model)

    def __call__(self, input_ids: torch.Tensor, positions: torch.Tensor, cache_layers: list[Any],
                 attention_mask: torch.Tensor | None, positions_bound: int | None = None) -> torch.Tensor:
        """Logits (rows, vocab) of the last of the new tokens `input_ids` (rows, m) at `positions`, after
        writing their keys and values into `cache_layers` (`InPlaceLayer`s). `attention_mask`: a boolean
        (rows, 1, m, kv) mask (True = attend) over the cache plus the new tokens, or None when every
        position is valid and m == 1. `positions_bound`: a number above every position (the caller knows
        one; else it is read from `positions`, a device sync on a GPU)."""
        hidden = F.embedding(input_ids, self.embed)
        bound = int(positions.max()) + 1 if positions_bound is None else positions_bound
        cos_table, sin_table = self._rope
        if bound > cos_table.shape[0] or cos_table.dtype != hidden.dtype:  # past the model's positions
            self._rope = cos_table, sin_table = _rope_tables(self.rotary, bound, hidden.dtype)
        cos, sin = cos_table[positions][:, :, None], sin_table[positions][:, :, None]  # (rows, m, 1, head_dim)
        q_size, kv_size, head_dim = self.q_size, self.kv_size, self.head_dim
        q_heads, half = q_size // head_dim, head_dim // 2
        for (norm_in, qkv, qkv_bias, o, o_bias, norm_post, gate_up, gate_up_bias, down, down_bias), cache in zip(
                self.layers, cache_layers):
            projected = F.linear(_rms_norm(hidden, norm_in, self.eps), qkv, qkv_bias)
            # rotary embedding of the queries and keys together: (rows, m, q heads + kv heads, head_dim)
            qk = projected[..., : q_size + kv_size].unflatten(-1, (-1, head_dim))
            qk = qk * cos + qk.roll(half, -1) * sin
            q, k = qk[:, :, :q_heads].transpose(1, 2), qk[:, :, q_heads:].transpose(1, 2)
            v = projected[..., q_size + kv_size :].unflatten(-1, (-1, head_dim)).transpose(1, 2)
            keys, values = cache.update(k, v)
            out = F.scaled_dot_product_attention(q, keys, values, attn_mask=attention_mask, scale=self.scaling,
                                                 enable_gqa=self.gqa)
            hidden = hidden + F.linear(out.transpose(1, 2).flatten(2), o, o_bias)
            gate, up = F.linear(_rms_norm(hidden, norm_post, self.eps), gate_up, gate_up_bias).chunk(2, dim=-1)
            hidden = hidden + F.linear(F.silu(gate) * up, down, down_bias)
        last = _rms_norm(hidden[:, -1], self.norm, self.final_eps)
        return F.linear(last, self.lm_head, self.lm_head_bias)


# model -> (key of the weights they were built from, fused per-layer weights); rebuilt when any weight changed
_FUSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _cat(tensors: list[torch.Tensor | None]) -> torch.Tensor | None:
    return None if tensors[0] is None else torch.cat(tensors)


def _fused_layers(model: torch.nn.Module, layers: list[torch.nn.Module]) -> list[tuple]:
    """Per layer: (input norm, q|k|v weight and bias, o, post norm, gate|up weight and bias, down), the
    projections that read the same input concatenated into one matrix (one matrix multiply instead of three
    or two). The concatenations are copies, kept per model and rebuilt when any weight was changed in place
    (an optimizer step, `load_state_dict`) or moved (its version counter or storage differs)."""
    parts = []
    for layer in layers:
        a, m = layer.self_attn, layer.mlp
        parts.append((layer.input_layernorm.weight, (a.q_proj, a.k_proj, a.v_proj), a.o_proj,
                      layer.post_attention_layernorm.weight, (m.gate_proj, m.up_proj), m.down_proj))
    sources = [p for _, qkv, _, _, gate_up, _ in parts for lin in (*qkv, *gate_up)
               for p in (lin.weight, lin.bias) if p is not None]
    key = tuple((p._version, p.data_ptr(), p.dtype, p.device) for p in sources)
    cached = _FUSED.get(model)
    if cached is not None and cached[0] == key:
        return cached[1]
    with torch.no_grad():
        fused = [(norm_in, _cat([lin.weight for lin in qkv]), _cat([lin.bias for lin in qkv]), o.weight, o.bias,
                  norm_post, _cat([lin.weight for lin in gate_up]), _cat([lin.bias for lin in gate_up]),
                  down.weight, down.bias)
                 for norm_in, qkv, o, norm_post, gate_up, down in parts]
    _FUSED[model] = (key, fused)
    return fused
