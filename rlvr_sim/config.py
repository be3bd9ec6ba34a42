"""Run configuration: a YAML preset plus `key=value` overrides (dotted keys reach into dict fields)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A preset or override that cannot be used, with the reason."""


@dataclass
class RunConfig:
    """Everything an SFT or GRPO run needs. Field comments give the reason for each default."""

    task: str = "addition"  # a name registered in rlvr_sim.tasks.TASKS
    task_args: dict[str, Any] = field(default_factory=dict)  # passed to the task constructor
    # model: either `name_or_path` (HF id, HF directory or one of our checkpoints) or a fresh `preset`;
    # `grow_layers: N` with `name_or_path` deepens a Llama checkpoint to N layers, same function at step 0
    # (rlvr_sim.models.lm.grow_depth)
    model: dict[str, Any] = field(default_factory=lambda: {"preset": "tiny-5m"})
    lora: dict[str, Any] | None = None  # e.g. {rank: 32, alpha: 16}; the paper's language setting
    output_dir: str = "runs/default"
    seed: int = 0
    steps: int = 100  # optimizer steps (one batch of prompts = `mini_batches` optimizer steps for GRPO)
    lr: float = 1e-4
    weight_decay: float = 0.0
    warmup_steps: int = 0
    schedule: str = "constant"  # constant | cosine (after warmup)
    max_grad_norm: float = 1.0
    adam_betas: tuple[float, float] = (0.9, 0.999)
    batch_size: int = 32  # global prompts per batch (all processes together)
    micro_batch_size: int = 8  # prompts per forward/backward on one process (memory knob only)
    # SFT on answers with forced chunks (multi-step video: the true actions between frames): False keeps
    # them out of the loss, as sampling and GRPO do (they are inputs, not predictions); True also learns
    # to predict them (the policy's actions), as the embedded PushT base model was trained.
    learn_forced: bool = False
    # GRPO (the RLVR-World paper: G=5 language / 16 video, clip 0.2, k3 KL 1e-3, token-mean, one PPO epoch)
    group_size: int = 5
    mini_batches: int = 1  # optimizer updates per sampled batch (paper: 128 prompts / mini-batch 64 -> 2)
    clip_eps: float = 0.2
    dual_clip: float | None = None  # e.g. 3.0
    kl_coef: float = 1e-3
    temperature: float | None = None  # None: the task's generation spec (1.0 in the paper)
    top_k: int | None = None
    top_p: float | None = None
    max_new_tokens: int | None = None  # None: the task's generation spec
    # input embeddings of ordered token bins (a task's `ordinal_groups()`: PushT pose, displacement, action and
    # body-frame bins) linear in the bin's value, trained as each group's line (rlvr_sim.models.ordinal):
    # per-bin rows memorise a small data set's contacts, value-linear ones generalise (docs/planning.md)
    ordinal_embeddings: bool = False
    # bookkeeping
    eval_every: int = 0  # 0: only at start and end
    eval_examples: int = 64
    eval_split: str = "test"
    train_split: str = "train"  # e.g. "train_rl": RL on prompts the SFT run never saw (textgame --rl-states)
    save_every: int = 0  # 0: only the final checkpoint
    resume: str | None = None  # None | "auto" (latest checkpoint in output_dir) | a checkpoint path
    tensorboard: bool = False
    progress: bool = True
    # GPU path (docs/gpu.md). The defaults are the CPU behaviour: fp32, no recomputation, every process
    # holding the whole model.
    # "no" | "bf16" | "fp16": autocast of every forward (sampling, SFT, GRPO, reference), weights and optimizer
    # state stay fp32; fp16 adds a gradient scaler. None: what `accelerate launch --mixed_precision` or an
    # accelerate config file sets (ACCELERATE_MIXED_PRECISION), else "no". On this CPU bf16 is ~30x slower.
    mixed_precision: str | None = None
    # recompute each decoder layer in the backward pass: activation memory of one layer instead of all, for
    # ~30% more compute. GRPO then scores completions in one uncached forward per micro-batch.
    gradient_checkpointing: bool = False
    # shard parameters, gradients and optimizer state across processes (FSDP2, one unit per decoder layer).
    # None: on when launched with an accelerate FSDP config (ACCELERATE_USE_FSDP), e.g.
    # training/configs/accelerate/fsdp.yaml
    fsdp: bool | None = None

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self)]


# YAML's resolvers raise plain ValueErrors too (a date such as 2024-13-45 matches the timestamp pattern)
_YAML_ERRORS = (yaml.YAMLError, ValueError, OverflowError, RecursionError)


def _parse_value(text: str) -> Any:
    try:
        value = yaml.safe_load(text)
    except _YAML_ERRORS as err:
        raise ConfigError(f"cannot parse override value {text!r}: {err}") from err
    if isinstance(value, str):  # YAML 1.1 reads "3e-3" as a string; users mean the number
        try:
            return float(value)
        except ValueError:
            return value
    return value


