"""Scripted PushT policies of graded skill, for collecting world-model data in `gym_pusht/PushT-v0`.

PushT actions are target positions (x, y) in [0, 512]^2 for a PD-controlled agent disc. The scripted
pusher reads the true state from the env's `info` (agent position, block pose, goal pose), walks to a
contact point behind the T on the side away from the goal, and pushes; a lateral offset turns the T
towards the goal angle. Skill is graded by action noise and reaction lag; `random` and `jitter` never
aim, so the data also covers motions no competent policy would make. Every policy draws its noise from
its own seeded generator, so a (policy, seed) pair replays exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

ACTION_LOW, ACTION_HIGH = 0.0, 512.0
# Body-frame centre of mass of the T in gym-pusht (mean of the bar and stem centres).
TEE_COM_LOCAL = np.array([0.0, 45.0])


@dataclass(frozen=True)
class Skill:
    """How well a scripted pusher executes: action noise (px), lag (steps an action is kept) and push step."""

    noise_px: float
    hold_steps: int
    push_step_px: float
    aim: bool = True  # False: never aims at the block (random / jitter policies)


SKILLS: dict[str, Skill] = {
    "expert": Skill(noise_px=0.0, hold_steps=1, push_step_px=40.0),
    "good": Skill(noise_px=12.0, hold_steps=1, push_step_px=35.0),
    "mediocre": Skill(noise_px=30.0, hold_steps=2, push_step_px=30.0),
    "poor": Skill(noise_px=60.0, hold_steps=3, push_step_px=25.0),
    "jitter": Skill(noise_px=70.0, hold_steps=1, push_step_px=0.0, aim=False),
    "random": Skill(noise_px=0.0, hold_steps=4, push_step_px=0.0, aim=False),
}


def _rotate(vec: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * vec[0] - s * vec[1], s * vec[0] + c * vec[1]])


def _wrap_angle(angle: float) -> float:
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


class PushTPolicy:
    """A scripted PushT policy; `act(info)` maps the env's info dict to a target position (float32, (2,))."""

    def __init__(self, skill: str = "expert", seed: int = 0) -> None:
        if skill not in SKILLS:
            raise ValueError(f"unknown PushT skill {skill!r}; known: {', '.join(SKILLS)}")
        self.skill_name = skill
        self.skill = SKILLS[skill]
        self.seed = seed
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Restart the noise stream (and forget any held action)."""
        self.rng = np.random.default_rng(self.seed if seed is None else seed)
        self._held: np.ndarray | None = None
        self._held_left = 0

    def act(self, info: dict[str, Any]) -> np.ndarray:
        """Next target position given gym-pusht's info (`pos_agent`, `block_pose`, `goal_pose`)."""
        if self._held is not None and self._held_left > 0:
            self._held_left -= 1
            return self._held.copy()
        agent = np.asarray(info["pos_agent"], dtype=np.float64)
        if self.skill_name == "random":
            action = self.rng.uniform(50.0, 462.0, size=2)
        elif self.skill_name == "jitter":
            centre_pull = 0.1 * (np.array([256.0, 256.0]) - agent)  # keeps the random walk off the walls
            action = agent + centre_pull + self.rng.normal(0.0, self.skill.noise_px, size=2)
        else:
            action = self._aimed_target(agent, np.asarray(info["block_pose"]), np.asarray(info["goal_pose"]))
            action = action + self.rng.normal(0.0, self.skill.noise_px, size=2) if self.skill.noise_px else action
        action = np.clip(action, ACTION_LOW, ACTION_HIGH).astype(np.float32)
        self._held, self._held_left = action, self.skill.hold_steps - 1
        return action.copy()

    def _aimed_target(self, agent: np.ndarray, block_pose: np.ndarray, goal_pose: np.ndarray) -> np.ndarray:
        """Walk behind the T (relative to the goal) and push through its centre of mass, offset to turn it."""
        com = block_pose[:2] + _rotate(TEE_COM_LOCAL, float(block_pose[2]))
        goal_com = goal_pose[:2] + _rotate(TEE_COM_LOCAL, float(goal_pose[2]))
        to_goal = goal_com - com
        dist = float(np.linalg.norm(to_goal))
        angle_err = _wrap_angle(float(goal_pose[2] - block_pose[2]))
        if dist < 15.0:  # in place: rotate by pushing the bar end sideways
            direction = _rotate(np.array([1.0, 0.0]), float(block_pose[2]))
            lateral = np.sign(angle_err) * 50.0 * direction
            push_dir = _rotate(direction, np.pi / 2) * np.sign(angle_err)
            contact = com + lateral - push_dir * 45.0
        else:
            push_dir = to_goal / dist
            perpendicular = _rotate(push_dir, np.pi / 2)
            offset = np.clip(angle_err, -1.0, 1.0) * 25.0
            contact = com - push_dir * 70.0 + perpendicular * offset
        if np.linalg.norm(agent - contact) > 20.0:
            return contact  # approach (the kinematic agent may shove the T on the way: also useful data)
        return agent + push_dir * self.skill.push_step_px


__all__ = ["PushTPolicy", "SKILLS", "Skill"]
