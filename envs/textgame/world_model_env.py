"""A trained text-game world model served as a Gymnasium environment (``RLVRWorld-TextGame-v0``).

The start state comes from a real game; every `step` prompts the language model with q(s, a), parses its
diff answer, applies it, and returns reward = predicted score change, terminated = predicted gameOver.
With ``shadow=True`` the real game steps alongside and `info["shadow"]` reports per-step exact match.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from gymnasium import spaces
from rlvr_sim.envs.textgame.env import MAX_ACTION_CHARS, TEXT_CHARSET, game_state
from rlvr_sim.envs.textgame.games import GAMES, make_game

from rlvr_sim.data.bytesized32 import TextGameTransition
from rlvr_sim.metrics.textgame import compare_states, split_state
from rlvr_sim.resources import asset_path
from rlvr_sim.tasks.textgame import decode_answer, encode_prompt_text

DEFAULT_CHECKPOINT = asset_path("textgame_rlvr_task_specific")
MAX_OBSERVATION_CHARS = 8192
PROMPT_FORMATS = ("ours", "source")


@dataclass
class Prediction:
    """One world-model step: the raw output, the predicted state (None if unparseable) and why not."""

    text: str
    state: dict | None
    error: str | None


class TextGameWorldModel:
    """A causal LM plus the text-game codec: batched next-state prediction for any checkpoint."""

    def __init__(self, checkpoint: str | Path | None = None, with_rules: bool | None = None,
                 max_new_tokens: int | None = None, device: str = "cpu", prompt_format: str = "ours") -> None:
        from rlvr_sim.models.lm import load_model

        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}")
        self.prompt_format = prompt_format
        path = Path(checkpoint) if checkpoint is not None else DEFAULT_CHECKPOINT
        if checkpoint is None and not (path / "config.json").exists():
            raise FileNotFoundError(f"the embedded text-game checkpoint is missing at {path}")
        self.checkpoint = str(checkpoint if checkpoint is not None else path)
        self.model, tokenizer, self.meta = load_model(self.checkpoint)
        if tokenizer is None:
            raise ValueError(f"{self.checkpoint} has no tokenizer; a text world model needs one")
        self.model.to(device).eval()
        self.tokenizer = tokenizer
        task_args = self.meta.get("task_args", {}) if isinstance(self.meta, dict) else {}
        self.with_rules = bool(task_args.get("with_rules", True)) if with_rules is None else with_rules
        self.max_new_tokens = max_new_tokens or int(task_args.get("max_new_tokens", 192))
        self.eos_token_id = tokenizer.eos_token_id
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_token_id
        self.max_positions = int(getattr(self.model.config, "max_position_embeddings", 1 << 30))

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
        ids = self.tokenizer.encode(encode_prompt_text(transition, self.with_rules), add_special_tokens=False)
        bos = self.tokenizer.bos_token_id
        return ([bos] if bos is not None else []) + ids

    @torch.no_grad()
    def predict(self, transitions: list[TextGameTransition], temperature: float = 0.0,
                seeds: list[int] | None = None) -> list[Prediction]:
        """Next states of a batch of (state, action) pairs in one batched, KV-cached generation."""
        from rlvr_sim.rl.sampler import sample

        prompts = [self.prompt_ids(t) for t in transitions]
        too_long = [len(p) + self.max_new_tokens > self.max_positions for p in prompts]
        runnable = [i for i, long in enumerate(too_long) if not long]
        texts = {i: "" for i in range(len(transitions))}
        if runnable:
            out = sample(
                self.model, [prompts[i] for i in runnable], max_new_tokens=self.max_new_tokens,
                temperature=temperature, stop_token_ids=[self.eos_token_id] if self.eos_token_id is not None else [],
                pad_token_id=self.pad_token_id, seeds=[seeds[i] for i in runnable] if seeds is not None else None,
            )
            for i, completion in zip(runnable, out.completions()):
                texts[i] = self.tokenizer.decode(completion, skip_special_tokens=True)
        predictions = []
        for i, transition in enumerate(transitions):
            if too_long[i]:
                predictions.append(Prediction("", None, f"prompt of {len(prompts[i])} tokens exceeds the model's "
                                                        f"{self.max_positions} positions"))
                continue
            state, error = decode_answer(texts[i], transition.current_state)
            predictions.append(Prediction(texts[i], state, error))
        return predictions


def state_text(task: str, state: dict) -> str:
    """The observation: task line and the state (objects and score) as compact ASCII JSON."""
    return f"Task: {task}\nState: {json.dumps(state['game_state'], separators=(',', ':'))}"[:MAX_OBSERVATION_CHARS]


def _score_of(state: dict) -> dict:
    _, score = split_state(state)
    return score or {"score": 0, "gameOver": False, "gameWon": False}


def _as_number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


class TextGameWorldModelEnv(gym.Env):
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
    generator seeded from the env's `np_random`), `shadow` (step the real game too and report per-step
    exact match in `info["shadow"]`), `render_mode` ("ansi").

    ## Info
    `raw_output`, `parse_ok`, `parse_error`, `valid_actions`, `state`, and with shadow the real next state,
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
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.world_model = world_model if world_model is not None else TextGameWorldModel(checkpoint)
        self.game_id, self.max_steps, self.temperature = game, max_steps, temperature
        self.shadow, self.render_mode = shadow, render_mode
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=1, charset=TEXT_CHARSET)
        self.state: dict | None = None
        self.real_game = None
        self.shadow_steps = self.shadow_correct = 0

    def _observation(self) -> str:
        return state_text(self.real_game.task_description, self.state)

    def _base_info(self) -> dict[str, Any]:
        return {"game": self.real_game.game_id, "valid_actions": self.real_game.all_actions(),
                "state": copy.deepcopy(self.state), "uuid_base": self.uuid_base}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        game_id = (options or {}).get("game", self.game_id)
        if game_id is None:
            game_id = sorted(GAMES)[int(self.np_random.integers(len(GAMES)))]
        self.real_game = make_game(game_id, seed=int(self.np_random.integers(2**31)))
        self.state = game_state(self.real_game)
        self.uuid_base = self.real_game.max_uuid
        self.steps = self.shadow_steps = self.shadow_correct = 0
        return self._observation(), self._base_info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if not isinstance(action, str):
            raise TypeError(f"action must be a text command (str), got {type(action).__name__}")
        action = action[:MAX_ACTION_CHARS]
        transition = TextGameTransition(
            current_state=self.state, gold_state=self.state, action=action, uuid_base=self.uuid_base,
            task_description=self.real_game.task_description, game=self.real_game.game_id,
        )
        seed = int(self.np_random.integers(2**31))
        prediction = self.world_model.predict([transition], self.temperature, seeds=[seed])[0]
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
        info.update(raw_output=prediction.text, parse_ok=prediction.state is not None, parse_error=prediction.error)
        if self.shadow:
            info["shadow"] = self._shadow_step(action, transition.current_state)
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

    def render(self) -> str | None:
        if self.state is None:
            return None
        return self._observation()
