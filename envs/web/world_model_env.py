"""`RLVRWorld-Web-v0`: a learned web world model served as a Gymnasium environment.

`LMWebWorldModel` wraps a causal LM checkpoint (ours or any HF causal LM with its tokenizer) and the web
task's codec: it predicts the item changes an action causes, as three-section text. `WebWorldModelEnv`
steps by applying the predicted changes to the current tree (`rlvr_sim.envs.web.tree.apply_changes`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from rlvr_sim.envs.web.actions import ActionParseError, parse_action
from rlvr_sim.envs.web.spaces import TextSpace
from rlvr_sim.envs.web.tasks import WEB_TASKS, get_task
from rlvr_sim.envs.web.tree import apply_changes, parse_changes

from rlvr_sim.resources import asset_path

START_PAGES = asset_path("web_start_pages.json")
DEFAULT_CHECKPOINT = asset_path("web_rlvr")
EMBEDDED_TOKENIZER_DIR = asset_path("web_tokenizer")
MAX_TREE_CHARS = 20_000


class LMWebWorldModel:
    """Predict item changes with a causal LM through the web task's prompt codec."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, max_new_tokens: int = 256,
                 max_prompt_tokens: int = 640, temperature: float = 1.0) -> None:
        from rlvr_sim.tasks.web import WebTask

        self.model = model.eval()
        self.codec = WebTask(tokenizer=tokenizer, max_prompt_tokens=max_prompt_tokens, max_new_tokens=max_new_tokens)
        self.temperature = temperature

    @classmethod
    def from_checkpoint(cls, path: str | Path, **kwargs: Any) -> LMWebWorldModel:
        """Load a checkpoint directory (model + tokenizer), e.g. assets/web_rlvr."""
        from rlvr_sim.models.lm import load_model

        model, tokenizer, meta = load_model(str(path))
        if tokenizer is None:
            raise ValueError(f"checkpoint {path} has no tokenizer files; a web world model needs its tokenizer")
        settings = (meta.get("task_args") or {}) if isinstance(meta, dict) else {}
        for key in ("max_new_tokens", "max_prompt_tokens"):
            if key in settings and key not in kwargs:
                kwargs[key] = settings[key]
        return cls(model, tokenizer, **kwargs)

    def predict(self, objective: str, url: str, action: str, tree: str, samples: int = 1, seed: int = 0) -> list[str]:
        """`samples` predicted three-section answers for one (state, action)."""
        return self._sample([self.codec.encode_prompt(objective, url, action, tree)], samples, seed)

    def predict_batch(self, objective: str, url: str, actions: list[str], tree: str, seed: int = 0) -> list[str]:
        """One predicted answer per candidate action from the same state, in one batched call."""
        if not actions:
            return []
        return self._sample([self.codec.encode_prompt(objective, url, a, tree) for a in actions], 1, seed)

    def _sample(self, prompts: list[list[int]], samples: int, seed: int) -> list[str]:
        from rlvr_sim.rl.sampler import sample

        spec = self.codec.generation_spec()
        with torch.no_grad():
            out = sample(self.model, prompts, group_size=samples, max_new_tokens=spec.max_new_tokens,
                         temperature=self.temperature, stop_token_ids=spec.stop_token_ids,
                         pad_token_id=self.codec.pad_token_id, seed=seed)
        return [self.codec.decode(c) for c in out.completions()]


def next_tree_from_prediction(tree: str, prediction: str) -> tuple[str, str | None]:
    """(tree after applying the predicted changes, parse error or None); an unparseable prediction leaves
    the tree unchanged."""
    try:
        changes, dropped = parse_changes(prediction)
    except ValueError as exc:
        return tree, str(exc)
    return apply_changes(tree, changes), (f"{dropped} malformed item lines ignored" if dropped else None)


