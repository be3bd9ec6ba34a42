"""The processes of a training run and what they share: launch, precision, FSDP, reductions.

One process or many (torchrun, `accelerate launch`), the trainer sees the same `Processes`: it splits
every global batch into this process's share (`local_slice`), sums scalars and gradients across
processes (`all_sum`, `sync_gradients`), and runs forwards under the run's autocast. With FSDP (PyTorch's
`fully_shard`, one unit per decoder layer; docs/gpu.md) FSDP reduces the gradients itself, and
`full_params` gathers the parameters for sampling, whose forwards differ in number between processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch

from rlvr_sim.config import ConfigError, RunConfig

_TRUE = ("1", "true", "yes")


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
    return os.environ.get("ACCELERATE_USE_FSDP", "false").lower() in _TRUE


def fsdp_settings() -> tuple[list[str], bool, bool]:
    """(layer class names to shard, reshard_after_forward, activation checkpointing) from the accelerate
    FSDP config the launcher exported (FSDP_* variables); defaults when launched without one."""
    if os.environ.get("ACCELERATE_USE_FSDP", "false").lower() not in _TRUE:
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


def full_value(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor's full value (a collective: every process must call it), or the tensor itself."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


@dataclass
class Processes:
    """This process's place in the run (rank, world size, device) and the run's precision and sharding."""

    rank: int
    world: int
    device: torch.device
    precision: str  # "no" | "bf16" | "fp16"
    fsdp: bool
    layer_names: list[str]  # decoder layer classes FSDP shards (empty: the model's `_no_split_modules`)
    reshard_after_forward: bool
    fsdp_checkpointing: bool  # the accelerate FSDP config asks for activation checkpointing

    @classmethod
    def launch(cls, config: RunConfig) -> Processes:
        """Join the process group the launcher set up (none for a single process) and check the settings
        that depend on it: FSDP's constraints, and a global batch that splits evenly over the processes."""
        from accelerate import PartialState

        launched_world = int(os.environ.get("WORLD_SIZE", "1"))
        # Under torchrun on a machine without CUDA, some accelerate versions only set up the (gloo) process
        # group when asked for CPU explicitly; without it every process would train alone as rank 0.
        state = PartialState(cpu=launched_world > 1 and not torch.cuda.is_available())
        if state.num_processes != launched_world:
            raise RuntimeError(f"launched with WORLD_SIZE={launched_world} but accelerate set up "
                               f"{state.num_processes} process(es); check the launcher's environment "
                               "(MASTER_ADDR/PORT, backend)")
        precision = resolve_mixed_precision(config.mixed_precision)
        fsdp = resolve_fsdp(config.fsdp)
        names, reshard, checkpointing = fsdp_settings() if fsdp else ([], True, False)
        if fsdp and (config.lora or precision == "fp16"):
            raise ConfigError("fsdp needs full fine-tuning (no lora) and mixed_precision bf16 or no")
        if fsdp and state.num_processes == 1 and not torch.distributed.is_initialized():
            # `fsdp=true` in a plain single process: a one-process group, so the same code path runs
            torch.distributed.init_process_group("nccl" if state.device.type == "cuda" else "gloo",
                                                 store=torch.distributed.HashStore(), rank=0, world_size=1)
        if config.batch_size % state.num_processes:
            raise ValueError(f"batch_size {config.batch_size} must be divisible by {state.num_processes} processes")
        return cls(state.process_index, state.num_processes, state.device, precision, fsdp, names, reshard,
                   checkpointing)

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that writes files and logs."""
        return self.rank == 0

    @property
    def autocast_dtype(self) -> torch.dtype | None:
        return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)

    def autocast(self) -> AbstractContextManager[Any]:
        """Mixed-precision autocast for forwards (a no-op in fp32)."""
        if self.autocast_dtype is None:
            return nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast_dtype)

    def shard(self, model: torch.nn.Module) -> None:
        """Shard a model in place under FSDP (nothing otherwise)."""
        if self.fsdp:
            shard_model(model, self.layer_names, self.reshard_after_forward)

    @contextmanager
    def full_params(self, model: torch.nn.Module) -> Iterator[None]:
        """Under FSDP, gather every parameter for the block and keep it gathered through its forwards.

        Sampling and evaluation run a data-dependent number of forwards per process (rows stop at
        different steps); with sharded layers each forward would be a collective and the processes
        would wait on each other forever. Gathered once here, the forwards need no communication.
        """
        if not self.fsdp:
            yield
            return
        units = [m for m in model.modules() if hasattr(m, "unshard") and hasattr(m, "reshard")]
        for unit in units:
            unit.set_reshard_after_forward(False, recurse=False)
            unit.unshard()
        try:
            yield
        finally:
            for unit in units:
                unit.reshard()
                unit.set_reshard_after_forward(self.reshard_after_forward, recurse=False)

    def local_slice(self, items: list[Any]) -> list[Any]:
        """This process's contiguous share of a global batch."""
        share = len(items) // self.world
        return items[self.rank * share : (self.rank + 1) * share]

    def all_sum(self, values: list[float]) -> list[float]:
        """Element-wise sums over processes (float64, so token counts stay exact)."""
        tensor = torch.tensor(values, dtype=torch.float64, device=self.device)
        if self.world > 1:
            torch.distributed.all_reduce(tensor)
        return tensor.tolist()

    def loss_for_backward(self, loss: torch.Tensor) -> torch.Tensor:
        """A loss divided by the global token count, as this process must backpropagate it: FSDP averages
        gradients over processes where our losses need their sum."""
        return loss * self.world if self.fsdp and self.world > 1 else loss

    def sync_gradients(self, params: list[torch.nn.Parameter]) -> None:
        """Sum gradients across processes in one flat all-reduce (FSDP has already reduced them)."""
        if self.world == 1 or self.fsdp:
            return
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        torch.distributed.all_reduce(flat)
        offset = 0
        for p, g in zip(params, grads):
            n = g.numel()
            p.grad = flat[offset : offset + n].view_as(p).clone()
            offset += n

    def barrier(self) -> None:
        """Wait for every process (a no-op alone)."""
        if self.world > 1:
            torch.distributed.barrier()


__all__ = ["Processes", "full_value", "fsdp_settings", "resolve_fsdp", "resolve_mixed_precision", "shard_model"]
