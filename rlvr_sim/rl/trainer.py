"""The one training loop: SFT (likelihood of answer tokens) and GRPO (RLVR-World, Wu et al. 2025), for any task.

The loop is modality-blind: it sees token ids, a `GenerationSpec` and `Task.reward`. Multi-process runs
(torchrun, `accelerate launch`) split every global batch across processes; losses are normalised by the
global token count and gradients are summed across processes, so N processes compute exactly the update
of one process with the same global batch. All randomness derives from (seed, step, example index),
so a run resumed from a checkpoint continues exactly as the uninterrupted run.
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
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from rlvr_sim.config import ConfigError, RunConfig
from rlvr_sim.models.lm import CheckpointError, apply_lora, build_model, load_model, save_checkpoint
from rlvr_sim.rl.losses import completion_logprobs, group_advantages, grpo_token_loss, sft_loss_sum
from rlvr_sim.rl.sampler import left_pad, sample
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
        self.task = make_task(config.task, tokenizer=tokenizer, **config.task_args)
        if not model_cfg.get("name_or_path"):
            preset = model_cfg.pop("preset", "tiny-5m")
            model_cfg.pop("name_or_path", None)
            model = build_model(preset, vocab_size=self.task.vocab_size, **model_cfg)
        self.tokenizer = self.task.tokenizer
        if config.lora:
            model = apply_lora(model, config.lora)
        self.model = model.to(self.device)
        self.model.train()
        self.reference = None
        if mode == "grpo" and config.kl_coef > 0 and not config.lora:
            self.reference = copy.deepcopy(self.model).eval().requires_grad_(False)
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
        self._sync_gradients()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.config.max_grad_norm)
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
            loss = sft_loss_sum(self.model, ids.to(self.device), mask.to(self.device), loss_mask.to(self.device))
            (loss / n_tokens).backward()
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
            logp = completion_logprobs(
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
                (parts.loss_sum / max(n_tokens, 1.0)).backward()
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
        for start in range(0, len(mine), 4 * c.micro_batch_size):
            chunk = mine[start : start + 4 * c.micro_batch_size]
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

    def save_state(self) -> Path | None:
        """Write a resumable checkpoint atomically (a killed run never leaves a half-written one)."""
        final = self._checkpoint_dir(self.step)
        if self.rank == 0:
            tmp = final.with_name(final.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            state = {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}
            save_file(state, str(tmp / "model_state.safetensors"))
            torch.save({"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                        "step": self.step, "reward_errors": self.reward_errors,
                        "torch_rng": torch.get_rng_state()}, tmp / "trainer_state.pt")
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
        self.model.load_state_dict(weights)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step = int(state["step"])
        self.reward_errors = int(state.get("reward_errors", 0))
        torch.set_rng_state(state["torch_rng"])

    def save_final(self, extra_meta: dict[str, Any] | None = None) -> Path:
        path = self.output_dir / "final"
        if self.rank == 0:
            meta = dict(self.base_meta)
            meta.update({
                "task": self.config.task, "task_args": self.config.task_args, "stage": self.mode,
                "steps": self.step, "command": self.command,
                "config": {k: getattr(self.config, k) for k in self.config.field_names},
            })
            meta.update(self.task.checkpoint_meta())
            meta.update(extra_meta or {})
            save_checkpoint(path, self.model, self.tokenizer, meta)
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
