"""Causal language models: tiny Llama presets for CPU, loading any Hugging Face causal LM, LoRA, and
checkpoint directories (HF `save_pretrained` safetensors + tokenizer + our own `rlvr_sim.json`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import torch
import yaml
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

META_FILE = "rlvr_sim.json"

# Tiny Llama presets sized for a laptop CPU. Parameter counts exclude the embeddings, which scale with
# the task's vocabulary (a 2k-token BPE vocabulary adds ~1M at width 256).
PRESETS: dict[str, dict[str, int]] = {
    # ~3.2M non-embedding params: trains at a few thousand tokens/s on 2 CPU cores
    "tiny-5m": dict(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=4),
    # ~25M non-embedding params: about 5x slower than tiny-5m
    "small-30m": dict(hidden_size=512, intermediate_size=1376, num_hidden_layers=8, num_attention_heads=8),
    # the paper's 138M video transformer (12 layers, hidden 768, 12 heads): a GPU preset
    "paper-138m": dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12),
}


class CheckpointError(RuntimeError):
    """A checkpoint directory or model id that cannot be loaded, with the reason."""


def missing_checkpoint_hint(name_or_path: str | os.PathLike) -> str:
    """What writes a missing checkpoint, when a shipped preset's `output_dir` holds it ("" when none does).

    A fresh clone has no `runs/`: a GRPO preset that starts from an SFT run fails until that run is made,
    so the error names the command to run first instead of leaving the user to find the preset.
    """
    wanted = Path(name_or_path).as_posix().rstrip("/")
    configs = files("rlvr_sim.training") / "configs"
    if not isinstance(configs, Path) or not configs.is_dir():
        return ""
    for preset in sorted(configs.glob("*.yaml")):
        output_dir = str((yaml.safe_load(preset.read_text()) or {}).get("output_dir", "")).rstrip("/")
        if output_dir and (wanted == output_dir or wanted.startswith(output_dir + "/")):
            script = "grpo" if "grpo" in preset.stem else "sft"
            return (f"; it is written by `python training/{script}.py --preset training/configs/{preset.name}`"
                    " (output_dir: " + output_dir + "): run that first")
    return ""


@dataclass
class LoraSettings:
    """LoRA adapter settings (the paper uses rank 32 / alpha 16 for the language tasks)."""

    rank: int = 32
    alpha: int = 16
    dropout: float = 0.0
    targets: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])


def build_model(preset: str, vocab_size: int, max_positions: int = 1024, **overrides: Any) -> LlamaForCausalLM:
    """A freshly initialised Llama of a named preset; `overrides` set any LlamaConfig field."""
    if preset not in PRESETS:
        raise ValueError(f"unknown model preset {preset!r}; known presets: {', '.join(PRESETS)}")
    if vocab_size <= 0:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    settings: dict[str, Any] = dict(PRESETS[preset])
    settings.update(
        vocab_size=vocab_size,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
        attention_dropout=0.0,
    )
    settings.update(overrides)
    try:
        config = LlamaConfig(**settings)
    except TypeError as err:
        raise ValueError(f"bad model override for preset {preset!r}: {err}") from err
    return LlamaForCausalLM(config)


def grow_depth(model: LlamaForCausalLM, num_layers: int) -> LlamaForCausalLM:
    """A deeper copy of a Llama model that computes exactly the same function (function-preserving growth).

    Each new layer is a copy of the layer before it with its two output projections (attention `o_proj`,
    MLP `down_proj`, weights and any biases) set to zero, so it adds nothing to the residual stream until training moves it: the
    grown model starts where the trained one stopped and has more capacity to learn with. New layers are
    spread evenly among the old ones (4 -> 8 puts one after each)."""
    config = model.config
    old = config.num_hidden_layers
    if getattr(config, "model_type", None) != "llama":
        raise ValueError(f"grow_layers supports Llama models, got model_type {getattr(config, 'model_type', None)!r}")
    if not isinstance(num_layers, int) or num_layers <= old:
        raise ValueError(f"grow_layers must be an integer above the model's {old} layers, got {num_layers!r}")
    extra = num_layers - old
    per_layer = [extra // old + (i < extra % old) for i in range(old)]
    grown_config = LlamaConfig.from_dict({**config.to_dict(), "num_hidden_layers": num_layers})
    grown = LlamaForCausalLM(grown_config).to(next(model.parameters()).dtype)
    state = model.state_dict()
    new_state = {k: v for k, v in state.items() if not k.startswith("model.layers.")}
    position = 0
    for i in range(old):
        prefix = f"model.layers.{i}."
        layer = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
        for copy_index in range(1 + per_layer[i]):
            for name, value in layer.items():
                value = value.clone()
                if copy_index and name.startswith(("self_attn.o_proj.", "mlp.down_proj.")):
                    value.zero_()
                new_state[f"model.layers.{position}.{name}"] = value
            position += 1
    grown.load_state_dict(new_state)
    return grown


def apply_lora(model: torch.nn.Module, lora: LoraSettings | dict) -> torch.nn.Module:
    """Wrap `model` with a peft LoRA adapter; with LoRA the GRPO reference is the adapter-disabled base."""
    from peft import LoraConfig, get_peft_model

    if isinstance(lora, dict):
        unknown = set(lora) - set(LoraSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown LoRA settings {sorted(unknown)}; known: {list(LoraSettings.__dataclass_fields__)}")
        lora = LoraSettings(**lora)
    config = LoraConfig(
        r=lora.rank,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.targets),
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def read_meta(path: str | os.PathLike) -> dict[str, Any]:
    """Our metadata JSON of a checkpoint directory ({} when absent, e.g. a plain HF model)."""
    meta_path = Path(path) / META_FILE
    if not meta_path.exists():
        return {}
    try:
        return json.loads(meta_path.read_text())
    except json.JSONDecodeError as err:
        raise CheckpointError(f"corrupt checkpoint metadata {meta_path}: {err}") from err


def load_model(
    name_or_path: str | os.PathLike, lora: LoraSettings | dict | None = None, dtype: torch.dtype = torch.float32
) -> tuple[torch.nn.Module, Any, dict[str, Any]]:
    """Load any causal LM (HF id, HF directory, our checkpoint, or a peft adapter directory).

    Returns (model, tokenizer or None, our metadata). A `lora` argument adds a fresh adapter on top.
    """
    path = Path(name_or_path)
    local = path.exists()
    looks_like_path = str(name_or_path).startswith((".", "/", "~")) or str(name_or_path).count("/") > 1
    if not local and looks_like_path:
        raise CheckpointError(f"checkpoint not found: {name_or_path}{missing_checkpoint_hint(name_or_path)}")
    if local and not path.is_dir():
        raise CheckpointError(f"checkpoint must be a directory (save_pretrained layout), got file {path}")
    if local and not ((path / "config.json").exists() or (path / "adapter_config.json").exists()):
        raise CheckpointError(f"{path} is not a model directory: no config.json or adapter_config.json")
    meta = read_meta(path) if local else {}
    try:
        if local and (path / "adapter_config.json").exists():
            from peft import AutoPeftModelForCausalLM

            model = AutoPeftModelForCausalLM.from_pretrained(str(path), dtype=dtype)
        else:
            model = AutoModelForCausalLM.from_pretrained(str(name_or_path), dtype=dtype)
    except Exception as err:  # noqa: BLE001 - safetensors, json, torch and hub errors share no base class
        where = "local checkpoint" if local else "model id (offline machines can only load local directories)"
        raise CheckpointError(f"could not load {where} {name_or_path!r}: {err}") from err
    tokenizer = None
    if not local or any((path / f).exists() for f in ("tokenizer.json", "tokenizer_config.json")):
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
        except (OSError, ValueError) as err:
            if local:
                raise CheckpointError(f"corrupt tokenizer files in {path}: {err}") from err
    if lora is not None:
        model = apply_lora(model, lora)
    return model, tokenizer, meta


def save_checkpoint(
    path: str | os.PathLike, model: torch.nn.Module, tokenizer: Any = None, meta: dict[str, Any] | None = None,
    merge_lora: bool = True,
) -> Path:
    """Write a checkpoint directory: config.json + model.safetensors (+ tokenizer) + rlvr_sim.json.

    A LoRA model is merged into its base by default so the checkpoint loads as a plain causal LM
    (the live model is left unmerged).
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    to_save = model
    if merge_lora and hasattr(model, "merge_and_unload"):
        import copy

        to_save = copy.deepcopy(model).merge_and_unload()
    to_save.save_pretrained(str(path), safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(str(path))
    (path / META_FILE).write_text(json.dumps(meta or {}, indent=2, sort_keys=True, default=str) + "\n")
    return path
