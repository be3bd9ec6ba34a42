"""`RLVRWorld-Web-v0`: a learned web world model served as a Gymnasium environment.

`LMWebWorldModel` is a causal LM checkpoint (ours or any HF causal LM with its tokenizer) plus the web
task's codec (`rlvr_sim.tasks.web.WebTask`): it predicts the item changes an action causes, as
three-section text, through the shared sampler (`rlvr_sim.envs.lm_env`), and decodes them against the
page with the codec (`WebTask.decode_state`: the changes applied to the tree). `WebWorldModelEnv` steps
from tree to predicted tree; `WebWorldModelVectorEnv` steps N such worlds with one batched generation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import torch
from rlvr_sim.envs.lm_env import LMWorldModel, LMWorldModelEnv, LMWorldModelVectorEnv, Prediction, load_lm
from rlvr_sim.envs.web.actions import ActionParseError, parse_action
from rlvr_sim.envs.web.spaces import TextSpace
from rlvr_sim.envs.web.tasks import WEB_TASKS, get_task

from rlvr_sim.resources import asset_path
from rlvr_sim.tasks.web import decode_changes

START_PAGES = asset_path("web_start_pages.json")
DEFAULT_CHECKPOINT = asset_path("web_rlvr")
EMBEDDED_TOKENIZER_DIR = asset_path("web_tokenizer")
MAX_TREE_CHARS = 20_000


class WebQuery(NamedTuple):
    """One (state, action) to predict: the page's objective, URL and tree, and the action text."""

    objective: str
    url: str
    action: str
    tree: str


def next_tree_from_prediction(tree: str, prediction: str) -> tuple[str, str | None]:
    """(tree after applying the predicted changes, parse error or None); an unparseable prediction leaves
    the tree unchanged."""
    next_tree, error = decode_changes(tree, prediction)
    return (tree if next_tree is None else next_tree), error


class LMWebWorldModel(LMWorldModel):
    """Predict item changes with a causal LM through the web task's prompt codec (`temperature` 0 = greedy)."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, max_new_tokens: int = 256,
                 max_prompt_tokens: int = 640, temperature: float = 1.0, checkpoint: str | Path | None = None) -> None:
        from rlvr_sim.tasks.web import WebTask

        codec = WebTask(tokenizer=tokenizer, max_prompt_tokens=max_prompt_tokens, max_new_tokens=max_new_tokens)
        super().__init__(model, codec, checkpoint, temperature)

    @classmethod
    def from_checkpoint(cls, path: str | Path, **kwargs: Any) -> LMWebWorldModel:
        """Load a checkpoint directory (model + tokenizer), e.g. assets/web_rlvr; its task_args set the
        prompt and answer budgets unless given."""
        model, tokenizer, settings = load_lm(path)
        for key in ("max_new_tokens", "max_prompt_tokens"):
            if key in settings and key not in kwargs:
                kwargs[key] = settings[key]
        return cls(model, tokenizer, checkpoint=path, **kwargs)

    def generator_seed(self, seed: int) -> int:
        """`sample(..., seed=seed)`'s seed of a single prompt: what `predict(..., seed=seed)` and
        `evaluations/web.py --seed seed` (one transition) sample with."""
        from rlvr_sim.rl.sampler import prompt_seeds

        return prompt_seeds(seed, 1)[0]

    def predict(self, objective: str, url: str, action: str, tree: str, samples: int = 1, seed: int = 0) -> list[str]:
        """`samples` predicted three-section answers for one (state, action)."""
        query = WebQuery(objective, url, action, tree)
        return [t or "" for t in self.generate([self.prompt_ids(query)], seed=seed, group_size=samples)]

    def predict_batch(self, objective: str, url: str, actions: list[str], tree: str, seed: int = 0) -> list[str]:
        """One predicted answer per candidate action from the same state, in one batched call."""
        if not actions:
            return []
        return [text for text, _ in self.predict_batch_scored(objective, url, actions, tree, seed=seed)]

    def predict_batch_scored(self, objective: str, url: str, actions: list[str], tree: str,
                             seed: int = 0) -> list[tuple[str, float]]:
        """`predict_batch`'s answers, each with the model's confidence in it (`generate_scored`: mean
        log-probability per answer token; -inf for a prompt too long to run, whose answer is "")."""
        if not actions:
            return []
        prompts = [self.prompt_ids(WebQuery(objective, url, a, tree)) for a in actions]
        return [(t or "", float("-inf") if c is None else c) for t, c in self.generate_scored(prompts, seed=seed)]


def load_start_pages(path: str | Path = START_PAGES) -> dict[int, dict[str, str]]:
    """Start trees of the task suite recorded from the real site: {task_id: {"tree", "url"}}."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {int(k): v for k, v in data.items()}


