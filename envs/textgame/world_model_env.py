"""A trained text-game world model served as a Gymnasium environment (``RLVRWorld-TextGame-v0``).

The start state comes from a real game; every `step` prompts the language model with q(s, a), parses its
diff answer, applies it, and returns reward = predicted score change, terminated = predicted gameOver.
With ``shadow=True`` the real game steps alongside and `info["shadow"]` reports per-step exact match.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from gymnasium import spaces
from rlvr_sim.envs.lm_env import LMWorldModel, LMWorldModelEnv, LMWorldModelVectorEnv, Prediction, load_lm
from rlvr_sim.envs.textgame.env import MAX_ACTION_CHARS, TEXT_CHARSET, game_state
from rlvr_sim.envs.textgame.games import GAMES, make_game

from rlvr_sim.data.bytesized32 import TextGameTransition
from rlvr_sim.metrics.textgame import compare_states, split_state
from rlvr_sim.resources import asset_path
from rlvr_sim.tasks.textgame import TextGameTask

DEFAULT_CHECKPOINT = asset_path("textgame_rlvr_task_specific")
MAX_OBSERVATION_CHARS = 8192
PROMPT_FORMATS = ("ours", "source")


class TextGameWorldModel(LMWorldModel):
    """A causal LM plus the text-game codec (`TextGameTask`): batched next-state prediction for any
    checkpoint of ours or HF causal LM directory with a tokenizer. `predict` is what the env, the
    evaluation (`evaluations/textgame.py`) and the viewer (`rlvr-sim play textgame`) call."""

    def __init__(self, checkpoint: str | Path | None = None, with_rules: bool | None = None,
                 max_new_tokens: int | None = None, device: str = "cpu", prompt_format: str = "ours") -> None:
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}")
        path = Path(checkpoint) if checkpoint is not None else DEFAULT_CHECKPOINT
        if checkpoint is None and not (path / "config.json").exists():
            raise FileNotFoundError(f"the embedded text-game checkpoint is missing at {path}")
        model, tokenizer, task_args = load_lm(path, device)
        self.with_rules = bool(task_args.get("with_rules", True)) if with_rules is None else with_rules
        codec = TextGameTask(tokenizer=tokenizer, with_rules=self.with_rules,
                             max_new_tokens=max_new_tokens or int(task_args.get("max_new_tokens", 192)))
        super().__init__(model, codec, checkpoint if checkpoint is not None else path)
        self.prompt_format = prompt_format

    def prompt_ids(self, transition: TextGameTransition) -> list[int]:
        """Our codec's q(s, a); with prompt_format="source", the data's own prompt (RLVR-World rows) through
        the tokenizer's chat template when it has one."""
        if self.prompt_format == "source":
            if not transition.prompt:
                raise ValueError("prompt_format='source' needs transitions that carry their own prompt (parquet rows)")
            if getattr(self.tokenizer, "chat_template", None):
                return list(self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": transition.prompt}], add_generation_prompt=True, tokenize=True))
            return self.tokenizer.encode(transition.prompt)
        return self.codec.prompt_ids(transition)

    def predict(self, transitions: list[TextGameTransition], temperature: float = 0.0,
                seeds: list[int] | None = None) -> list[Prediction]:
        """Next states of a batch of (state, action) pairs in one batched, KV-cached generation
        (transition i seeded with seeds[i]; greedy at temperature 0)."""
        return self.predict_next(transitions, temperature, seeds)


def state_text(task: str, state: dict) -> str:
    """The observation: task line and the state (objects and score) as compact ASCII JSON."""
    return f"Task: {task}\nState: {json.dumps(state['game_state'], separators=(',', ':'))}"[:MAX_OBSERVATION_CHARS]


def _score_of(state: dict) -> dict:
    _, score = split_state(state)
    return score or {"score": 0, "gameOver": False, "gameWon": False}


def _as_number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


class TextGameWorldModelEnv(LMWorldModelEnv):
    """Text games simulated by a trained world model.

    ## Description
    Reset starts a real game (chosen like `RLVRSim/TextGame-v0`) and takes its initial state; from then on
    the language model alone predicts every next state from q(s, a).

    ## Action Space
    `Text`: a command, e.g. "turn on stove" (`info["valid_actions"]` lists the real game's commands).

    ## Observation Space
    `Text`: "Task: ...\\nState: [objects..., score record]" (compact JSON).

    ## Rewards
    The predicted score change (0 when the model's answer cannot be parsed).

    ## Starting State
    The real game's initial state for the reset seed.

    ## Episode End
    Terminated when the predicted score record says gameOver; truncated after `max_steps`.

    ## Arguments
    `checkpoint` (default: the embedded RLVR task-specific checkpoint; any of our checkpoint directories or
    HF causal LM dirs with a tokenizer), `game`, `max_steps`, `temperature` (0 = greedy; > 0 samples with a
    seed drawn from the env's `np_random`), `shadow` (step the real game too and report per-step exact
    match in `info["shadow"]`), `render_mode` ("ansi"), `world_model` (a loaded `TextGameWorldModel`, shared
    instead of loading `checkpoint`). `gym.make_vec("RLVRWorld-TextGame-v0", num_envs=N)` steps N games
    with one batched generation per step (`TextGameWorldModelVectorEnv`).

    ## Info
    `raw_output`, `parse_ok`, `parse_error`, `valid_actions`, `state`, `sample_seed` (the step's sampling
    seed: `TextGameWorldModel.predict` with it replays the step), and with shadow the real next state,
    `exact_match` and running `accuracy`.

    ## Version History
    v0: initial version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, checkpoint: str | None = None, game: str | None = None, max_steps: int = 30,
                 temperature: float = 0.0, shadow: bool = False, render_mode: str | None = None,
                 world_model: TextGameWorldModel | None = None) -> None:
        if game is not None and game not in GAMES:
            raise ValueError(f"unknown text game {game!r}; known: {', '.join(sorted(GAMES))}")
        self._check_render_mode(render_mode)
        self._set_temperature(temperature)
        self.world_model = world_model if world_model is not None else TextGameWorldModel(checkpoint)
        self.game_id, self.max_steps, self.shadow = game, max_steps, shadow
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=1, charset=TEXT_CHARSET)
        self.state: dict | None = None
        self.real_game = None
        self.shadow_steps = self.shadow_correct = 0

    def _observation(self) -> str | None:
        return None if self.state is None else state_text(self.real_game.task_description, self.state)

    def _base_info(self) -> dict[str, Any]:
        return {"game": self.real_game.game_id, "valid_actions": self.real_game.all_actions(),
                "state": copy.deepcopy(self.state), "uuid_base": self.uuid_base}

    def _start(self, options: dict[str, Any]) -> tuple[str, dict]:
        game_id = options.get("game", self.game_id)
        if game_id is None:
            game_id = sorted(GAMES)[int(self.np_random.integers(len(GAMES)))]
        self.real_game = make_game(game_id, seed=int(self.np_random.integers(2**31)))
        self.state = game_state(self.real_game)
        self.uuid_base = self.real_game.max_uuid
        self.steps = self.shadow_steps = self.shadow_correct = 0
        return self._observation(), self._base_info()

    def _begin_step(self, action: str) -> TextGameTransition:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if not isinstance(action, str):
            raise TypeError(f"action must be a text command (str), got {type(action).__name__}")
        return TextGameTransition(
            current_state=self.state, gold_state=self.state, action=action[:MAX_ACTION_CHARS],
            uuid_base=self.uuid_base, task_description=self.real_game.task_description, game=self.real_game.game_id,
        )

    def _finish_step(self, transition: TextGameTransition, prediction: Prediction,
                     sample_seed: int) -> tuple[str, float, bool, bool, dict]:
        previous_score = _score_of(self.state)
        if prediction.state is not None:
            self.state = prediction.state
            uuids = [u for u in split_state(self.state)[0] if isinstance(u, int)]
            self.uuid_base = max([self.uuid_base] + [u + 1 for u in uuids])
        score = _score_of(self.state)
        reward = _as_number(score.get("score")) - _as_number(previous_score.get("score"))
        self.steps += 1
        terminated = score.get("gameOver") is True
        truncated = self.steps >= self.max_steps and not terminated
        info = self._base_info()
        info.update(raw_output=prediction.text, parse_ok=prediction.state is not None, parse_error=prediction.error,
                    sample_seed=sample_seed)
        if self.shadow:
            info["shadow"] = self._shadow_step(transition.action, transition.current_state)
        return self._observation(), reward, terminated, truncated, info

    def _shadow_step(self, action: str, predicted_from: dict) -> dict[str, Any]:
        """Step the real game; exact match of the model's state against it (from the model's own previous
        state, so errors compound as in a real rollout; `in_sync` says whether the two still agreed before)."""
        in_sync = compare_states(predicted_from, game_state(self.real_game)).all_correct
        previous = self.real_game.score
        self.real_game.step(action)
        real_state = game_state(self.real_game)
        comparison = compare_states(self.state, real_state)
        self.shadow_steps += 1
        self.shadow_correct += comparison.all_correct
        return {"real_state": real_state, "real_reward": float(self.real_game.score - previous),
                "real_terminated": self.real_game.game_over, "exact_match": comparison.all_correct,
                "in_sync": in_sync, "errors": comparison.errors[:10],
                "accuracy": self.shadow_correct / self.shadow_steps}


class TextGameWorldModelVectorEnv(LMWorldModelVectorEnv):
    """N text games over one loaded world model, each step one batched generation for all N
    (`gym.make_vec("RLVRWorld-TextGame-v0", num_envs=N, **env_kwargs)`; see `LMWorldModelVectorEnv`)."""

    env_class = TextGameWorldModelEnv


__all__ = ["DEFAULT_CHECKPOINT", "Prediction", "TextGameWorldModel", "TextGameWorldModelEnv",
           "TextGameWorldModelVectorEnv", "state_text"]
