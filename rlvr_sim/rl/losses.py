"""GRPO and SFT losses as RLVR-World uses them (Wu et al., 2025: GRPO as the paper runs it).

All losses return a *sum* over tokens; the trainer divides by the number of loss tokens in the whole
(mini-)batch across micro-batches and processes, which makes the result the token-mean of the full batch
whatever the micro-batching or the number of processes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rlvr_sim.rl.sampler import model_forward, positions_from_mask, restrict_vocab


def group_advantages(rewards: torch.Tensor, group_size: int, eps: float = 1e-6) -> torch.Tensor:
    """(r - mean(group)) / (std(group) + eps), one scalar per sequence; groups are contiguous rows.

    std is the unbiased sample std (as in the reference implementations); a group of one gets 0.
    """
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    grouped = rewards.view(-1, group_size).float()
    if group_size == 1:
        return torch.zeros_like(rewards, dtype=torch.float)
    mean = grouped.mean(1, keepdim=True)
    std = grouped.std(1, keepdim=True)
    return ((grouped - mean) / (std + eps)).view(-1)


def completion_logprobs(
    model: torch.nn.Module,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    completion_ids: torch.Tensor,
    completion_mask: torch.Tensor,
    group_size: int,
    temperature: float = 1.0,
    allowed_token_range: tuple[int, int] | None = None,
) -> torch.Tensor:
    """Log-probs of completion tokens, each prompt prefilled once and its cache shared by its group.

    prompt_ids/mask: (B, P) left-padded; completion_ids/mask: (B * group_size, L) right-padded.
    Returns (B * group_size, L). Gradients flow through the shared prefill.
    """
    prompt_logits, cache = model_forward(
        model, input_ids=prompt_ids, attention_mask=prompt_mask,
        position_ids=positions_from_mask(prompt_mask), use_cache=True,
    )
    first_logits = prompt_logits[:, -1:, :]
    if group_size > 1:
        cache.batch_repeat_interleave(group_size)
        first_logits = first_logits.repeat_interleave(group_size, 0)
        prompt_mask = prompt_mask.repeat_interleave(group_size, 0)
    full_mask = torch.cat([prompt_mask, completion_mask.long()], dim=1)
    start = prompt_mask.sum(-1, keepdim=True)
    positions = start + torch.arange(completion_ids.shape[1], device=completion_ids.device)[None, :]
    logits, _ = model_forward(
        model, cache=cache, input_ids=completion_ids, attention_mask=full_mask, position_ids=positions, use_cache=True
    )
    logits = torch.cat([first_logits, logits[:, :-1, :]], dim=1).float()
    logits = restrict_vocab(logits, allowed_token_range)
    if temperature and temperature != 1.0:
        logits = logits / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, completion_ids[..., None]).squeeze(-1)
    if allowed_token_range is not None:
        # forced tokens (e.g. actions between frames) lie outside the sampling range: their -inf log-prob
        # must not reach the loss (they are masked out of it anyway); 0 keeps every product finite
        logp = logp.masked_fill(torch.isinf(logp), 0.0)
    return logp


@dataclass
class GRPOLossParts:
    loss_sum: torch.Tensor  # summed over loss tokens; divide by the global token count
    kl_sum: float
    clipped_tokens: float
    tokens: float


def grpo_token_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    ref_logprobs: torch.Tensor | None = None,
    clip_eps: float = 0.2,
    dual_clip: float | None = None,
    kl_coef: float = 1e-3,
) -> GRPOLossParts:
    """PPO-clipped policy loss with per-sequence advantages plus k3 KL to the reference.

    k3 KL: exp(ref - logp) - (ref - logp) - 1 (low variance, always >= 0), added to the loss.
    Dual clip (Ye et al. 2020): for negative advantages the loss is bounded by -A * dual_clip.
    """
    mask = mask.float()
    adv = advantages[:, None].to(logprobs.dtype)
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = -adv * ratio
    clipped = -adv * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    per_token = torch.maximum(unclipped, clipped)
    if dual_clip is not None:
        if dual_clip <= 1:
            raise ValueError(f"dual_clip must be > 1, got {dual_clip}")
        per_token = torch.where(adv < 0, torch.minimum(per_token, -adv * dual_clip), per_token)
    kl_sum = 0.0
    if ref_logprobs is not None and kl_coef:
        delta = ref_logprobs - logprobs
        kl = torch.exp(delta) - delta - 1
        per_token = per_token + kl_coef * kl
        kl_sum = float((kl.detach() * mask).sum())
    clipped_tokens = float(((clipped > unclipped).float() * mask).sum())
    return GRPOLossParts((per_token * mask).sum(), kl_sum, clipped_tokens, float(mask.sum()))


def sft_loss_sum(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                 loss_mask: torch.Tensor) -> torch.Tensor:
    """Summed next-token NLL over answer tokens only (loss_mask marks them; prompts are masked)."""
    logits, _ = model_forward(
        model, input_ids=input_ids, attention_mask=attention_mask,
        position_ids=positions_from_mask(attention_mask), use_cache=False,
    )
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    target = input_ids[:, 1:]
    nll = -logp.gather(-1, target[..., None]).squeeze(-1)
    return (nll * loss_mask[:, 1:].float()).sum()
