"""A viewer session without any drawing: who chooses the actions, and what both worlds show after each.

Modes:
- play: the user's target (mouse) is the action, sent to the world model and to the ground truth;
- policy: a scripted policy acts (on the ground truth's true state when it runs beside the model, as
  the PushT policies need it); the user can take control at any time and hand it back;
- replay: a data-set episode's actions drive the world model, the episode's own frames are the truth,
  and every predicted frame is scored against the true one (SSIM and LPIPS).
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from rlvr_sim.viewer.worlds import EnvHandle, Episode, get_temperature, set_temperature

MODES = ("play", "policy", "replay")


class Policy(Protocol):
    """What the viewer needs from a policy: an action from the env's info (PushT policies read the true state)."""

    def act(self, info: dict[str, Any]) -> np.ndarray: ...


def make_policy(spec: str, seed: int = 0) -> Policy:
    """A PushT skill name from `rlvr_sim.policies.pusht.SKILLS` ('expert', 'good', ..., 'random'),
    or 'package.module:factory' for any object with `act(info)` (built as factory(seed=seed))."""
    if ":" in spec:
        module_name, attribute = spec.split(":", 1)
        factory = getattr(importlib.import_module(module_name), attribute, None)
        if factory is None:
            raise ValueError(f"policy {spec!r}: {module_name} has no attribute {attribute!r}")
        policy = factory(seed=seed)
    else:
        from rlvr_sim.policies.pusht import SKILLS, PushTPolicy

        if spec not in SKILLS:
            raise ValueError(
                f"unknown policy {spec!r}; PushT skills: {', '.join(SKILLS)}, or 'module:factory'"
            )
        policy = PushTPolicy(spec, seed=seed)
    if not callable(getattr(policy, "act", None)):
        raise ValueError(f"policy {spec!r} has no act(info) method")
    return policy


@dataclass
class StepReadout:
    """What happened on the latest step, for the status bar."""

    reward: float = 0.0
    ssim: float | None = None
    lpips: float | None = None
    note: str = ""


@dataclass
class Filmstrip:
    """Look-ahead frames of the world model (and of the truth when known) for the current action plan."""

    world: list[np.ndarray] = field(default_factory=list)
    truth: list[np.ndarray] = field(default_factory=list)


class FrameScorer:
    """Per-frame SSIM (x100) and LPIPS (x100) of a prediction against the true frame; the network loads once."""

    def __init__(self, with_lpips: bool = True) -> None:
        from rlvr_sim.metrics import video

        self._video = video
        self.perceptual = video.perceptual_metric() if with_lpips else None
        self.lpips_name = self.perceptual.name if self.perceptual is not None else None

    def score(self, predicted: np.ndarray, true: np.ndarray) -> tuple[float, float | None]:
        ssim = float(self._video.ssim(predicted[None], true[None])[0]) * 100.0
        lpips = float(self.perceptual(predicted[None], true[None])[0]) * 100.0 if self.perceptual else None
        return ssim, lpips


