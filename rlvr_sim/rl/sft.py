"""One SFT step: maximum likelihood of the answer tokens o(s') given the prompt q(s, a), prompt masked.

    for each micro-batch of this process's share of the global batch:
        loss += -sum log p(answer token | prompt, earlier answer tokens)   (loss-masked tokens only)
        backward(loss / global number of loss tokens)
    sum gradients over processes, clip, AdamW step

Dividing every micro-batch's summed loss by the global token count makes the update the token-mean of
the whole batch, whatever the micro-batching or the number of processes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from rlvr_sim.rl.losses import sft_loss_sum
from rlvr_sim.rl.sampler import left_pad
from rlvr_sim.tasks.base import Example

if TYPE_CHECKING:
    from rlvr_sim.rl.trainer import Trainer


def answer_loss_mask(example: Example, interleave_every: int | None) -> torch.Tensor:
    """1 for the answer tokens SFT learns, 0 for forced tokens (e.g. the true actions between video frames:
    they are given to the world model, not predicted by it, exactly as in sampling and GRPO)."""
    mask = torch.ones(len(example.answer_ids), dtype=torch.long)
    if example.forced is None or not interleave_every:
        return mask
    position = 0
    for chunk in example.forced:
        position += interleave_every
        if position >= len(mask):
            break
        mask[position : position + len(chunk)] = 0
        position += len(chunk)
    return mask


def sft_step(trainer: Trainer) -> dict[str, float]:
    """One optimizer step of SFT on the trainer's next global batch; returns its loss (token-mean),
    gradient norm and global loss-token count."""
    c, processes = trainer.config, trainer.processes
    examples = [trainer.train_examples[i] for i in processes.local_slice(trainer.batch_indices())]
    if any(not e.answer_ids for e in examples):
        raise ValueError(f"task {c.task!r} has training examples without answer_ids; SFT needs them")
    every = None if c.learn_forced else trainer.spec.interleave_every
    masks = [answer_loss_mask(e, every) for e in examples]
    n_tokens = processes.all_sum([sum(int(m.sum()) for m in masks)])[0]
    loss_total = 0.0
    for start in range(0, len(examples), c.micro_batch_size):
        micro = examples[start : start + c.micro_batch_size]
        ids, mask = left_pad([e.prompt_ids + e.answer_ids for e in micro], trainer.task.pad_token_id)
        loss_mask = torch.zeros_like(mask)
        for row, (e, answer_mask) in enumerate(zip(micro, masks[start : start + c.micro_batch_size])):
            loss_mask[row, ids.shape[1] - len(e.answer_ids) :] = answer_mask
        device = processes.device
        with processes.autocast():
            loss = sft_loss_sum(trainer.model, ids.to(device), mask.to(device), loss_mask.to(device))
        trainer.backward(loss / n_tokens)
        loss_total += float(loss.detach())
    grad_norm = trainer.optimizer_step()
    return {"loss": processes.all_sum([loss_total])[0] / n_tokens, "grad_norm": grad_norm, "tokens": n_tokens}


__all__ = ["answer_loss_mask", "sft_step"]
