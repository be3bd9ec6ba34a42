"""Real2Sim's unit of work: one seeded episode of one frame-only policy in one PushT simulator.

An `EpisodeSpec` fixes everything that decides an episode's outcome (simulator, policy, episode index,
seed, horizon, MuJoCo perturbation), so `run_episode` replays it exactly wherever it runs (in this
process or a Ray worker: `real2sim_fanout`). Simulators and a learned checkpoint's data support load once
per process. Policies are named as `make_policy` reads them: a scripted skill, `bc` / `bc:<dir>`, or a
user's `module:Class` implementing the `FramePolicy` protocol (docs/real2sim.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.support import SUPPORT_FILE, DataSupport

MUJOCO_ID = "RLVRSim/PushT-MuJoCo-v0"
# 2 (2026-12-07): a judged success needs the T pixels to show a T (`pusht_pixels.is_tee`); episodes logged by
# version 1 (no such check) are not reused by --resume
JUDGE_VERSION = 2


@dataclass(frozen=True)
class EpisodeSpec:
    """One rollout task: everything that decides its outcome, so it replays the same wherever it runs."""

    sim: str  # "real", "mujoco", "learned:<checkpoint>" or "tokenizer:<checkpoint>"
    policy: str
    episode: int
    seed: int = 0
    horizon: int = 48
    perturb: tuple[tuple[str, Any], ...] = ()  # MuJoCo perturbation (field, value) pairs
    task_overrides: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def sim_name(self) -> str:
        """The simulator's name in reports (perturbed MuJoCo sims carry their perturbation)."""
        if not self.perturb:
            return self.sim
        return f"{self.sim}[" + ",".join(f"{k}={format_level(v)}" for k, v in self.perturb) + "]"


def is_user_policy(name: str) -> bool:
    """Whether a policy name is a user's `module:Class` (not a scripted skill, `bc` or `bc:<dir>`)."""
    return ":" in name and not name.startswith("bc:")


def make_policy(name: str, seed: int) -> Any:
    """A frame-only PushT policy by name, built with `seed`: a scripted skill or `bc` / `bc:<dir>`
    (`rlvr_sim.policies.pusht.make_frame_policy`), or a user's `module:Class` implementing the `FramePolicy`
    protocol (`reset(seed)`, `act(frame) -> (2,) target`), built as `Class(seed=seed)`."""
    if not is_user_policy(name):
        from rlvr_sim.policies.pusht import make_frame_policy

        return make_frame_policy(name, seed=seed)
    from rlvr_sim.envs.collecting import load_class

    policy_class = load_class(name, "policy")
    try:
        policy = policy_class(seed=seed)
    except TypeError as error:
        raise ValueError(f"policy {name!r} must be built as {name.split(':')[-1]}(seed=...): {error}") from error
    missing = [method for method in ("reset", "act") if not callable(getattr(policy, method, None))]
    if missing:
        raise ValueError(f"policy {name!r} lacks {', '.join(missing)}: a FramePolicy has reset(seed) and "
                         "act(frame) (docs/real2sim.md)")
    return policy


def checked_action(policy: Any, frame: np.ndarray, name: str) -> np.ndarray:
    """A user policy's action for `frame` as float32 (2,), or a clear error naming the policy."""
    action = np.asarray(policy.act(frame.copy()), dtype=np.float64)
    if action.shape != (2,) or not np.isfinite(action).all():
        raise ValueError(f"policy {name!r} returned {action!r} for a frame; a PushT action is a finite (x, y) "
                         "target in [0, 512]^2")
    return action.astype(np.float32)


def format_level(value: Any) -> str:
    return "/".join(f"{v:g}" for v in value) if isinstance(value, tuple | list) else f"{value:g}"


def _derived_seed(*parts: int | str) -> int:
    """A 32-bit seed from the episode's identity (strings hashed with crc32: stable across processes)."""
    numbers = [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts]
    return int(np.random.SeedSequence(numbers).generate_state(1)[0])


_SIMULATORS: dict[tuple[str, tuple], Any] = {}
_SUPPORTS: dict[str, DataSupport | None] = {}
_TOKENIZERS: dict[str, Any] = {}
TOKENIZER_SIM = "tokenizer:"  # gym-pusht's own dynamics, each frame shown as a checkpoint's tokenizer draws it back