class ViewerSession:
    """The live rollout: the world model, optionally the ground truth or an episode, and the action source."""

    def __init__(
        self,
        world: EnvHandle,
        truth: EnvHandle | None = None,
        *,
        mode: str = "play",
        policy: Policy | None = None,
        episode: Episode | None = None,
        scorer: FrameScorer | None = None,
        seed: int = 0,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if mode == "policy" and policy is None:
            raise ValueError("policy mode needs a policy")
        if mode == "replay" and episode is None:
            raise ValueError("replay mode needs an episode (--episode PATH.npz)")
        space = world.env.action_space
        if not isinstance(space, gym.spaces.Box):
            raise ValueError(f"the viewer drives Box action spaces, got {space}")
        if mode == "play" and space.shape != (2,):
            raise ValueError(
                f"play mode sets a 2-D target with the mouse; this env's actions are {space.shape}"
            )
        if episode is not None and episode.actions.shape[1:] != space.shape:
            raise ValueError(
                f"episode {episode.name!r} has actions of shape {episode.actions.shape[1:]}, "
                f"the world model takes {space.shape}"
            )
        self.world = world
        self.truth = truth if mode != "replay" else None
        self.mode = mode
        self.policy = policy
        self.episode = episode
        self.scorer = scorer
        self.seed = seed
        self.action_space = space
        self.human_control = mode == "play"
        self.target = ((space.low + space.high) / 2.0).astype(np.float32)
        self.episodes_started = 0
        self.reset(seed)

    # -- state -----------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Start a new rollout: the truth (or the episode) gives the first frame, the world model starts from it."""
        self.seed = self.seed + 1 if seed is None else seed
        self.step_index = 0
        self.readout = StepReadout(note="reset")
        self.truth_frame: np.ndarray | None = None
        self.truth_info: dict[str, Any] = {}
        if self.episode is not None:
            self.truth_frame = self.episode.frames[0]
        elif self.truth is not None:
            self.truth_frame, self.truth_info = self.truth.reset(seed=self.seed)
        options = {"frame": self.truth_frame} if self.truth_frame is not None else None
        self.world_frame, self.world_info = self.world.reset(seed=self.seed, options=options)
        if self.policy is not None and hasattr(self.policy, "reset"):
            self.policy.reset(self.seed)
        self.episodes_started += 1

    @property
    def policy_info(self) -> dict[str, Any]:
        """The info a policy acts on: the true state when the ground truth runs alongside, else the model's."""
        return self.truth_info if self.truth is not None else self.world_info

    @property
    def steps_left(self) -> int | None:
        """Replay: actions left in the episode; None when the rollout is open-ended."""
        return None if self.episode is None else len(self.episode) - 1 - self.step_index

    def next_action(self) -> np.ndarray:
        """The action the current controller takes now."""
        if self.mode == "replay":
            assert self.episode is not None
            return self.episode.actions[self.step_index]
        if self.human_control or self.policy is None:
            return self.target.copy()
        return self._policy_action(self.policy, self.policy_info)

    def _policy_action(self, policy: Policy, info: dict[str, Any]) -> np.ndarray:
        try:
            return np.asarray(policy.act(info), dtype=np.float32)
        except KeyError as missing:
            source = (
                "the ground truth" if self.truth is not None else "the world model (no ground truth running)"
            )
            raise ValueError(
                f"the policy needs {missing} in the env info, which {source} does not provide; "
                "PushT scripted policies read the true state: run beside gym-pusht (--ground-truth on)"
            ) from None

    def step(self, action: np.ndarray | None = None) -> bool:
        """Advance both worlds by one action (default: the controller's). False when a replay has ended."""
        if self.steps_left == 0:
            self.readout.note = "end of episode (R restarts)"
            return False
        action = self.next_action() if action is None else np.asarray(action, dtype=np.float32)
        self.world_frame, reward, terminated, truncated, self.world_info = self.world.step(action)
        self.step_index += 1
        note = ""
        if self.episode is not None:
            self.truth_frame = self.episode.frames[self.step_index]
        elif self.truth is not None:
            self.truth_frame, _, truth_done, truth_cut, self.truth_info = self.truth.step(action)
            if self.truth_info.get("is_success"):
                note = "ground truth: success"
            terminated, truncated = terminated or truth_done, truncated or truth_cut
        self.readout = StepReadout(reward=reward, note=note)
        if self.scorer is not None and self.truth_frame is not None:
            self.readout.ssim, self.readout.lpips = self.scorer.score(self.world_frame, self.truth_frame)
        if (terminated or truncated) and self.episode is None:
            self.reset()
            self.readout.note = (note + "; " if note else "") + "episode ended, restarted"
        return True

    # -- controls --------------------------------------------------------------------------------------
    def set_target_fraction(self, fx: float, fy: float) -> None:
        """Set the target from a position in a frame as fractions of its width and height (mouse)."""
        low, high = self.action_space.low[:2], self.action_space.high[:2]
        fraction = np.clip(np.array([fx, fy], dtype=np.float64), 0.0, 1.0)
        self.target[:2] = (low + fraction * (high - low)).astype(np.float32)

    def target_fraction(self) -> tuple[float, float]:
        """The current target as fractions of the frame (for drawing the cursor)."""
        low, high = self.action_space.low[:2], self.action_space.high[:2]
        fraction = (self.target[:2] - low) / np.maximum(high - low, 1e-9)
        return float(fraction[0]), float(fraction[1])

    def toggle_control(self) -> bool:
        """Policy mode: take control from the policy or hand it back (DIAMOND's key). Returns human control."""
        if self.mode == "policy" and self.action_space.shape == (2,):
            self.human_control = not self.human_control
            if self.human_control and self.world.actions:
                self.target = self.world.actions[-1].astype(np.float32).copy()  # no jump when taking over
        return self.human_control

    @property
    def temperature(self) -> float | None:
        return get_temperature(self.world.env)

    def change_temperature(self, delta: float) -> float | None:
        """Raise/lower the world model's sampling temperature (floored at 0); None when it has none."""
        current = self.temperature
        if current is None:
            return None
        set_temperature(self.world.env, round(max(0.0, current + delta), 3))
        return self.temperature

    # -- look-ahead ------------------------------------------------------------------------------------
    def filmstrip(self, horizon: int) -> Filmstrip:
        """Predict `horizon` frames ahead for the current plan: the held target (play), the policy's next
        actions (policy; computed on the truth's branch when it runs alongside), or the episode's next actions."""
        strip = Filmstrip()
        if self.mode == "replay":
            assert self.episode is not None
            start = self.step_index
            actions = list(self.episode.actions[start : start + min(horizon, self.steps_left or 0)])
            strip.truth = list(self.episode.frames[start + 1 : start + 1 + len(actions)])
        elif self.human_control or self.policy is None:
            actions = [self.target.copy() for _ in range(horizon)]
            if self.truth is not None:
                strip.truth, _ = self.truth.imagine(lambda k, info: actions[k], horizon, self.truth_info)
        else:
            policy = _branch_policy(self.policy)
            if self.truth is not None:
                strip.truth, actions = self.truth.imagine(
                    lambda k, info: self._policy_action(policy, info), horizon, self.truth_info
                )
            else:
                actions = []

                def plan(k: int, info: dict[str, Any]) -> np.ndarray:
                    actions.append(self._policy_action(policy, info))
                    return actions[-1]

                strip.world, _ = self.world.imagine(plan, horizon, self.world_info)
                return strip
        strip.world, _ = self.world.imagine(
            lambda k, info: actions[k] if k < len(actions) else None, horizon, self.world_info
        )
        return strip

    def close(self) -> None:
        self.world.close()
        if self.truth is not None:
            self.truth.close()


def _branch_policy(policy: Policy) -> Policy:
    """A copy of a stateful policy (noise stream, held action) so the look-ahead does not advance the live one."""
    return copy.deepcopy(policy)