class WebWorldModelEnv(LMWorldModelEnv):
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
    `task_id`, `max_steps`, `render_mode` (None or "ansi"), `start_pages`, `temperature` (default: the
    world model's, 1.0 for a loaded checkpoint; 0 = greedy). `gym.make_vec("RLVRWorld-Web-v0",
    num_envs=N)` steps N worlds with one batched generation per step (`WebWorldModelVectorEnv`).

    ## Info
    `objective`, `raw_prediction` (None when nothing was predicted), `sample_seed` (the step's sampling
    seed: `LMWebWorldModel.predict(..., seed=sample_seed)` replays it), `parse_error`, `action_error`.

    ## Version History
    v0: first version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, world_model: LMWebWorldModel | None = None, checkpoint: str | Path | None = None,
                 task_id: int | None = None, max_steps: int = 15, render_mode: str | None = None,
                 start_pages: str | Path = START_PAGES, temperature: float | None = None) -> None:
        self._check_render_mode(render_mode)
        if task_id is not None:
            get_task(task_id)
        self.world_model = world_model or LMWebWorldModel.from_checkpoint(checkpoint or DEFAULT_CHECKPOINT)
        self._set_temperature(getattr(self.world_model, "temperature", 0.0) if temperature is None else temperature)
        self.task_id, self.max_steps = task_id, max_steps
        self.start_pages = load_start_pages(start_pages)
        self.observation_space = TextSpace(MAX_TREE_CHARS)
        self.action_space = TextSpace(1000)
        self.tree, self.objective, self.url = "", "", "/"
        self._steps = 0
        self._started = False

    def _observation(self) -> str | None:
        return self.tree if self._started else None

    def _start(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
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
        self._steps, self._started = 0, True
        return self.tree, {"task_id": task_id, "objective": self.objective, "url": self.url}

    def _begin_step(self, action: str) -> WebQuery | None:
        """The query to predict (None for a stop or malformed action); remembers the parsed action."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        self._steps += 1
        self._action_error = None
        try:
            self._parsed = parse_action(action)
        except ActionParseError as exc:
            self._action_error, self._parsed = f"ActionParseError: {exc}", None
        if self._parsed is None or self._parsed.kind == "stop":
            return None
        return WebQuery(self.objective, self.url, self._parsed.to_text(), self.tree)

    def _finish_step(self, query: WebQuery | None, prediction: Prediction | None,
                     sample_seed: int) -> tuple[str, float, bool, bool, dict[str, Any]]:
        info: dict[str, Any] = {"objective": self.objective, "raw_prediction": None, "sample_seed": sample_seed}
        if self._action_error:
            info["action_error"] = self._action_error
        terminated = self._parsed is not None and self._parsed.kind == "stop"
        if prediction is not None:
            info["raw_prediction"] = prediction.text
            if prediction.state is not None:
                self.tree = prediction.state[:MAX_TREE_CHARS]
            if prediction.error:
                info["parse_error"] = prediction.error
            if self._parsed.kind == "goto":
                self.url = self._parsed.text
        truncated = not terminated and self._steps >= self.max_steps
        return self.tree, 0.0, terminated, truncated, info


class WebWorldModelVectorEnv(LMWorldModelVectorEnv):
    """N learned web worlds over one loaded model, each step one batched generation for all N
    (`gym.make_vec("RLVRWorld-Web-v0", num_envs=N, **env_kwargs)`; see `LMWorldModelVectorEnv`)."""

    env_class = WebWorldModelEnv


__all__ = ["DEFAULT_CHECKPOINT", "EMBEDDED_TOKENIZER_DIR", "LMWebWorldModel", "WebQuery", "WebWorldModelEnv",
           "WebWorldModelVectorEnv", "decode_changes", "load_start_pages", "next_tree_from_prediction"]
