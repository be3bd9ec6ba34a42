"""The ground-truth text games as a Gymnasium environment (``RLVRSim/TextGame-v0``)."""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from rlvr_sim.envs.textgame.games import GAMES, make_game

from rlvr_sim.metrics.textgame import join_state

TEXT_CHARSET = string.printable  # observations are ASCII text (object names, numbers, JSON punctuation)
MAX_OBSERVATION_CHARS = 8192
MAX_ACTION_CHARS = 128


def game_state(game: Any) -> dict:
    """The engine's current state in RLVR-World's ground-truth layout ``{"game_state": [...objects, score]}``."""
    return join_state(game.snapshot()["objects"], game.score_state())


class TextGameEnv(gym.Env):
    """ByteSized32-style text games (boiling, circuits, growth, cooking, mixing, measuring, cleaning, ...).

    ## Description
    One of the games in `rlvr_sim.envs.textgame.games.GAMES`, chosen by the `game` argument or, if None, drawn
    from the env's seeded generator at every reset (`options={"game": id}` picks one for that episode).

    ## Action Space
    `Text`: a command such as "turn on stove"; `info["valid_actions"]` lists the ones the game understands.
    Unknown commands are answered with "I don't understand that." and time still passes.

    ## Observation Space
    `Text`: the game's message, what you see and your inventory.

    ## Rewards
    The change of the game's score.

    ## Starting State
    Initial values (temperatures, amounts, target colours...) drawn from the reset seed.

    ## Episode End
    Terminated when the game is over (won or lost); truncated after `max_steps` steps.

    ## Arguments
    `game` (id or None), `max_steps` (default 30), `render_mode` ("ansi" or "human").

    ## Version History
    v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(self, game: str | None = None, max_steps: int = 30, render_mode: str | None = None) -> None:
        if game is not None and game not in GAMES:
            raise ValueError(f"unknown text game {game!r}; known: {', '.join(sorted(GAMES))}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.game_id = game
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=1, charset=TEXT_CHARSET)
        self.game = None
        self.steps = 0

    def _observation(self) -> str:
        snapshot = self.game.snapshot()
        text = f"{snapshot['observation']}\n{snapshot['look']}\n{snapshot['inventory']}"
        return text[:MAX_OBSERVATION_CHARS]

    def _info(self) -> dict[str, Any]:
        return {
            "game": self.game.game_id,
            "task": self.game.task_description,
            "valid_actions": self.game.all_actions(),
            "state": game_state(self.game),
            "uuid_base": self.game.max_uuid,
            "score": self.game.score,
            "won": self.game.game_won,
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        game_id = (options or {}).get("game", self.game_id)
        if game_id is None:
            game_id = sorted(GAMES)[int(self.np_random.integers(len(GAMES)))]
        self.game = make_game(game_id, seed=int(self.np_random.integers(2**31)))
        self.steps = 0
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if not isinstance(action, str):
            raise TypeError(f"action must be a text command (str), got {type(action).__name__}")
        previous_score = self.game.score
        self.game.step(action[:MAX_ACTION_CHARS])
        self.steps += 1
        reward = float(self.game.score - previous_score)
        truncated = self.steps >= self.max_steps and not self.game.game_over
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, bool(self.game.game_over), truncated, self._info()

    def render(self) -> str | None:
        if self.game is None:
            return None
        text = f"[{self.game.game_id}] {self.game.task_description}\n{self._observation()}\nscore: {self.game.score}"
        if self.render_mode == "human":
            print(text)
            return None
        return text
