"""One GRPO step as RLVR-World runs it (Wu et al., 2025), for any task:

    prompts  <- this process's share of the global batch
    sample G answers per prompt with the current policy (old log-probs come with the samples)
    rewards  <- task.reward(decoded answers)            (a verifiable metric; see Trainer.safe_reward)
    A        <- (r - mean(group)) / std(group)          one advantage per answer
    ref      <- log-probs under the reference model     (only with a KL term)
    for each of `mini_batches` mini-batches:
        for each micro-batch: loss = clipped policy loss + kl_coef * k3 KL, summed over answer tokens,
                              backward(loss / global number of answer tokens in the mini-batch)
        sum gradients over processes, clip, AdamW step

Each step samples from its own seeds (run seed, step, example index), so a resumed or multi-process run
samples exactly what the uninterrupted single-process run samples.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from rlvr_sim.rl.losses import completion_logprobs, group_advantages, grpo_token_loss
from rlvr_sim.rl.sampler import left_pad, model_forward, positions_from_mask, restrict_vocab, sample

if TYPE_CHECKING:
    from rlvr_sim.rl.trainer import Trainer


@dataclass
class Rollouts:
    """This process's sampled groups: `group_size` answers per prompt in contiguous rows, on the device."""

    prompts: list[list[int]]
    tokens: torch.Tensor  # (rows, L) answer ids, forced chunks included, right-padded
    loss_mask: torch.Tensor  # (rows, L) True for sampled tokens
    attention_mask: torch.Tensor  # (rows, L) True for valid tokens (sampled and forced)
    lengths: torch.Tensor  # (rows,) valid length per row (CPU)
    old_logprobs: torch.Tensor  # (rows, L) under the sampling policy
    rewards: torch.Tensor  # (rows,) CPU
    advantages: torch.Tensor  # (rows,) CPU
    group_size: int
    temperature: float  # the sampling temperature the log-probs are taken at (0, greedy, scores at 1)


def uncached_completion_logprobs(
    model: torch.nn.Module, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, completion_ids: torch.Tensor,
    completion_mask: torch.Tensor, group_size: int, temperature: float = 1.0,
    allowed_token_range: tuple[int, int] | None = None,
) -> torch.Tensor:
    """`completion_logprobs` in one forward of prompt + completion per row, without a KV cache.

    Gradient checkpointing cannot keep a cache in a training forward (the backward replay would write it a
    second time; transformers drops it), so with `gradient_checkpointing` GRPO scores completions this way:
    the prompt is repeated over its group instead of prefilled once. Same values, same shapes.
    """
    prompt_ids = prompt_ids.repeat_interleave(group_size, 0)
    prompt_mask = prompt_mask.repeat_interleave(group_size, 0)
    ids = torch.cat([prompt_ids, completion_ids], dim=1)
    mask = torch.cat([prompt_mask, completion_mask.long()], dim=1)
    logits, _ = model_forward(model, input_ids=ids, attention_mask=mask, position_ids=positions_from_mask(mask),
                              use_cache=False)
    width = prompt_ids.shape[1]
    logits = restrict_vocab(logits[:, width - 1 : -1, :].float(), allowed_token_range)
    if temperature and temperature != 1.0:
        logits = logits / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, completion_ids[..., None]).squeeze(-1)
    if allowed_token_range is not None:
        logp = logp.masked_fill(torch.isinf(logp), 0.0)  # forced tokens outside the range: masked anyway
    return logp


def sample_groups(trainer: Trainer) -> Rollouts:
    """Sample the step's groups with the current policy (in eval mode, parameters gathered under FSDP),
    score them with the task's reward and compute the group-normalised advantages."""
    c, processes = trainer.config, trainer.processes
    G = c.group_size
    local_idx = processes.local_slice(trainer.batch_indices())
    examples = [trainer.train_examples[i] for i in local_idx]
    prompts = [e.prompt_ids for e in examples]
    gen = trainer.generation_kwargs()
    trainer.model.eval()
    with processes.full_params(trainer.model), processes.autocast():
        out = sample(
            trainer.model, prompts, group_size=G, seeds=trainer.sample_seeds(local_idx),
            forced=[e.forced for e in examples] if examples[0].forced is not None else None, **gen,
        )
    trainer.model.train()
    prompts_rep = [p for p in prompts for _ in range(G)]
    meta_rep = [e.metadata for e in examples for _ in range(G)]
    rewards = torch.tensor(trainer.safe_reward(prompts_rep, out.completions(), meta_rep))
    device = processes.device
    return Rollouts(
        prompts=prompts, tokens=out.tokens.to(device), loss_mask=out.loss_mask.to(device),
        attention_mask=out.attention_mask.to(device), lengths=out.lengths, old_logprobs=out.logprobs.to(device),
        rewards=rewards, advantages=group_advantages(rewards, G), group_size=G,
        temperature=gen["temperature"] or 1.0,
    )


