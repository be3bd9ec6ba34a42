"""The one training loop: SFT (likelihood of answer tokens) and GRPO (RLVR-World, Wu et al. 2025), for any task.

The loop is modality-blind: it sees token ids, a `GenerationSpec` and `Task.reward`. Multi-process runs
(torchrun, `accelerate launch`) split every global batch across processes; losses are normalised by the
global token count and gradients are summed across processes, so N processes compute exactly the update
of one process with the same global batch. All randomness derives from (seed, step, example index),
so a run resumed from a checkpoint continues exactly as the uninterrupted run.

GPU settings (`mixed_precision`, `gradient_checkpointing`, `fsdp`; docs/gpu.md) default to the CPU
behaviour. Under FSDP (PyTorch's `fully_shard`, one unit per decoder layer) gradients are reduced by FSDP
instead of `_sync_gradients`, and sampling runs on gathered full parameters, so processes that decode a
different number of steps never wait on each other.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import shutil
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from rlvr_sim.config import ConfigError, RunConfig
from rlvr_sim.models.lm import (
    CheckpointError,
    apply_lora,
    build_model,
    grow_depth,
    load_model,
    save_checkpoint,
)
from rlvr_sim.rl.losses import completion_logprobs, group_advantages, grpo_token_loss, sft_loss_sum
from rlvr_sim.rl.sampler import left_pad, model_forward, positions_from_mask, restrict_vocab, sample
from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.base import Example


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


def resolve_mixed_precision(setting: str | None) -> str:
    """The run's precision: the setting, else what `accelerate launch` passed on, else "no"."""
    value = setting if setting is not None else os.environ.get("ACCELERATE_MIXED_PRECISION", "no")
    value = str(value).lower()
    if value not in ("no", "bf16", "fp16"):
        raise ConfigError(f"mixed_precision {value!r} is not supported (no, bf16 or fp16)")
    return value


def resolve_fsdp(setting: bool | None) -> bool:
    """FSDP on: the setting, else whether an accelerate FSDP config launched us (ACCELERATE_USE_FSDP)."""
    if setting is not None:
        return bool(setting)
    return os.environ.get("ACCELERATE_USE_FSDP", "false").lower() in ("1", "true", "yes")


def fsdp_settings() -> tuple[list[str], bool, bool]:
    """(layer class names to shard, reshard_after_forward, activation checkpointing) from the accelerate
    FSDP config the launcher exported (FSDP_* variables); defaults when launched without one."""
    if os.environ.get("ACCELERATE_USE_FSDP", "false").lower() not in ("1", "true", "yes"):
        return [], True, False
    from accelerate.utils import FullyShardedDataParallelPlugin

    plugin = FullyShardedDataParallelPlugin()
    if plugin.fsdp_version != 2:
        raise ConfigError(f"fsdp_version {plugin.fsdp_version} in the accelerate config: this trainer shards "
                          "with FSDP2 (fully_shard); set fsdp_version: 2")
    names = list(plugin.transformer_cls_names_to_wrap or [])
    reshard = plugin.reshard_after_forward
    if not isinstance(reshard, bool):  # FSDP1-style sharding strategy names
        reshard = str(reshard).upper() not in ("SHARD_GRAD_OP", "NO_SHARD", "2", "3")
    return names, reshard, bool(plugin.activation_checkpointing)


def shard_model(model: torch.nn.Module, layer_names: list[str], reshard_after_forward: bool) -> None:
    """FSDP2 in place: each decoder layer (the model's `_no_split_modules` unless named) and the root."""
    from torch.distributed.fsdp import fully_shard

    names = set(layer_names or getattr(model, "_no_split_modules", None) or [])
    layers = [m for m in model.modules() if type(m).__name__ in names]
    if not layers:
        raise ConfigError(f"fsdp: no layers of the classes {sorted(names)} in {type(model).__name__}")
    for layer in layers:
        fully_shard(layer, reshard_after_forward=reshard_after_forward)
    fully_shard(model, reshard_after_forward=reshard_after_forward)


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor's full value (a collective: every process must call it), or the tensor itself."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


class RewardError(ValueError):
    """A task's reward function returned something unusable (NaN, wrong count, not a number)."""