def load_start_pages(path: str | Path = START_PAGES) -> dict[int, dict[str, str]]:
    """Start trees of the task suite recorded from the real site: {task_id: {"tree", "url"}}."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {int(k): v for k, v in data.items()}


class WebWorldModelEnv(gym.Env):
    """A learned simulator of the shop site (or of any site the model was trained on).

    ## Description
    `step(action)` asks the world model for the item changes the action causes and applies them to the
    current tree; `info["raw_prediction"]` carries the model's text.

    ## Action Space
    WebArena action text (see `rlvr_sim.envs.web.actions`).

    ## Observation Space
    Accessibility-tree text (`TextSpace`, any Unicode).

    ## Rewards
    Always 0.0: a learned simulator has no success check (score predicted states with a value
    function, as the MPC agent does).

    ## Starting State
    `reset(options={"tree": ..., "objective": ..., "url": ...})` starts from any tree; otherwise a
    task of the suite (fixed `task_id`, else drawn with the seeded generator) and its start page as
    recorded from the real site (assets/web_start_pages.json).

    ## Episode End
    Terminated on `stop [...]`; truncated after `max_steps`. Malformed action text leaves the tree
    unchanged and sets `info["action_error"]`; an unparseable prediction leaves it unchanged and sets
    `info["parse_error"]`.

    ## Arguments
    `world_model` (an `LMWebWorldModel`) or `checkpoint` (a directory; default assets/web_rlvr),
    `task_id`, `max_steps`, `render_mode` (None or "ansi").

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, world_model: LMWebWorldModel | None = None, checkpoint: str | Path | None = None,
                 task_id: int | None = None, max_steps: int = 15, render_mode: str | None = None,
                 start_pages: str | Path = START_PAGES) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if task_id is not None:
            get_task(task_id)
        self.world_model = world_model or LMWebWorldModel.from_checkpoint(checkpoint or DEFAULT_CHECKPOINT)
        self.task_id, self.max_steps, self.render_mode = task_id, max_steps, render_mode
        self.start_pages = load_start_pages(start_pages)
        self.observation_space = TextSpace(MAX_TREE_CHARS)
        self.action_space = TextSpace(1000)
        self.tree, self.objective, self.url = "", "", "/"
        self._steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        if "tree" in options:
            self.tree = str(options["tree"])
            self.objective, self.url = str(options.get("objective", "")), str(options.get("url", "/"))
            task_id = None
        else:
            task_id = options.get("task_id", self.task_id)
            if task_id is None:
                task_id = int(self.np_random.integers(len(WEB_TASKS)))
            task = get_task(task_id)
            if task_id not in self.start_pages:
                raise KeyError(f"no recorded start page for task {task_id}; pass options={{'tree': ...}}")
            page = self.start_pages[task_id]
            self.tree, self.objective, self.url = page["tree"], task.objective, page["url"]
        self._steps = 0
        return self.tree, {"task_id": task_id, "objective": self.objective, "url": self.url}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._steps += 1
        info: dict[str, Any] = {"objective": self.objective, "raw_prediction": None}
        terminated = False
        try:
            parsed = parse_action(action)
        except ActionParseError as exc:
            info["action_error"] = f"ActionParseError: {exc}"
            parsed = None
        if parsed is not None and parsed.kind == "stop":
            terminated = True
        elif parsed is not None:
            seed = int(self.np_random.integers(2**31 - 1))
            prediction = self.world_model.predict(self.objective, self.url, parsed.to_text(), self.tree, seed=seed)[0]
            info["raw_prediction"] = prediction
            tree, error = next_tree_from_prediction(self.tree, prediction)
            self.tree = tree[:MAX_TREE_CHARS]
            if error:
                info["parse_error"] = error
            if parsed.kind == "goto":
                self.url = parsed.text
        truncated = not terminated and self._steps >= self.max_steps
        return self.tree, 0.0, terminated, truncated, info

    def render(self) -> str | None:
        return self.tree if self.render_mode == "ansi" else None