def answer_logprobs(trainer: Trainer, model: torch.nn.Module, rollouts: Rollouts, p0: int, p1: int) -> torch.Tensor:
    """Log-probs under `model` of the answers of prompts p0..p1 (their rows), computed up to the longest
    of those answers and zero-padded to the rollouts' width."""
    G, device = rollouts.group_size, trainer.processes.device
    rows = slice(p0 * G, p1 * G)
    pid, pmask = left_pad(rollouts.prompts[p0:p1], trainer.task.pad_token_id)
    width = int(rollouts.lengths[rows].max())
    # a checkpointed training forward keeps no cache: score prompt + completion in one pass
    score = uncached_completion_logprobs if trainer.gradient_checkpointing and model.training \
        else completion_logprobs
    with trainer.processes.autocast():
        logp = score(
            model, pid.to(device), pmask.to(device), rollouts.tokens[rows, :width],
            rollouts.attention_mask[rows, :width], G, temperature=rollouts.temperature,
            allowed_token_range=trainer.spec.allowed_token_range,
        )
    return torch.nn.functional.pad(logp, (0, rollouts.tokens.shape[1] - width))


@torch.no_grad()
def reference_logprobs(trainer: Trainer, rollouts: Rollouts) -> torch.Tensor | None:
    """Answer log-probs under the reference policy for the KL term (None without one): the frozen copy,
    or with LoRA the base model (the adapter disabled)."""
    c = trainer.config
    if c.kl_coef <= 0:
        return None
    reference = trainer.model if c.lora else trainer.reference
    n_prompts, micro = len(rollouts.prompts), c.micro_batch_size
    parts = []
    with trainer.model.disable_adapter() if c.lora else nullcontext():
        for p0 in range(0, n_prompts, micro):
            parts.append(answer_logprobs(trainer, reference, rollouts, p0, min(n_prompts, p0 + micro)))
    return torch.cat(parts)


def policy_update(trainer: Trainer, rollouts: Rollouts, ref_logp: torch.Tensor | None) -> dict[str, float]:
    """The clipped, KL-regularised, token-mean update: one optimizer step per mini-batch of prompts.
    Returns this process's sums (kl, clipped, tokens, loss) and the last step's gradient norm."""
    c, processes = trainer.config, trainer.processes
    G, mask = rollouts.group_size, rollouts.loss_mask
    per_mini = len(rollouts.prompts) // c.mini_batches
    stats = {"kl": 0.0, "clipped": 0.0, "tokens": 0.0, "loss": 0.0, "grad_norm": 0.0}
    for m in range(c.mini_batches):
        m0, m1 = m * per_mini, (m + 1) * per_mini
        n_tokens = processes.all_sum([float(mask[m0 * G : m1 * G].sum())])[0]
        for p0 in range(m0, m1, c.micro_batch_size):
            p1 = min(m1, p0 + c.micro_batch_size)
            rows = slice(p0 * G, p1 * G)
            parts = grpo_token_loss(
                answer_logprobs(trainer, trainer.model, rollouts, p0, p1), rollouts.old_logprobs[rows],
                rollouts.advantages[rows].to(processes.device), mask[rows],
                ref_logprobs=None if ref_logp is None else ref_logp[rows],
                clip_eps=c.clip_eps, dual_clip=c.dual_clip, kl_coef=c.kl_coef,
            )
            trainer.backward(parts.loss_sum / max(n_tokens, 1.0))
            stats["kl"] += parts.kl_sum
            stats["clipped"] += parts.clipped_tokens
            stats["tokens"] += parts.tokens
            stats["loss"] += float(parts.loss_sum.detach())
        stats["grad_norm"] = trainer.optimizer_step()
    return stats


def grpo_step(trainer: Trainer) -> dict[str, float]:
    """One GRPO step (module docstring) on the trainer's next global batch; returns the step's mean reward,
    KL, clipped fraction and loss per answer token, answer length, reward errors so far and gradient norm."""
    rollouts = sample_groups(trainer)
    ref_logp = reference_logprobs(trainer, rollouts)
    stats = policy_update(trainer, rollouts, ref_logp)
    rewards = rollouts.rewards
    totals = trainer.processes.all_sum([float(rewards.sum()), float(rewards.numel()), stats["kl"], stats["clipped"],
                                        stats["tokens"], stats["loss"], float(trainer.reward_errors)])
    return {
        "reward": totals[0] / totals[1],
        "kl": totals[2] / max(totals[4], 1),
        "clip_frac": totals[3] / max(totals[4], 1),
        "loss": totals[5] / max(totals[4], 1),
        "response_tokens": totals[4] / totals[1],
        "reward_errors": totals[6],
        "grad_norm": stats["grad_norm"],
    }


__all__ = ["Rollouts", "answer_logprobs", "grpo_step", "policy_update", "reference_logprobs", "sample_groups",
           "uncached_completion_logprobs"]
