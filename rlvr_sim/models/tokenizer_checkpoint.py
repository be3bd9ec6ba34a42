"""A learned frame tokenizer's checkpoint folder, one format for every kind (FSQ grid, keypoint):
`tokenizer_config.json` (its config dataclass under "config", beside any provenance) and
`tokenizer.safetensors` (its weights)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from torch import nn

CONFIG_FILE, WEIGHTS_FILE = "tokenizer_config.json", "tokenizer.safetensors"

Model = TypeVar("Model", bound=nn.Module)


def save_tokenizer(model: nn.Module, directory: str | Path, extra: dict | None = None) -> None:
    """Write `model`'s weights and its `config` (a dataclass, + the provenance in `extra`) into `directory`."""
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(directory / WEIGHTS_FILE))
    (directory / CONFIG_FILE).write_text(json.dumps({"config": asdict(model.config), **(extra or {})}, indent=2))


def load_tokenizer(cls: type[Model], config_cls: type, directory: str | Path,
                   defaults: dict[str, Any] | None = None) -> Model:
    """`cls(config_cls(**stored config))` with the stored weights, in eval mode; `defaults` fill settings that
    older checkpoints did not write. A folder lacking either file is a FileNotFoundError naming it."""
    from safetensors.torch import load_file

    directory = Path(directory)
    for name in (CONFIG_FILE, WEIGHTS_FILE):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"tokenizer checkpoint {directory} lacks {name}")
    stored = json.loads((directory / CONFIG_FILE).read_text())["config"]
    model = cls(config_cls(**{**(defaults or {}), **stored}))
    model.load_state_dict(load_file(str(directory / WEIGHTS_FILE)))
    return model.eval()