class TokenizerView:
    """gym-pusht's true frames as a `tokenizer:<checkpoint>` simulator shows them: each frame encoded by the
    checkpoint's tokenizer and drawn back over the true frame the served env would draw over at that step (the
    start frame for the first `horizon` steps, then the anchor of each roll of the context, `horizon // 2` steps
    apart, as `VideoWorldModel` rolls it). What a simulator with that tokenizer and *perfect* dynamics would show:
    its success rates are the ceiling the tokenizer puts on the learned simulator's (a success the tokenizer cannot
    draw back, no world model behind it can show). `checkpoint` is a world model (embedded name or folder) or a bare
    tokenizer folder (`training/tokenizer.py --out`), so a tokenizer is measured before any world model is trained
    on it; a bare tokenizer rolls as a world model of its training `--horizon` would."""

    def __init__(self, checkpoint: str) -> None:
        import json

        from rlvr_sim.envs.video.world_model_env import checkpoint_tokenizer, resolve_checkpoint

        from rlvr_sim.models.lm import read_meta
        from rlvr_sim.models.pose_tokenizer import load_frame_tokenizer
        from rlvr_sim.models.tokenizer_checkpoint import CONFIG_FILE

        config = Path(checkpoint) / CONFIG_FILE if checkpoint else None
        if config is not None and config.is_file():  # a bare tokenizer: rolled at its training horizon
            self.tokenizer = load_frame_tokenizer(checkpoint)
            self.horizon = int(json.loads(config.read_text()).get("horizon", 8))
        else:  # a world model's tokenizer and horizon (its weights are not needed)
            directory = resolve_checkpoint(checkpoint or None)
            settings = read_meta(directory).get("video_settings")
            if settings is None:
                raise ValueError(f"tokenizer:{checkpoint}: {directory} is neither a tokenizer folder nor a video world "
                                 "model (no video_settings in its rlvr_sim.json)")
            self.tokenizer, self.horizon = checkpoint_tokenizer(directory, settings), int(settings["horizon"])
        self.image_size = self.tokenizer.config.image_size
        self.frames: list[np.ndarray] = []

    def show(self, frame: np.ndarray) -> np.ndarray:
        """The next true frame (the first one: the start frame) as the tokenizer draws it back."""
        from rlvr_sim.envs.video.world_model_env import anchor_index

        from rlvr_sim.models.visual_tokenizer import CONDITIONAL

        self.frames.append(frame)
        anchor = self.frames[anchor_index(len(self.frames) - 1, self.horizon)][None]
        return self.tokenizer.decode(self.tokenizer.encode(frame[None], anchor, CONDITIONAL), anchor, CONDITIONAL)[0]


def _tokenizer_view(sim: str) -> TokenizerView:
    """A fresh view (its frame history empty) over the `tokenizer:<checkpoint>` simulator's tokenizer, loaded once."""
    checkpoint = sim[len(TOKENIZER_SIM):]
    if checkpoint not in _TOKENIZERS:
        _TOKENIZERS[checkpoint] = TokenizerView(checkpoint)
    view = _TOKENIZERS[checkpoint]
    view.frames = []
    return view


def _support(env: Any) -> DataSupport | None:
    """The data support shipped with a learned simulator's checkpoint (None when it has no support.npz)."""
    checkpoint = str(getattr(env.unwrapped, "checkpoint", ""))
    if checkpoint not in _SUPPORTS:
        path = Path(checkpoint) / SUPPORT_FILE
        _SUPPORTS[checkpoint] = DataSupport.load(path) if checkpoint and path.is_file() else None
    return _SUPPORTS[checkpoint]


def _simulator(sim: str, perturb: tuple[tuple[str, Any], ...] = (), size: int = 64) -> Any:
    key = (sim, perturb, size)
    if key not in _SIMULATORS:
        import gymnasium as gym

        if sim == "real" or sim.startswith(TOKENIZER_SIM):
            from rlvr_sim.envs.worlds import make_ground_truth

            if sim.startswith(TOKENIZER_SIM):
                size = _tokenizer_view(sim).image_size
            _SIMULATORS[key] = make_ground_truth(size, size)
        elif sim == "mujoco":
            import rlvr_sim  # noqa: F401  (registers the MuJoCo PushT id)

            _SIMULATORS[key] = gym.make(MUJOCO_ID, observation_size=size, perturb=dict(perturb) or None)
        elif sim.startswith("learned:"):
            from rlvr_sim.envs.worlds import make_world_model

            _SIMULATORS[key] = make_world_model(checkpoint=sim.split(":", 1)[1] or None)
        else:
            raise ValueError(f"unknown simulator {sim!r}: use real, mujoco, learned:<checkpoint> or tokenizer:<checkpoint>")
    return _SIMULATORS[key]


def _start_frame(env: Any, state: np.ndarray, spec: EpisodeSpec, world_seed: int) -> tuple[np.ndarray, dict]:
    """Reset `env` to the episode's start: physics sims to the state, learned sims to gym-pusht's frame of it.

    gym-pusht's reset sets the block's position before its angle, which turns the block about its centre of
    mass and moves it off the requested pose by up to ~20 world units; the hand-built simulator starts
    where gym-pusht really put the block, so the two differ only by their physics."""
    if spec.sim == "mujoco":
        _, real_info = _simulator("real").reset(options={"reset_to_state": state})
        state = np.concatenate([real_info["pos_agent"], real_info["block_pose"]]).astype(np.float64)
    if not spec.sim.startswith("learned:"):
        return env.reset(seed=world_seed, options={"reset_to_state": state})
    # gym-pusht's frame of the state at the model's size, made as its training frames were (envs/worlds.py)
    real_frame, _ = _simulator("real", size=int(env.observation_space.shape[0])).reset(options={"reset_to_state": state})
    return env.reset(seed=world_seed, options={"frame": real_frame})


