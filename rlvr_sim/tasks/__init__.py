"""Task registry: `--task NAME` in the training scripts resolves here, lazily (no modality is imported
until asked for)."""

from __future__ import annotations

import importlib
from typing import Any

from rlvr_sim.tasks.base import Example, GenerationSpec, Task

TASKS: dict[str, str] = {
    "addition": "rlvr_sim.tasks.addition:AdditionTask",
    "textgame": "rlvr_sim.tasks.textgame:TextGameTask",
    "web": "rlvr_sim.tasks.web:WebTask",
    "pusht": "rlvr_sim.tasks.video:VideoTask",
}


def make_task(name: str, tokenizer: Any = None, **kwargs: Any) -> Task:
    """Build the task registered as `name`, or a user task given as "package.module:ClassName".

    `tokenizer` is the model's (None: the task's default).
    """
    if name not in TASKS and ":" not in name:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))} (or module:Class)")
    module_name, cls_name = TASKS.get(name, name).split(":", 1)
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot load task {name!r} ({module_name}:{cls_name}): {err}") from err
    return cls(tokenizer=tokenizer, **kwargs)


__all__ = ["Example", "GenerationSpec", "Task", "TASKS", "make_task"]
