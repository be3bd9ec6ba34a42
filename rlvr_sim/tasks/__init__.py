"""Task registry: `--task NAME` in the training scripts resolves here, lazily (no modality is imported
until asked for)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from rlvr_sim.tasks.base import Example, GenerationSpec, Task

TASKS: dict[str, str] = {
    "addition": "rlvr_sim.tasks.addition:AdditionTask",
    "textgame": "rlvr_sim.tasks.textgame:TextGameTask",
    "web": "rlvr_sim.tasks.web:WebTask",
    "pusht": "rlvr_sim.tasks.video:VideoTask",
}


def task_members() -> list[str]:
    """Every member the `Task` protocol declares (what the training loop may use)."""
    names = set(getattr(Task, "__annotations__", {}))
    names |= {n for n, v in vars(Task).items() if callable(v) and not n.startswith("_")}
    return sorted(names)


def accepts_tokenizer(cls: type) -> bool:
    """Whether `cls(tokenizer=...)` is allowed: a `tokenizer` parameter or `**kwargs` in `__init__`."""
    parameters = inspect.signature(cls).parameters.values()
    return any(p.name == "tokenizer" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def make_task(name: str, tokenizer: Any = None, **task_args: Any) -> Task:
    """Build the task registered as `name`, or a user task given as "package.module:ClassName".

    The constructor contract (see `rlvr_sim.tasks.base`): the class is called with `task_args` as
    keywords, plus `tokenizer` (the model's; None: the task's default) when its `__init__` takes one.
    A user task missing a member of the `Task` protocol is refused here, before any training starts.
    """
    if name not in TASKS and ":" not in name:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))} (or module:Class)")
    module_name, cls_name = TASKS.get(name, name).split(":", 1)
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot load task {name!r} ({module_name}:{cls_name}): {err}") from err
    task = cls(tokenizer=tokenizer, **task_args) if accepts_tokenizer(cls) else cls(**task_args)
    missing = [] if name in TASKS else [m for m in task_members() if not hasattr(task, m)]
    if missing:  # registered tasks are held to the protocol by tests/test_contract.py
        raise ValueError(f"task {name!r} lacks {', '.join(missing)} of the Task protocol (rlvr_sim/tasks/base.py)")
    return task


__all__ = ["Example", "GenerationSpec", "Task", "TASKS", "accepts_tokenizer", "make_task", "task_members"]
