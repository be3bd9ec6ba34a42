"""The worlds the viewer shows: the learned simulator, the ground-truth simulator, data-set episodes.

Nothing here touches pygame, so the same rollout logic runs in the window, in scripted recordings and in
tests. The worlds themselves (the learned simulator and gym-pusht as envs, a step held for the model's
frame skip) are built by `rlvr_sim.envs.worlds`, which the evaluations use too; this module adds what the
viewer needs on top. An `EnvHandle` remembers how its env was reset and which actions it has taken, so it
can branch a look-ahead rollout (the filmstrip) without disturbing the live one: by deep-copying the env
(sharing any torch modules, which are read-only here) or, when an env cannot be copied (gym-pusht's
physics space holds C handles), by replaying its history in a shadow env built the same way.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from rlvr_sim.envs.worlds import (
    GROUND_TRUTH_ID,
    WORLD_MODEL_ID,
    ground_truth_available,
    make_ground_truth,
    make_world_model,
    model_frame_skip,
    repeat_step,
)


def frame_shape(env: gym.Env) -> tuple[int, int]:
    """(height, width) of an env whose observations are RGB uint8 frames; a clear error otherwise."""
    space = env.observation_space
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 3 or space.shape[-1] != 3:
        raise ValueError(f"the viewer needs RGB frame observations (H, W, 3), got observation space {space}")
    return int(space.shape[0]), int(space.shape[1])


def check_frame(frame: Any, source: str) -> np.ndarray:
    """An (H, W, 3) uint8 frame, or a clear error naming where the bad frame came from."""
    array = np.asarray(frame)
    if array.ndim != 3 or array.shape[-1] != 3:
        raise ValueError(f"{source} returned a frame of shape {array.shape}; expected (H, W, 3)")
    if array.dtype != np.uint8:
        if not np.issubdtype(array.dtype, np.floating) or not np.isfinite(array).all():
            raise ValueError(f"{source} returned a frame of dtype {array.dtype}; expected uint8")
        array = np.clip(np.rint(array * 255.0 if array.max() <= 1.0 else array), 0, 255).astype(np.uint8)
    return array


def model_name(env: gym.Env, checkpoint: str | None = None) -> str:
    """A short human-readable name of the model behind an env, for the window."""
    if checkpoint:
        return Path(checkpoint).name or str(checkpoint)
    unwrapped = env.unwrapped
    for attribute in ("model_name", "checkpoint_name", "checkpoint"):
        value = getattr(unwrapped, attribute, None)
        if isinstance(value, str | Path) and str(value):
            return Path(str(value)).name or str(value)
    return env.spec.id if env.spec is not None else type(unwrapped).__name__


def _torch_modules(obj: Any, depth: int = 2) -> list[Any]:
    """torch modules reachable from an object's attributes (a couple of levels deep), to share when forking."""
    torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
    if torch is None:
        return []
    found, frontier = [], [obj]
    for _ in range(depth):
        next_frontier = []
        for item in frontier:
            for value in getattr(item, "__dict__", {}).values():
                if isinstance(value, torch.nn.Module):
                    found.append(value)
                elif hasattr(value, "__dict__") and not isinstance(value, type):
                    next_frontier.append(value)
        frontier = next_frontier
    return found


class EnvHandle:
    """One env plus the seed/options it was reset with and the actions taken since, so it can branch."""

    def __init__(
        self, env: gym.Env, factory: Callable[[], gym.Env], source: str, action_repeat: int = 1
    ) -> None:
        if action_repeat < 1:
            raise ValueError(f"action_repeat must be >= 1, got {action_repeat}")
        self.env = env
        self.factory = factory
        self.source = source
        self.action_repeat = action_repeat  # env steps per viewer step (the world model's frame skip)
        self.reset_kwargs: dict[str, Any] = {}
        self.actions: list[np.ndarray] = []
        self._shadow: gym.Env | None = None
        self._copyable = True

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        self.reset_kwargs = {"seed": seed, "options": options}
        self.actions = []
        observation, info = self.env.reset(seed=seed, options=options)
        return check_frame(observation, self.source), info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        """One viewer step: the action held for `action_repeat` env steps (stopping at an episode's end)."""
        observation, reward, terminated, truncated, info = repeat_step(self.env, action, self.action_repeat)
        self.actions.append(np.array(action, copy=True))
        return check_frame(observation, self.source), reward, terminated, truncated, info

    def _branch(self) -> gym.Env:
        """A copy of the env in its current state (deep copy sharing torch modules, else history replay)."""
        if self._copyable:
            try:
                return copy.deepcopy(self.env, memo={id(m): m for m in _torch_modules(self.env.unwrapped)})
            except (TypeError, ValueError, AttributeError, RuntimeError, copy.Error):
                self._copyable = False
        if self._shadow is None:
            self._shadow = self.factory()
        self._shadow.reset(**self.reset_kwargs)
        for action in self.actions:
            repeat_step(self._shadow, action, self.action_repeat)
        return self._shadow

    def imagine(
        self, plan: Callable[[int, dict], np.ndarray | None], horizon: int, info: dict
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Roll a branch `horizon` steps ahead; `plan(k, info)` gives the k-th action (None stops early).
        Returns the frames and the actions taken; the live env is left untouched."""
        branch = self._branch()
        frames, actions = [], []
        for k in range(horizon):
            action = plan(k, info)
            if action is None:
                break
            observation, _, terminated, truncated, info = repeat_step(branch, action, self.action_repeat)
            frames.append(check_frame(observation, f"{self.source} (look-ahead)"))
            actions.append(np.array(action, copy=True))
            if terminated or truncated:
                break
        if branch is not self._shadow:
            branch.close()
        return frames, actions

    def close(self) -> None:
        self.env.close()
        if self._shadow is not None:
            self._shadow.close()


def set_temperature(env: gym.Env, temperature: float) -> bool:
    """Set the world model's sampling temperature when the env exposes one; False when it has none."""
    unwrapped = env.unwrapped
    if hasattr(unwrapped, "set_temperature"):
        unwrapped.set_temperature(temperature)
        return True
    if hasattr(unwrapped, "temperature"):
        unwrapped.temperature = temperature
        return True
    return False


def get_temperature(env: gym.Env) -> float | None:
    """The world model's sampling temperature, or None when the env has no such knob."""
    value = getattr(env.unwrapped, "temperature", None)
    return float(value) if isinstance(value, int | float) else None


@dataclass
class Episode:
    """A data-set episode for replay: frames (T, H, W, 3) uint8 and actions (T - 1, A), action t moving
    frame t to frame t + 1."""

    frames: np.ndarray
    actions: np.ndarray
    name: str

    def __len__(self) -> int:
        return len(self.frames)


def load_episode(path: str | Path, height: int, width: int, frame_skip: int = 1) -> Episode:
    """One Open-X/RT-1-style episode `.npz` (keys `image`, `action`) at the model's frame size and frame skip."""
    from rlvr_sim.data.episodes import load_episode as read_episode

    if height != width:
        raise ValueError(f"replay needs a square world-model frame, got {height}x{width}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"episode file not found: {path}")
    episode = read_episode(path, image_size=height, frame_skip=frame_skip)
    return Episode(frames=episode.images, actions=episode.actions, name=path.stem)


__all__ = ["GROUND_TRUTH_ID", "WORLD_MODEL_ID", "EnvHandle", "Episode", "check_frame", "frame_shape", "get_temperature",
           "ground_truth_available", "load_episode", "make_ground_truth", "make_world_model", "model_frame_skip",
           "model_name", "repeat_step", "set_temperature"]