def run_episode(spec: EpisodeSpec, frames: list | None = None) -> dict[str, Any]:
    """Roll one policy for one episode in one simulator; judged (pixel) and, where the sim knows it, true success.
    `frames`: a list that receives every frame the policy and the judge saw, the start frame first."""
    import torch
    from rlvr_sim.envs.worlds import model_frame_skip, repeat_step
    from rlvr_sim.policies.pusht import NearGoalTask

    from rlvr_sim.metrics.pusht_pixels import estimate_state, is_tee

    torch.set_num_threads(1)
    task = NearGoalTask(**{"horizon": spec.horizon, **dict(spec.task_overrides)})
    state = task.sample_start(np.random.default_rng([spec.seed, spec.episode]))
    env = _simulator(spec.sim, spec.perturb)
    learned = spec.sim.startswith("learned:")
    if learned and model_frame_skip(env) != task.frame_skip:
        raise ValueError(f"{spec.sim} steps {model_frame_skip(env)} env steps per frame; the task holds {task.frame_skip}")
    policy = make_policy(spec.policy, seed=_derived_seed(spec.seed, spec.episode, spec.policy))
    user = is_user_policy(spec.policy)  # a user's FramePolicy sees the frame only
    frame, info = _start_frame(env, state, spec, _derived_seed(spec.seed, spec.episode, spec.policy, "world"))
    view = _tokenizer_view(spec.sim) if spec.sim.startswith(TOKENIZER_SIM) else None
    if view is not None:  # the policy and the judge see the tokenizer's picture of gym-pusht's true frames
        frame = view.show(frame)
    estimate = estimate_state(frame)
    if frames is not None:
        frames.append(frame)
    result: dict[str, Any] = {"sim": spec.sim_name, "policy": spec.policy, "episode": spec.episode, "success": False,
                              "success_step": None, "true_success": None}  # fmt: skip
    judge_errors, agreement, uncertainty, support_distance = [], [], [], []
    support = _support(env) if learned else None
    for step in range(1, task.horizon + 1):
        action = checked_action(policy, frame, spec.policy) if user else policy.act(frame, estimate)
        frame, _, terminated, truncated, info = repeat_step(env, action, 1 if learned else task.frame_skip)
        if view is not None:
            frame = view.show(frame)
        if frames is not None:
            frames.append(frame)
        estimate = estimate_state(frame)
        if support is not None:
            support_distance.append(support.state_distance(estimate))
        judged = task.success(estimate["block_pose"]) and is_tee(estimate["block_fit"], frame.shape[0])
        if "uncertainty" in info:
            uncertainty.append(float(np.mean(info["uncertainty"])))
        if "block_pose" in info:  # a physics sim: check the judge against the true state
            true = task.success(info["block_pose"])
            result["true_success"] = bool(result["true_success"]) or true
            agreement.append(judged == true)
            if estimate["block_pose"] is not None:
                error = np.asarray(estimate["block_pose"]) - info["block_pose"]
                judge_errors.append((float(np.linalg.norm(error[:2])), abs(float(np.degrees((error[2] + np.pi) % (2 * np.pi) - np.pi)))))
        if judged and not result["success"]:
            result["success"], result["success_step"] = True, step
        if result["success"] or terminated or truncated:
            break
    result["steps"] = step
    if judge_errors:
        result["judge_position_error"], result["judge_angle_error_deg"] = (float(v) for v in np.mean(judge_errors, axis=0))
        result["judge_frame_agreement"] = float(np.mean(agreement))
    if uncertainty:
        result["uncertainty"] = float(np.mean(uncertainty))
    if learned:  # the share of predicted frames beyond the data's support (None: the checkpoint ships none)
        result["out_of_support"] = float(np.mean(np.array(support_distance) > support.threshold)) if support else None
    return result


def rollout_specs(sims: Sequence[str], policies: Sequence[str], episodes: int, seed: int, horizon: int,
                  perturb: tuple[tuple[str, Any], ...] = ()) -> list[EpisodeSpec]:  # fmt: skip
    """Every (simulator, policy, episode) task, episode by episode (an interrupted run then holds whole
    episodes); `perturb` applies to the MuJoCo sim only."""
    return [
        EpisodeSpec(sim, policy, episode, seed, horizon, perturb if sim == "mujoco" else ())
        for episode in range(episodes)
        for sim in sims
        for policy in policies
    ]
