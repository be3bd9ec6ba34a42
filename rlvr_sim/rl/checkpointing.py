"""Checkpoints of a training run: resumable states, the final model, and the checks made before training.

A resumable state is `output_dir/checkpoints/step-NNNNNN/`: `model_state.safetensors` (weights),
`trainer_state.pt` (optimizer, scheduler, step, reward-error count, torch RNG, fp16 gradient scaler) and
`run.json`. It is written to a `.tmp` sibling and renamed, so a killed run never leaves a half-written
one; `resume="auto"` takes the newest complete one and skips (with a warning) any a crash left corrupt.
Restored, a run continues exactly as the uninterrupted run would have, because every other random draw
derives from (seed, step, example index). The final model is `output_dir/final`, a checkpoint directory
(`rlvr_sim.models.lm.save_checkpoint`) any loader of the package reads.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from safetensors.torch import load_file, save_file

from rlvr_sim.config import ConfigError
from rlvr_sim.models.lm import CheckpointError, save_checkpoint

if TYPE_CHECKING:
    from rlvr_sim.rl.trainer import Trainer

MODEL_STATE, TRAINER_STATE = "model_state.safetensors", "trainer_state.pt"


def check_output_dir(output_dir: Path) -> None:
    """Fail before training, not at the first checkpoint hours later, if output_dir cannot be written."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        probe = output_dir / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise ConfigError(f"output_dir {output_dir} is not writable: {err}") from err


def check_free_space(output_dir: Path, model: torch.nn.Module) -> None:
    """Fail before training if output_dir's disk cannot hold one checkpoint: weights, AdamW's two moments
    and the final model (a full disk would otherwise surface as a failed save at the first checkpoint)."""
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    needed = 4 * weight_bytes
    free = shutil.disk_usage(output_dir).free
    if free < needed:
        raise ConfigError(f"output_dir {output_dir} has {free / 2**20:.1f} MiB free; a checkpoint of this "
                          f"model needs about {needed / 2**20:.1f} MiB (weights + optimizer state + final model)")