def batch_indices(n_items: int, batch_size: int, step: int, seed: int) -> list[int]:
    """Global example indices of a step: consecutive slices of per-epoch seeded permutations."""
    if n_items == 0:
        raise ValueError("the task returned no training examples")
    out: list[int] = []
    position = step * batch_size
    while len(out) < batch_size:
        epoch, offset = divmod(position, n_items)
        perm = list(range(n_items))
        random.Random(seed * 7919 + epoch).shuffle(perm)
        take = min(batch_size - len(out), n_items - offset)
        out += perm[offset : offset + take]
        position += take
    return out


class Trainer:
    """Builds task, model, optimizer and reference from a RunConfig; `run()` trains SFT or GRPO."""

    def __init__(self, config: RunConfig, mode: str, command: str | None = None) -> None:
        if mode not in ("sft", "grpo"):
            raise ValueError(f"mode must be sft or grpo, got {mode!r}")
        from accelerate import PartialState

        self.config, self.mode = config, mode
        self.command = command or " ".join(sys.argv)
        launched_world = int(os.environ.get("WORLD_SIZE", "1"))
        # Under torchrun on a machine without CUDA, some accelerate versions only set up the (gloo) process
        # group when asked for CPU explicitly; without it every process would train alone as rank 0.
        self.state = PartialState(cpu=launched_world > 1 and not torch.cuda.is_available())
        self.rank, self.world = self.state.process_index, self.state.num_processes
        if self.world != launched_world:
            raise RuntimeError(f"launched with WORLD_SIZE={launched_world} but accelerate set up {self.world} "
                               "process(es); check the launcher's environment (MASTER_ADDR/PORT, backend)")
        self.device = self.state.device
        self.precision = resolve_mixed_precision(config.mixed_precision)
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)
        self.fsdp = resolve_fsdp(config.fsdp)
        wrap_names, self.reshard_after_forward, fsdp_checkpointing = fsdp_settings() if self.fsdp else ([], True, False)
        if self.fsdp and (config.lora or self.precision == "fp16"):
            raise ConfigError("fsdp needs full fine-tuning (no lora) and mixed_precision bf16 or no")
        if self.fsdp and self.world == 1 and not torch.distributed.is_initialized():
            # `fsdp=true` in a plain single process: a one-process group, so the same code path runs
            torch.distributed.init_process_group("nccl" if self.device.type == "cuda" else "gloo",
                                                 store=torch.distributed.HashStore(), rank=0, world_size=1)
        if config.batch_size % self.world:
            raise ValueError(f"batch_size {config.batch_size} must be divisible by {self.world} processes")
        torch.manual_seed(config.seed)
        self.output_dir = Path(config.output_dir)
        if self.rank == 0:
            self._check_output_dir()

        model_cfg = dict(config.model)
        tokenizer = None
        self.base_meta: dict[str, Any] = {}
        if model_cfg.get("name_or_path"):
            model, tokenizer, self.base_meta = load_model(model_cfg["name_or_path"])
            if model_cfg.get("grow_layers"):  # more capacity, same function at step 0
                model = grow_depth(model, model_cfg["grow_layers"])
        self.task = make_task(config.task, tokenizer=tokenizer, **config.task_args)
        if not model_cfg.get("name_or_path"):
            preset = model_cfg.pop("preset", "tiny-5m")
            model_cfg.pop("name_or_path", None)
            model = build_model(preset, vocab_size=self.task.vocab_size, **model_cfg)
        self.tokenizer = self.task.tokenizer
        self.gradient_checkpointing = config.gradient_checkpointing or fsdp_checkpointing
        if self.gradient_checkpointing:
            # non-reentrant: works with frozen inputs (LoRA) and with FSDP2's hooks outside the checkpoint;
            # transformers >= 5.2x renamed the switch (the old name warns)
            if hasattr(model, "activation_checkpointing_enable"):
                model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
            else:
                model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if config.lora:
            model = apply_lora(model, config.lora)
        self.model = model.to(self.device)
        self.model.train()
        if self.rank == 0:
            self._check_free_space()
        self.reference = None
        if mode == "grpo" and config.kl_coef > 0 and not config.lora:
            self.reference = copy.deepcopy(self.model).eval().requires_grad_(False)
        if self.fsdp:
            shard_model(self.model, wrap_names, self.reshard_after_forward)
            if self.reference is not None:
                shard_model(self.reference, wrap_names, self.reshard_after_forward)
        # fp16 needs loss scaling against underflow; bf16 has fp32's range and does not
        self.scaler = torch.amp.GradScaler(self.device.type) if self.precision == "fp16" else None
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            self.params, lr=config.lr, weight_decay=config.weight_decay, betas=tuple(config.adam_betas)
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        self.train_examples = self.task.examples(config.train_split)
        self.spec = self.task.generation_spec()
        self.step = 0
        self.reward_errors = 0
        if config.resume:
            self._resume(config.resume)

    # ----------------------------------------------------------------------------------------- utilities
    @property
    def updates_per_step(self) -> int:
        return self.config.mini_batches if self.mode == "grpo" else 1

    def _lr_factor(self, update: int) -> float:
        c = self.config
        if c.warmup_steps and update < c.warmup_steps:
            return (update + 1) / c.warmup_steps
        if c.schedule == "cosine":
            total = max(1, c.steps * self.updates_per_step - c.warmup_steps)
            progress = min(1.0, (update - c.warmup_steps) / total)
            return 0.5 * (1 + math.cos(math.pi * progress))
        return 1.0

    def _autocast(self):
        """Mixed-precision autocast for forwards (a no-op in fp32)."""
        if self.autocast_dtype is None:
            return nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)

    @contextmanager
    def _full_params(self) -> Iterator[None]:
        """Under FSDP, gather every parameter for the block and keep it gathered through its forwards.

        Sampling and evaluation run a data-dependent number of forwards per process (rows stop at
        different steps); with sharded layers each forward would be a collective and the processes
        would wait on each other forever. Gathered once here, the forwards need no communication.
        """
        if not self.fsdp:
            yield
            return
        units = [m for m in self.model.modules() if hasattr(m, "unshard") and hasattr(m, "reshard")]
        for unit in units:
            unit.set_reshard_after_forward(False, recurse=False)
            unit.unshard()
        try:
            yield
        finally:
            for unit in units:
                unit.reshard()
                unit.set_reshard_after_forward(self.reshard_after_forward, recurse=False)

    def _backward(self, loss: torch.Tensor) -> None:
        """Backward of a loss already divided by the global token count (see `_sync_gradients`)."""
        if self.fsdp and self.world > 1:
            loss = loss * self.world  # FSDP averages gradients over processes; our losses need their sum
        if self.scaler is not None:
            loss = self.scaler.scale(loss)
        loss.backward()

    def _all_sum(self, values: list[float]) -> list[float]:
        tensor = torch.tensor(values, dtype=torch.float64, device=self.device)
        if self.world > 1:
            torch.distributed.all_reduce(tensor)
        return tensor.tolist()

    def _sync_gradients(self) -> None:
        """Sum gradients across processes (losses are already divided by the global token count)."""
        if self.world == 1:
            return
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        torch.distributed.all_reduce(flat)
        offset = 0
        for p, g in zip(self.params, grads):
            n = g.numel()
            p.grad = flat[offset : offset + n].view_as(p).clone()
            offset += n

    def _optimizer_step(self) -> float:
        if not self.fsdp:  # FSDP has already reduced the gradients in backward
            self._sync_gradients()
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        norm = _plain(torch.nn.utils.clip_grad_norm_(self.params, self.config.max_grad_norm))
        if self.scaler is not None:  # skips the update when fp16 gradients overflowed, and adapts the scale
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(norm)

    def _local_slice(self, items: list[Any]) -> list[Any]:
        share = len(items) // self.world
        return items[self.rank * share : (self.rank + 1) * share]

    def _sample_seeds(self, step: int, indices: list[int]) -> list[int]:
        return [(self.config.seed * 1_000_003 + step * 100_003 + i) % (2**62) for i in indices]

    # --------------------------------------------------------------------------------------------- reward
    def safe_reward(self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict]) -> list[float]:
        """Task reward with the documented fallback: a raising reward function gives every completion the
        task's worst reward (`Task.worst_reward`), a warning and a logged counter; NaN or a
        wrong count is a configuration error and stops the run with a clear message."""
        try:
            rewards = self.task.reward(prompts, completions, metadata)
        except Exception as err:  # noqa: BLE001 - a user reward function may raise anything
            self.reward_errors += 1
            worst = float(self.task.worst_reward)
            warnings.warn(f"reward function of task {self.config.task!r} raised {err!r}; "
                          f"using worst reward {worst} for this batch", stacklevel=2)
            return [worst] * len(completions)
        try:
            rewards = [float(r) for r in rewards]
        except (TypeError, ValueError) as err:
            raise RewardError(f"task {self.config.task!r} returned non-numeric rewards: {err}") from err
        if len(rewards) != len(completions):
            raise RewardError(f"task {self.config.task!r} returned {len(rewards)} rewards for {len(completions)} completions")
        bad = [i for i, r in enumerate(rewards) if not math.isfinite(r)]
        if bad:
            raise RewardError(f"task {self.config.task!r} returned non-finite rewards at positions {bad[:10]}")
        return rewards

    # ------------------------------------------------------------------------------------------------ SFT
    def _sft_step(self) -> dict[str, float]:
        c = self.config
        indices = self._local_slice(batch_indices(len(self.train_examples), c.batch_size, self.step, c.seed))
        examples = [self.train_examples[i] for i in indices]
        if any(not e.answer_ids for e in examples):
            raise ValueError(f"task {c.task!r} has training examples without answer_ids; SFT needs them")
        every = None if c.learn_forced else self.spec.interleave_every
        masks = [answer_loss_mask(e, every) for e in examples]
        n_tokens = self._all_sum([sum(int(m.sum()) for m in masks)])[0]
        pad = self.task.pad_token_id
        loss_total = 0.0
        for start in range(0, len(examples), c.micro_batch_size):
            micro = examples[start : start + c.micro_batch_size]
            ids, mask = left_pad([e.prompt_ids + e.answer_ids for e in micro], pad)
            loss_mask = torch.zeros_like(mask)
            for row, (e, answer_mask) in enumerate(zip(micro, masks[start : start + c.micro_batch_size])):
                loss_mask[row, ids.shape[1] - len(e.answer_ids) :] = answer_mask
            with self._autocast():
                loss = sft_loss_sum(self.model, ids.to(self.device), mask.to(self.device), loss_mask.to(self.device))
            self._backward(loss / n_tokens)
            loss_total += float(loss.detach())
        grad_norm = self._optimizer_step()
        return {"loss": self._all_sum([loss_total])[0] / n_tokens, "grad_norm": grad_norm, "tokens": n_tokens}

    # ----------------------------------------------------------------------------------------------- GRPO
    def _generation_kwargs(self) -> dict[str, Any]:
        c, s = self.config, self.spec
        return dict(
            max_new_tokens=c.max_new_tokens or s.max_new_tokens,
            temperature=s.temperature if c.temperature is None else c.temperature,
            top_k=c.top_k if c.top_k is not None else s.top_k,
            top_p=c.top_p if c.top_p is not None else s.top_p,
            stop_token_ids=s.stop_token_ids,
            pad_token_id=self.task.pad_token_id,
            interleave_every=s.interleave_every,
            allowed_token_range=s.allowed_token_range,
        )

    def _grpo_step(self) -> dict[str, float]:
        c = self.config
        G = c.group_size
        global_idx = batch_indices(len(self.train_examples), c.batch_size, self.step, c.seed)
        local_idx = self._local_slice(global_idx)
        examples = [self.train_examples[i] for i in local_idx]
        gen = self._generation_kwargs()
        self.model.eval()
        with self._full_params(), self._autocast():
            out = sample(
                self.model, [e.prompt_ids for e in examples], group_size=G,
                seeds=self._sample_seeds(self.step, local_idx),
                forced=[e.forced for e in examples] if examples[0].forced is not None else None, **gen,
            )
        self.model.train()
        completions = out.completions()
        prompts_rep = [e.prompt_ids for e in examples for _ in range(G)]
        meta_rep = [e.metadata for e in examples for _ in range(G)]
        rewards = torch.tensor(self.safe_reward(prompts_rep, completions, meta_rep))
        advantages = group_advantages(rewards, G)
        tokens, mask, old_logp = out.tokens.to(self.device), out.loss_mask.to(self.device), out.logprobs.to(self.device)
        attn = out.attention_mask.to(self.device)
        temperature = gen["temperature"] or 1.0

        def logprobs_of(model: torch.nn.Module, rows: slice, prompt_slice: slice) -> torch.Tensor:
            """Log-probs of rows' completions, computed only up to the longest of them (zeros after)."""
            pid, pmask = left_pad([e.prompt_ids for e in examples[prompt_slice]], self.task.pad_token_id)
            width = int(out.lengths[rows].max())
            # a checkpointed training forward keeps no cache: score prompt + completion in one pass
            score = uncached_completion_logprobs if self.gradient_checkpointing and model.training \
                else completion_logprobs
            with self._autocast():
                logp = score(
                    model, pid.to(self.device), pmask.to(self.device), tokens[rows, :width], attn[rows, :width], G,
                    temperature=temperature, allowed_token_range=gen["allowed_token_range"],
                )
            return torch.nn.functional.pad(logp, (0, tokens.shape[1] - width))

        n_local = len(examples)
        micro = c.micro_batch_size
        ref_logp = None
        if c.kl_coef > 0:
            ref_parts = []
            with torch.no_grad():
                ctx = self.model.disable_adapter() if c.lora else nullcontext()
                ref_model = self.model if c.lora else self.reference
                with ctx:
                    for p0 in range(0, n_local, micro):
                        p1 = min(n_local, p0 + micro)
                        ref_parts.append(logprobs_of(ref_model, slice(p0 * G, p1 * G), slice(p0, p1)))
            ref_logp = torch.cat(ref_parts)

        per_mini = n_local // c.mini_batches
        stats = {"kl": 0.0, "clipped": 0.0, "tokens": 0.0, "loss": 0.0}
        grad_norm = 0.0
        for m in range(c.mini_batches):
            m0, m1 = m * per_mini, (m + 1) * per_mini
            n_tokens = self._all_sum([float(mask[m0 * G : m1 * G].sum())])[0]
            for p0 in range(m0, m1, micro):
                p1 = min(m1, p0 + micro)
                rows = slice(p0 * G, p1 * G)
                logp = logprobs_of(self.model, rows, slice(p0, p1))
                parts = grpo_token_loss(
                    logp, old_logp[rows], advantages[rows].to(self.device), mask[rows],
                    ref_logprobs=None if ref_logp is None else ref_logp[rows],
                    clip_eps=c.clip_eps, dual_clip=c.dual_clip, kl_coef=c.kl_coef,
                )
                self._backward(parts.loss_sum / max(n_tokens, 1.0))
                stats["kl"] += parts.kl_sum
                stats["clipped"] += parts.clipped_tokens
                stats["tokens"] += parts.tokens
                stats["loss"] += float(parts.loss_sum.detach())
            grad_norm = self._optimizer_step()
        totals = self._all_sum([float(rewards.sum()), float(rewards.numel()), stats["kl"], stats["clipped"],
                                stats["tokens"], stats["loss"], float(self.reward_errors)])
        return {
            "reward": totals[0] / totals[1],
            "kl": totals[2] / max(totals[4], 1),
            "clip_frac": totals[3] / max(totals[4], 1),
            "loss": totals[5] / max(totals[4], 1),
            "response_tokens": totals[4] / totals[1],
            "reward_errors": totals[6],
            "grad_norm": grad_norm,
        }

    # ----------------------------------------------------------------------------------------- evaluation
    @torch.no_grad()
    def evaluate(self, split: str | None = None, n_examples: int | None = None) -> float:
        """Mean reward of greedy answers on the first n examples of a split (shared across processes)."""
        c = self.config
        examples = self.task.examples(split or c.eval_split)[: n_examples or c.eval_examples]
        share = math.ceil(len(examples) / self.world)
        mine = examples[self.rank * share : (self.rank + 1) * share]
        total = 0.0
        was_training = self.model.training
        self.model.eval()
        gen = dict(self._generation_kwargs(), temperature=0.0)
        with self._full_params():
            for start in range(0, len(mine), 4 * c.micro_batch_size):
                chunk = mine[start : start + 4 * c.micro_batch_size]
                with self._autocast():
                    out = sample(self.model, [e.prompt_ids for e in chunk],
                                 forced=[e.forced for e in chunk] if chunk[0].forced is not None else None, **gen)
                total += sum(self.safe_reward([e.prompt_ids for e in chunk], out.completions(),
                                              [e.metadata for e in chunk]))
        self.model.train(was_training)
        summed = self._all_sum([total, float(len(mine))])
        return summed[0] / max(summed[1], 1.0)

    # ---------------------------------------------------------------------------------------- checkpoints
    def _checkpoint_dir(self, step: int) -> Path:
        return self.output_dir / "checkpoints" / f"step-{step:06d}"

    def _full_state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """(model weights, optimizer state), whole and on the CPU. Under FSDP a collective: every process
        calls it and only rank 0 receives the values (the optimizer state is then keyed by parameter name)."""
        if not self.fsdp:
            weights = {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}
            return weights, self.optimizer.state_dict()
        from torch.distributed.checkpoint.state_dict import (
            StateDictOptions,
            get_model_state_dict,
            get_optimizer_state_dict,
        )

        options = StateDictOptions(full_state_dict=True, cpu_offload=True)
        weights = get_model_state_dict(self.model, options=options)
        return ({k: v.contiguous() for k, v in weights.items()},
                get_optimizer_state_dict(self.model, self.optimizer, options=options))

    def save_state(self) -> Path | None:
        """Write a resumable checkpoint atomically (a killed run never leaves a half-written one)."""
        final = self._checkpoint_dir(self.step)
        weights, optimizer_state = self._full_state()
        if self.rank == 0:
            tmp = final.with_name(final.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            save_file(weights, str(tmp / "model_state.safetensors"))
            extra = {"grad_scaler": self.scaler.state_dict()} if self.scaler is not None else {}
            torch.save({"optimizer": optimizer_state, "scheduler": self.scheduler.state_dict(),
                        "step": self.step, "reward_errors": self.reward_errors, "fsdp": self.fsdp,
                        "torch_rng": torch.get_rng_state(), **extra}, tmp / "trainer_state.pt")
            (tmp / "run.json").write_text(json.dumps({"mode": self.mode, "step": self.step}) + "\n")
            shutil.rmtree(final, ignore_errors=True)
            os.replace(tmp, final)
        if self.world > 1:
            torch.distributed.barrier()
        return final

    def _check_output_dir(self) -> None:
        """Fail before training, not at the first checkpoint hours later, if output_dir cannot be written."""
        try:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            probe = self.output_dir / f".write-test-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
        except OSError as err:
            raise ConfigError(f"output_dir {self.output_dir} is not writable: {err}") from err

    def _check_free_space(self) -> None:
        """Fail before training if output_dir's disk cannot hold one checkpoint: weights, AdamW's two moments
        and the final model (a full disk would otherwise surface as a failed save at the first checkpoint)."""
        weight_bytes = sum(p.numel() * p.element_size() for p in self.model.parameters())
        needed = 4 * weight_bytes
        free = shutil.disk_usage(self.output_dir).free
        if free < needed:
            raise ConfigError(f"output_dir {self.output_dir} has {free / 2**20:.1f} MiB free; a checkpoint of this "
                              f"model needs about {needed / 2**20:.1f} MiB (weights + optimizer state + final model)")

    @staticmethod
    def _read_state(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """Both files of a resumable checkpoint, read fully before anything is applied to the live run."""
        if not (path / "model_state.safetensors").exists() or not (path / "trainer_state.pt").exists():
            raise CheckpointError(f"not a resumable checkpoint (model_state.safetensors + trainer_state.pt): {path}")
        try:
            return load_file(str(path / "model_state.safetensors")), torch.load(path / "trainer_state.pt", weights_only=True)
        except Exception as err:  # noqa: BLE001 - safetensors/torch raise many types for corrupt files
            raise CheckpointError(f"corrupt checkpoint {path}: {err}") from err

    def _resume(self, resume: str) -> None:
        """Load a checkpoint path, or with "auto" the newest complete one in output_dir: a newest one left
        incomplete or corrupt by a crash (e.g. on a copy or a full disk) is skipped with a warning."""
        if resume == "auto":
            found = sorted((p for p in (self.output_dir / "checkpoints").glob("step-*") if not p.name.endswith(".tmp")),
                           reverse=True)
            for path in found:
                try:
                    weights, state = self._read_state(path)
                    break
                except CheckpointError as err:
                    warnings.warn(f"resume=auto skips {err}", stacklevel=2)
            else:
                return  # nothing complete to resume: fresh start
        else:
            path = Path(resume)
            weights, state = self._read_state(path)
        if bool(state.get("fsdp", False)) != self.fsdp:
            raise CheckpointError(f"{path} was written with fsdp={bool(state.get('fsdp', False))}; "
                                  f"resume it with the same setting (this run: fsdp={self.fsdp})")
        if self.fsdp:
            from torch.distributed.checkpoint.state_dict import (
                StateDictOptions,
                set_model_state_dict,
                set_optimizer_state_dict,
            )

            options = StateDictOptions(full_state_dict=True)
            set_model_state_dict(self.model, weights, options=options)
            set_optimizer_state_dict(self.model, self.optimizer, state["optimizer"], options=options)
        else:
            self.model.load_state_dict(weights)
            self.optimizer.load_state_dict(state["optimizer"])
        if self.scaler is not None and "grad_scaler" in state:
            self.scaler.load_state_dict(state["grad_scaler"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = int(state["step"])
        self.reward_errors = int(state.get("reward_errors", 0))
        torch.set_rng_state(state["torch_rng"])

    def save_final(self, extra_meta: dict[str, Any] | None = None) -> Path:
        path = self.output_dir / "final"
        model = self.model
        if self.fsdp:  # a plain, whole copy of the sharded model for the checkpoint directory
            weights, _ = self._full_state()
            if self.rank == 0:
                from transformers import AutoModelForCausalLM

                model = AutoModelForCausalLM.from_config(self.model.config, dtype=torch.float32)
                model.load_state_dict(weights)
                model.generation_config = self.model.generation_config
        if self.rank == 0:
            meta = dict(self.base_meta)
            meta.update({
                "task": self.config.task, "task_args": self.config.task_args, "stage": self.mode,
                "steps": self.step, "command": self.command,
                "config": {k: getattr(self.config, k) for k in self.config.field_names},
            })
            meta.update(self.task.checkpoint_meta())
            meta.update(extra_meta or {})
            save_checkpoint(path, model, self.tokenizer, meta)
        if self.world > 1:
            torch.distributed.barrier()
        return path

    # ---------------------------------------------------------------------------------------------- loop
    def run(self) -> dict[str, Any]:
        """Train until `steps`; returns a summary (initial/final eval reward, wall time, history)."""
        from tqdm.auto import tqdm

        c = self.config
        is_main = self.rank == 0
        writer = None
        if is_main:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            if c.tensorboard:
                try:
                    from torch.utils.tensorboard import SummaryWriter
                except ImportError as err:
                    raise ConfigError("tensorboard=true needs the tensorboard package: "
                                      "pip install 'rlvr-sim[tensorboard]'") from err
                writer = SummaryWriter(str(self.output_dir / "tensorboard"))
        log_path = self.output_dir / "metrics.jsonl"
        start_time = time.time()
        initial_eval = self.evaluate() if c.eval_examples else None
        history: list[dict[str, Any]] = []
        bar = tqdm(total=c.steps, initial=self.step, disable=not (is_main and c.progress), desc=self.mode)
        while self.step < c.steps:
            t0 = time.time()
            metrics = self._grpo_step() if self.mode == "grpo" else self._sft_step()
            self.step += 1
            metrics.update(step=self.step, lr=self.scheduler.get_last_lr()[0], seconds=time.time() - t0)
            if c.eval_every and self.step % c.eval_every == 0 and self.step < c.steps:
                metrics["eval_reward"] = self.evaluate()
            if c.save_every and self.step % c.save_every == 0 and self.step < c.steps:
                self.save_state()
            history.append(metrics)
            if is_main:
                with log_path.open("a") as f:
                    f.write(json.dumps(metrics) + "\n")
                if writer is not None:
                    for k, v in metrics.items():
                        writer.add_scalar(f"{self.mode}/{k}", v, self.step)
                shown = {k: f"{metrics[k]:.3g}" for k in ("reward", "kl", "loss", "eval_reward") if k in metrics}
                bar.set_postfix(shown)
            bar.update(1)
        bar.close()
        final_eval = self.evaluate() if c.eval_examples else None
        wall = time.time() - start_time
        summary = {"initial_eval_reward": initial_eval, "final_eval_reward": final_eval,
                   "wall_seconds": wall, "steps": self.step, "reward_errors": self.reward_errors}
        self.save_state()
        self.save_final({"wall_seconds": wall, "final_eval_reward": final_eval})
        if is_main:
            with log_path.open("a") as f:
                f.write(json.dumps({"summary": summary}) + "\n")
            if writer is not None:
                writer.close()
        summary["history"] = history
        return summary


def run_training(mode: str, config: RunConfig, command: str | None = None) -> dict[str, Any]:
    """Build a Trainer and run it (the training scripts' entry)."""
    return Trainer(config, mode, command=command).run()


__all__ = ["Trainer", "RewardError", "batch_indices", "run_training"]