def apply_overrides(settings: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `key=value` strings; `a.b=v` sets settings['a']['b'] (values parsed as YAML scalars)."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not of the form key=value")
        key, value = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(parts):
            raise ConfigError(f"override {item!r} has an empty key")
        target = settings
        for part in parts[:-1]:
            node = target.get(part)
            if node is None:
                node = target[part] = {}
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r}: {part!r} is not a mapping")
            target = node
        target[parts[-1]] = _parse_value(value)
    return settings


def load_config(preset: str | Path | None, overrides: list[str] | None = None, **defaults: Any) -> RunConfig:
    """Read a preset YAML (or none), apply overrides, and validate every key against RunConfig."""
    settings: dict[str, Any] = dict(defaults)
    if preset is not None:
        path = Path(preset)
        if not path.exists():
            raise ConfigError(f"preset not found: {path}")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except _YAML_ERRORS as err:  # UnicodeDecodeError is a ValueError
            raise ConfigError(f"malformed preset {path}: {err}") from err
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"preset {path} must be a mapping of settings, got {type(loaded).__name__}")
        settings.update(loaded)
    apply_overrides(settings, overrides or [])
    known = {f.name: f for f in dataclasses.fields(RunConfig)}
    unknown = sorted(set(settings) - set(known), key=str)  # a preset may hold non-text keys
    if unknown:
        raise ConfigError(f"unknown settings {unknown}; valid settings: {sorted(known)}")
    if settings.get("mixed_precision") is False:  # YAML 1.1 reads a bare `no` as false
        settings["mixed_precision"] = "no"
    if isinstance(settings.get("adam_betas"), list):
        settings["adam_betas"] = tuple(settings["adam_betas"])
    config = RunConfig(**settings)
    _validate(config)
    return config


MIXED_PRECISION = (None, "no", "bf16", "fp16")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _validate(c: RunConfig) -> None:
    """Checks run in order and lazily, so that e.g. the divisibility check only sees integers >= 1."""
    checks = [
        (lambda: isinstance(c.steps, int) and c.steps >= 1, "steps must be an integer >= 1"),
        (lambda: _number(c.lr) and c.lr > 0, "lr must be a positive number"),
        (lambda: isinstance(c.batch_size, int) and c.batch_size >= 1, "batch_size must be an integer >= 1"),
        (lambda: isinstance(c.micro_batch_size, int) and c.micro_batch_size >= 1, "micro_batch_size must be >= 1"),
        (lambda: isinstance(c.group_size, int) and c.group_size >= 1, "group_size must be an integer >= 1"),
        (lambda: isinstance(c.learn_forced, bool), "learn_forced must be true or false"),
        (lambda: isinstance(c.mini_batches, int) and c.mini_batches >= 1, "mini_batches must be >= 1"),
        (lambda: c.batch_size % c.mini_batches == 0, "batch_size must be divisible by mini_batches"),
        (lambda: _number(c.clip_eps) and 0 < c.clip_eps < 1, "clip_eps must be in (0, 1)"),
        (lambda: c.dual_clip is None or (_number(c.dual_clip) and c.dual_clip > 1), "dual_clip must be > 1 or null"),
        (lambda: _number(c.kl_coef) and c.kl_coef >= 0, "kl_coef must be >= 0"),
        (lambda: isinstance(c.adam_betas, tuple) and len(c.adam_betas) == 2 and all(map(_number, c.adam_betas)),
         "adam_betas must be two numbers"),
        (lambda: c.schedule in ("constant", "cosine"), "schedule must be constant or cosine"),
        (lambda: isinstance(c.model, dict) and ("preset" in c.model or "name_or_path" in c.model),
         "model needs a `preset` or a `name_or_path`"),
        (lambda: c.model.get("grow_layers") is None or (c.model.get("name_or_path") and isinstance(c.model["grow_layers"], int)
                                                  and not isinstance(c.model["grow_layers"], bool)),
         "model.grow_layers (an integer: the deeper model's layer count) needs model.name_or_path"),
        (lambda: isinstance(c.task_args, dict), "task_args must be a mapping"),
        (lambda: c.lora is None or isinstance(c.lora, dict), "lora must be a mapping or null"),
        (lambda: c.mixed_precision in MIXED_PRECISION, "mixed_precision must be no, bf16, fp16 or null"),
        (lambda: isinstance(c.gradient_checkpointing, bool), "gradient_checkpointing must be true or false"),
        (lambda: c.fsdp is None or isinstance(c.fsdp, bool), "fsdp must be true, false or null"),
        (lambda: not (c.fsdp and c.lora), "fsdp with lora is not supported; LoRA runs fit without sharding"),
        (lambda: not (c.fsdp and c.mixed_precision == "fp16"), "fsdp needs mixed_precision bf16 or no, not fp16"),
    ]
    for ok, message in checks:
        if not ok():
            raise ConfigError(message)
