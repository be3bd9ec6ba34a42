"""The one training loop: SFT (likelihood of answer tokens) and GRPO (RLVR-World, Wu et al. 2025), for any task.

The loop is modality-blind: it sees token ids, a `GenerationSpec` and `Task.reward`. What one step does
is in `rlvr_sim.rl.sft` and `rlvr_sim.rl.grpo`; this module builds what they work on (task, model,
reference, optimizer), runs the steps with evaluation, checkpoints and logging, and owns the update
mechanics they share (backward, optimizer step, the reward fallback). Processes and precision are
`rlvr_sim.rl.distributed`; saving and resuming are `rlvr_sim.rl.checkpointing`.

Multi-process runs (torchrun, `accelerate launch`) split every global batch across processes; losses are
normalised by the global token count and gradients are summed across processes, so N processes compute
exactly the update of one process with the same global batch. All randomness derives from (seed, step,
example index), so a run resumed from a checkpoint continues exactly as the uninterrupted run.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rlvr_sim.config import ConfigError, RunConfig
from rlvr_sim.models.lm import apply_lora, build_model, grow_depth, load_model
from rlvr_sim.rl import checkpointing
from rlvr_sim.rl.distributed import Processes, full_value
from rlvr_sim.rl.grpo import grpo_step
from rlvr_sim.rl.sampler import sample
from rlvr_sim.rl.sft import sft_step
from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.base import Task

STEPS: dict[str, Callable[[Trainer], dict[str, float]]] = {"sft": sft_step, "grpo": grpo_step}


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


def build_task_and_model(config: RunConfig) -> tuple[Task, torch.nn.Module, dict[str, Any]]:
    """(task, model, base checkpoint metadata): the model loaded from `model.name_or_path` (deepened by
    `grow_layers`) with its tokenizer handed to the task, or a fresh `model.preset` sized to the task's
    vocabulary."""
    model_cfg = dict(config.model)
    if model_cfg.get("name_or_path"):
        model, tokenizer, base_meta = load_model(model_cfg["name_or_path"])
        if model_cfg.get("grow_layers"):  # more capacity, same function at step 0
            model = grow_depth(model, model_cfg["grow_layers"])
        task = make_task(config.task, tokenizer=tokenizer, **config.task_args)
        check_codec(task, base_meta, model_cfg["name_or_path"])
        return task, model, base_meta
    task = make_task(config.task, tokenizer=None, **config.task_args)
    preset = model_cfg.pop("preset", "tiny-5m")
    model_cfg.pop("name_or_path", None)
    return task, build_model(preset, vocab_size=task.vocab_size, **model_cfg), {}


def check_codec(task: Task, base_meta: dict[str, Any], source: str) -> None:
    """A video checkpoint's token layout must be the task's: the same ids meaning other things (a coordinate vs
    its change, other change-coded slots) would train on nonsense without a single error."""
    saved, codec = base_meta.get("video_codec"), getattr(task, "codec", None)
    if saved is None or codec is None:
        return
    from dataclasses import asdict

    ours = asdict(codec)

    def unset(value: Any) -> Any:  # an absent field, None, False and [] all mean "not used"; 0 is a value
        return None if value is None or value is False or value == [] else value

    differ = sorted(k for k in set(saved) | set(ours) if unset(saved.get(k)) != unset(ours.get(k)))
    if differ:
        raise ValueError(f"{source} was trained with another token layout than this task builds: "
                         + "; ".join(f"{k}: checkpoint {saved.get(k)!r}, task {ours.get(k)!r}" for k in differ)
                         + " (set task_args.layout as the checkpoint was trained"
                         + ("; on other data the 'mixed' layout's still points may differ: pin them with "
                            f"task_args.delta_slots: {saved.get('delta_slots')}" if "delta_slots" in differ and saved.get("delta_slots") else "")
                         + (f"; pin the object frame's point with task_args.frame_point: {saved.get('frame_point')}"
                            if "frame_point" in differ and saved.get("frame_point") is not None else "")
                         + ")")


def enable_gradient_checkpointing(model: torch.nn.Module) -> None:
    """Recompute each decoder layer in the backward pass. Non-reentrant: works with frozen inputs (LoRA)
    and with FSDP2's hooks outside the checkpoint; transformers >= 5.2x renamed the switch (the old name
    warns)."""
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


class Trainer:
    """Builds task, model, optimizer and reference from a RunConfig; `run()` trains SFT or GRPO."""

    def __init__(self, config: RunConfig, mode: str, command: str | None = None) -> None:
        if mode not in STEPS:
            raise ValueError(f"mode must be sft or grpo, got {mode!r}")
        self.config, self.mode = config, mode
        self.command = command or " ".join(sys.argv)
        self.processes = Processes.launch(config)
        torch.manual_seed(config.seed)
        self.output_dir = Path(config.output_dir)
        if self.processes.is_main:
            checkpointing.check_output_dir(self.output_dir)
        self.task, model, self.base_meta = build_task_and_model(config)
        self.tokenizer = self.task.tokenizer
        self.gradient_checkpointing = config.gradient_checkpointing or self.processes.fsdp_checkpointing
        if self.gradient_checkpointing:
            enable_gradient_checkpointing(model)
        if config.lora:
            model = apply_lora(model, config.lora)
        self.model = model.to(self.device)
        self.model.train()
        # before the GRPO reference is copied, so policy and reference start from the same constrained table
        self.ordinal_groups = self._ordinal_groups() if config.ordinal_embeddings else []
        if self.ordinal_groups:
            from rlvr_sim.models.ordinal import parametrise_ordinal

            parametrise_ordinal(self.model, self.ordinal_groups)
        if self.processes.is_main:
            checkpointing.check_free_space(self.output_dir, self.model)
        self.reference = None  # with LoRA the reference is the base model: the adapter disabled
        if mode == "grpo" and config.kl_coef > 0 and not config.lora:
            self.reference = copy.deepcopy(self.model).eval().requires_grad_(False)
        for model_copy in (self.model, self.reference):
            if model_copy is not None:
                self.processes.shard(model_copy)
        # fp16 needs loss scaling against underflow; bf16 has fp32's range and does not
        self.scaler = torch.amp.GradScaler(self.device.type) if self.processes.precision == "fp16" else None
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
            checkpointing.resume(self, config.resume)

    @property
    def device(self) -> torch.device:
        return self.processes.device

    # -------------------------------------------------------------------------- what the steps build on
    def batch_indices(self) -> list[int]:
        """Global example indices of the current step (every process computes the same list)."""
        return batch_indices(len(self.train_examples), self.config.batch_size, self.step, self.config.seed)

    def sample_seeds(self, indices: list[int]) -> list[int]:
        """Per-prompt sampling seeds of the current step, from (run seed, step, global example index)."""
        return [(self.config.seed * 1_000_003 + self.step * 100_003 + i) % (2**62) for i in indices]

    def generation_kwargs(self) -> dict[str, Any]:
        """`sample` settings: the task's generation spec, with the run's overrides."""
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

    def backward(self, loss: torch.Tensor) -> None:
        """Backward of a loss already divided by the global token count (gradients are summed later)."""
        loss = self.processes.loss_for_backward(loss)
        if self.scaler is not None:
            loss = self.scaler.scale(loss)
        loss.backward()

    def optimizer_step(self) -> float:
        """Sum gradients over processes, clip them, step AdamW and the schedule; returns the gradient norm."""
        self.processes.sync_gradients(self.params)
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        norm = full_value(torch.nn.utils.clip_grad_norm_(self.params, self.config.max_grad_norm))
        if self.scaler is not None:  # skips the update when fp16 gradients overflowed, and adapts the scale
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(norm)

    def _ordinal_groups(self) -> list:
        """The task's ordered token bins, if this run can constrain them (`parametrise_ordinal` checks them against
        the vocabulary)."""
        if not hasattr(self.task, "ordinal_groups"):
            raise ValueError(f"ordinal_embeddings: task {self.config.task!r} declares no ordered token bins")
        if self.config.lora or self.processes.fsdp:
            raise ValueError("ordinal_embeddings constrains the full embedding table: not with LoRA (frozen) or FSDP "
                             "(sharded); train without them")
        return self.task.ordinal_groups()

    def _lr_factor(self, update: int) -> float:
        c = self.config
        if c.warmup_steps and update < c.warmup_steps:
            return (update + 1) / c.warmup_steps
        if c.schedule == "cosine":
            updates_per_step = c.mini_batches if self.mode == "grpo" else 1
            total = max(1, c.steps * updates_per_step - c.warmup_steps)
            progress = min(1.0, (update - c.warmup_steps) / total)
            return 0.5 * (1 + math.cos(math.pi * progress))
        return 1.0

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

    # ------------------------------------------------------------------------------------- the loop
    def train_step(self) -> dict[str, float]:
        """One SFT or GRPO step on the next global batch (`rlvr_sim.rl.sft`, `rlvr_sim.rl.grpo`)."""
        return STEPS[self.mode](self)

    @torch.no_grad()
    def evaluate(self, split: str | None = None, n_examples: int | None = None) -> float:
        """Mean reward of greedy answers on the first n examples of a split (shared across processes)."""
        c, processes = self.config, self.processes
        examples = self.task.examples(split or c.eval_split)[: n_examples or c.eval_examples]
        share = math.ceil(len(examples) / processes.world)
        mine = examples[processes.rank * share : (processes.rank + 1) * share]
        total = 0.0
        was_training = self.model.training
        self.model.eval()
        gen = dict(self.generation_kwargs(), temperature=0.0)
        with processes.full_params(self.model):
            for start in range(0, len(mine), 4 * c.micro_batch_size):
                chunk = mine[start : start + 4 * c.micro_batch_size]
                with processes.autocast():
                    out = sample(self.model, [e.prompt_ids for e in chunk],
                                 forced=[e.forced for e in chunk] if chunk[0].forced is not None else None, **gen)
                total += sum(self.safe_reward([e.prompt_ids for e in chunk], out.completions(),
                                              [e.metadata for e in chunk]))
        self.model.train(was_training)
        summed = processes.all_sum([total, float(len(mine))])
        return summed[0] / max(summed[1], 1.0)

    def save_state(self) -> Path:
        """A resumable checkpoint of the current step (`rlvr_sim.rl.checkpointing`)."""
        return checkpointing.save_resumable(self)

    def save_final(self, extra_meta: dict[str, Any] | None = None) -> Path:
        """The trained model as `output_dir/final` (`rlvr_sim.rl.checkpointing`)."""
        return checkpointing.save_final(self, extra_meta)

    def run(self) -> dict[str, Any]:
        """Train until `steps`; returns a summary (initial/final eval reward, wall time, history)."""
        c = self.config
        log = RunLog(self.output_dir, self.mode, c, self.step, enabled=self.processes.is_main)
        start_time = time.time()
        initial_eval = self.evaluate() if c.eval_examples else None
        history: list[dict[str, Any]] = []
        while self.step < c.steps:
            t0 = time.time()
            metrics = self.train_step()
            self.step += 1
            metrics.update(step=self.step, lr=self.scheduler.get_last_lr()[0], seconds=time.time() - t0)
            if c.eval_every and self.step % c.eval_every == 0 and self.step < c.steps:
                metrics["eval_reward"] = self.evaluate()
            if c.save_every and self.step % c.save_every == 0 and self.step < c.steps:
                self.save_state()
            history.append(metrics)
            log.step(metrics)
        final_eval = self.evaluate() if c.eval_examples else None
        wall = time.time() - start_time
        summary = {"initial_eval_reward": initial_eval, "final_eval_reward": final_eval,
                   "wall_seconds": wall, "steps": self.step, "reward_errors": self.reward_errors}
        self.save_state()
        self.save_final({"wall_seconds": wall, "final_eval_reward": final_eval})
        log.close(summary)
        summary["history"] = history
        return summary


class RunLog:
    """Where a run's metrics go on the main process: `metrics.jsonl` (one line per step, then the summary),
    TensorBoard when asked for, and the progress bar (shown on every process's count, drawn on rank 0)."""

    def __init__(self, output_dir: Path, mode: str, config: RunConfig, first_step: int, enabled: bool) -> None:
        from tqdm.auto import tqdm

        self.path, self.mode, self.enabled = output_dir / "metrics.jsonl", mode, enabled
        self.writer = None
        if enabled:
            output_dir.mkdir(parents=True, exist_ok=True)
            if config.tensorboard:
                try:
                    from torch.utils.tensorboard import SummaryWriter
                except ImportError as err:
                    raise ConfigError("tensorboard=true needs the tensorboard package: "
                                      "pip install 'rlvr-sim[tensorboard]'") from err
                self.writer = SummaryWriter(str(output_dir / "tensorboard"))
        self.bar = tqdm(total=config.steps, initial=first_step, disable=not (enabled and config.progress), desc=mode)

    def step(self, metrics: dict[str, Any]) -> None:
        if self.enabled:
            with self.path.open("a") as f:
                f.write(json.dumps(metrics) + "\n")
            if self.writer is not None:
                for k, v in metrics.items():
                    self.writer.add_scalar(f"{self.mode}/{k}", v, metrics["step"])
            shown = {k: f"{metrics[k]:.3g}" for k in ("reward", "kl", "loss", "eval_reward") if k in metrics}
            self.bar.set_postfix(shown)
        self.bar.update(1)

    def close(self, summary: dict[str, Any]) -> None:
        self.bar.close()
        if self.enabled:
            with self.path.open("a") as f:
                f.write(json.dumps({"summary": summary}) + "\n")
            if self.writer is not None:
                self.writer.close()


def run_training(mode: str, config: RunConfig, command: str | None = None) -> dict[str, Any]:
    """Build a Trainer and run it (the training scripts' entry)."""
    return Trainer(config, mode, command=command).run()


__all__ = ["RewardError", "RunLog", "STEPS", "Trainer", "batch_indices", "build_task_and_model", "run_training"]
