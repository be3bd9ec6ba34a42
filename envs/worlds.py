"""The PushT worlds as Gymnasium envs, for whatever steps them side by side (the viewer, Real2Sim):
the learned simulator (`RLVRWorld-Video-v0`, any checkpoint), gym-pusht as the ground truth at the model's
frame size, and a viewer or policy step held for the model's frame skip (`repeat_step`).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import gymnasium as gym
import numpy as np

WORLD_MODEL_ID = "RLVRWorld-Video-v0"
GROUND_TRUTH_ID = "gym_pusht/PushT-v0"


def ground_truth_available() -> bool:
    """Whether gym-pusht (the ground-truth PushT simulator) is installed."""
    return importlib.util.find_spec("gym_pusht") is not None


def make_ground_truth(height: int, width: int) -> gym.Env:
    """gym-pusht with pixel observations at the world model's frame size, plus the true state in `info`."""
    importlib.import_module("gym_pusht")
    return gym.make(GROUND_TRUTH_ID, obs_type="pixels", observation_width=width, observation_height=height)


def make_world_model(env_id: str = WORLD_MODEL_ID, checkpoint: str | None = None, **kwargs: Any) -> gym.Env:
    """The learned simulator as a Gymnasium env; `checkpoint` (any of ours, a path) replaces the embedded one."""
    import rlvr_sim  # noqa: F401  (registers the RLVRWorld ids)

    if checkpoint is not None:
        kwargs["checkpoint"] = checkpoint
    return gym.make(env_id, **kwargs)


def model_frame_skip(env: gym.Env) -> int:
    """Environment steps per model step the world model was trained with (1 when the env does not say)."""
    unwrapped = env.unwrapped
    for owner in (unwrapped, getattr(unwrapped, "world", None)):
        value = getattr(owner, "frame_skip", None)
        if isinstance(value, int) and value >= 1:
            return value
    return 1


def repeat_step(env: gym.Env, action: np.ndarray, repeat: int) -> tuple[Any, float, bool, bool, dict]:
    """Step `env` `repeat` times with the same action; rewards summed, the last observation and info."""
    total = 0.0
    for _ in range(repeat):
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            break
    return observation, total, bool(terminated), bool(truncated), info


__all__ = ["GROUND_TRUTH_ID", "WORLD_MODEL_ID", "ground_truth_available", "make_ground_truth", "make_world_model",
           "model_frame_skip", "repeat_step"]
