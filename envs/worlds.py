"""The PushT worlds as Gymnasium envs, for whatever steps them side by side (the viewer, Real2Sim):
the learned simulator (`RLVRWorld-Video-v0`, any checkpoint), gym-pusht as the ground truth at the model's
frame size, and a viewer or policy step held for the model's frame skip (`repeat_step`).

The ground truth's frames are made the way the models' training frames were: gym-pusht renders its own
96x96 observation (the size PushT data is recorded at, ours and LeRobot's) and `resize_frames`, the pipeline's
one resize, brings it to the model's size. gym-pusht asked for 64x64 directly draws a different picture
(bilinear from 512 px: harder edges, another agent disc), and a learned visual tokenizer started on such a
frame misreads it (docs/real2sim.md, "Start frames").
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import gymnasium as gym
import numpy as np

WORLD_MODEL_ID = "RLVRWorld-Video-v0"
GROUND_TRUTH_ID = "gym_pusht/PushT-v0"
DATA_FRAME_SIZE = 96  # gym-pusht's own observation size: the frames PushT episodes are recorded with


def ground_truth_available() -> bool:
    """Whether gym-pusht (the ground-truth PushT simulator) is installed."""
    return importlib.util.find_spec("gym_pusht") is not None


class DataFrames(gym.ObservationWrapper):
    """gym-pusht's 96x96 frames resized to (height, width) by `resize_frames`, as training frames are."""

    def __init__(self, env: gym.Env, height: int, width: int) -> None:
        if height != width or height < 1:
            raise ValueError(f"PushT frames are square: got height {height}, width {width}")
        super().__init__(env)
        self.size = int(height)
        self.observation_space = gym.spaces.Box(0, 255, (self.size, self.size, 3), np.uint8)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        from rlvr_sim.data.episodes import resize_frames

        return resize_frames(np.asarray(observation)[None], self.size)[0]


def make_ground_truth(height: int, width: int) -> gym.Env:
    """gym-pusht with pixel observations at the world model's frame size, rendered as training frames are (the
    module doc), plus the true state in `info`."""
    importlib.import_module("gym_pusht")
    env = gym.make(GROUND_TRUTH_ID, obs_type="pixels", observation_width=DATA_FRAME_SIZE,
                   observation_height=DATA_FRAME_SIZE)
    return env if (height, width) == (DATA_FRAME_SIZE, DATA_FRAME_SIZE) else DataFrames(env, height, width)


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


__all__ = ["DATA_FRAME_SIZE", "GROUND_TRUTH_ID", "WORLD_MODEL_ID", "DataFrames", "ground_truth_available", "make_ground_truth", "make_world_model",
           "model_frame_skip", "repeat_step"]