def full_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
               fsdp: bool) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(model weights, optimizer state), whole and on the CPU. Under FSDP a collective: every process
    calls it and only rank 0 receives the values (the optimizer state is then keyed by parameter name)."""
    if not fsdp:
        weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        return weights, optimizer.state_dict()
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
    )

    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    weights = get_model_state_dict(model, options=options)
    return ({k: v.contiguous() for k, v in weights.items()},
            get_optimizer_state_dict(model, optimizer, options=options))


def save_resumable(trainer: Trainer) -> Path:
    """Write the trainer's resumable state for its current step, atomically (every process calls it)."""
    final = trainer.output_dir / "checkpoints" / f"step-{trainer.step:06d}"
    weights, optimizer_state = full_state(trainer.model, trainer.optimizer, trainer.processes.fsdp)
    if trainer.processes.is_main:
        tmp = final.with_name(final.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_file(weights, str(tmp / MODEL_STATE))
        extra = {"grad_scaler": trainer.scaler.state_dict()} if trainer.scaler is not None else {}
        torch.save({"optimizer": optimizer_state, "scheduler": trainer.scheduler.state_dict(),
                    "step": trainer.step, "reward_errors": trainer.reward_errors, "fsdp": trainer.processes.fsdp,
                    "torch_rng": torch.get_rng_state(), **extra}, tmp / TRAINER_STATE)
        (tmp / "run.json").write_text(json.dumps({"mode": trainer.mode, "step": trainer.step}) + "\n")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    trainer.processes.barrier()
    return final


def read_resumable(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Both files of a resumable checkpoint, read fully before anything is applied to the live run."""
    if not (path / MODEL_STATE).exists() or not (path / TRAINER_STATE).exists():
        raise CheckpointError(f"not a resumable checkpoint ({MODEL_STATE} + {TRAINER_STATE}): {path}")
    try:
        return load_file(str(path / MODEL_STATE)), torch.load(path / TRAINER_STATE, weights_only=True)
    except Exception as err:  # noqa: BLE001 - safetensors/torch raise many types for corrupt files
        raise CheckpointError(f"corrupt checkpoint {path}: {err}") from err


def newest_resumable(output_dir: Path) -> tuple[Path, dict[str, torch.Tensor], dict[str, Any]] | None:
    """The newest complete resumable state under output_dir (None: none); newer ones a crash left
    incomplete or corrupt (e.g. on a copy or a full disk) are skipped with a warning."""
    found = sorted((p for p in (output_dir / "checkpoints").glob("step-*") if not p.name.endswith(".tmp")),
                   reverse=True)
    for path in found:
        try:
            return (path, *read_resumable(path))
        except CheckpointError as err:
            warnings.warn(f"resume=auto skips {err}", stacklevel=3)
    return None


def resume(trainer: Trainer, resume: str) -> None:
    """Restore a resumable state into the trainer: a checkpoint path, or with "auto" the newest complete
    one in its output_dir (a fresh start when there is none)."""
    if resume == "auto":
        found = newest_resumable(trainer.output_dir)
        if found is None:
            return
        path, weights, state = found
    else:
        path = Path(resume)
        weights, state = read_resumable(path)
    fsdp = trainer.processes.fsdp
    if bool(state.get("fsdp", False)) != fsdp:
        raise CheckpointError(f"{path} was written with fsdp={bool(state.get('fsdp', False))}; "
                              f"resume it with the same setting (this run: fsdp={fsdp})")
    if fsdp:
        from torch.distributed.checkpoint.state_dict import (
            StateDictOptions,
            set_model_state_dict,
            set_optimizer_state_dict,
        )

        options = StateDictOptions(full_state_dict=True)
        set_model_state_dict(trainer.model, weights, options=options)
        set_optimizer_state_dict(trainer.model, trainer.optimizer, state["optimizer"], options=options)
    else:
        mine, theirs = set(trainer.model.state_dict()), set(weights)
        if mine != theirs:  # e.g. written with ordinal_embeddings and resumed without, or the other way round
            parametrised = any(".parametrizations." in k for k in theirs ^ mine)
            raise CheckpointError(
                f"{path} holds other weights than this run's model ({len(theirs - mine)} unexpected, "
                f"{len(mine - theirs)} missing, e.g. {sorted(theirs ^ mine)[0]})"
                + ("; it was written with a different ordinal_embeddings setting (or before ordinal_embeddings "
                   "trained the lines' coefficients): resume with the setting it was written with" if parametrised else ""))
        trainer.model.load_state_dict(weights)
        trainer.optimizer.load_state_dict(state["optimizer"])
    if trainer.scaler is not None and "grad_scaler" in state:
        trainer.scaler.load_state_dict(state["grad_scaler"])
    trainer.scheduler.load_state_dict(state["scheduler"])
    trainer.step = int(state["step"])
    trainer.reward_errors = int(state.get("reward_errors", 0))
    torch.set_rng_state(state["torch_rng"])


def save_final(trainer: Trainer, extra_meta: dict[str, Any] | None = None) -> Path:
    """Write `output_dir/final`: the model (whole, even when sharded), its tokenizer and our metadata
    (the task, the settings, the command and the base checkpoint's provenance)."""
    path = trainer.output_dir / "final"
    model = trainer.model
    if trainer.processes.fsdp:  # a plain, whole copy of the sharded model for the checkpoint directory
        weights, _ = full_state(trainer.model, trainer.optimizer, fsdp=True)
        if trainer.processes.is_main:
            from transformers import AutoModelForCausalLM

            model = AutoModelForCausalLM.from_config(trainer.model.config, dtype=torch.float32)
            model.load_state_dict(weights)
            model.generation_config = trainer.model.generation_config
    elif getattr(trainer, "ordinal_groups", None):  # a parametrised embedding table: saved as the plain table
        from transformers import AutoModelForCausalLM

        from rlvr_sim.models.ordinal import plain_state_dict

        model = AutoModelForCausalLM.from_config(trainer.model.config, dtype=next(trainer.model.parameters()).dtype)
        model.load_state_dict(plain_state_dict(trainer.model))
        model.generation_config = trainer.model.generation_config
    if trainer.processes.is_main:
        config = trainer.config
        meta = dict(trainer.base_meta)
        meta.update({
            "task": config.task, "task_args": config.task_args, "stage": trainer.mode,
            "steps": trainer.step, "command": trainer.command,
            "config": {k: getattr(config, k) for k in config.field_names},
        })
        meta.update(trainer.task.checkpoint_meta())
        meta.update(extra_meta or {})
        save_checkpoint(path, model, trainer.tokenizer, meta)
    trainer.processes.barrier()
    return path


__all__ = ["check_free_space", "check_output_dir", "full_state", "newest_resumable", "read_resumable", "resume",
           "save_final", "save_resumable"]
