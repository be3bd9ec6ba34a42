"""Real2Sim policy evaluation: does a simulator rank policies the way the real world does?

`--table`: read per-policy success rates (real world and one or more simulators) from a result table and
write SIMPLER's metrics per task and averaged over tasks: Pearson correlation (higher is better) and
MMRV, the mean maximum rank violation (lower is better). See `rlvr_sim.metrics.real2sim` for the
definitions and table layouts (CSV/TSV, markdown, JSON as simpler-env keeps its numbers).

    python evaluations/real2sim.py --table results.csv --out runs/real2sim
    python evaluations/real2sim.py --table paper_table.md --percent --out runs/real2sim

`--rollout`: measure the rates on PushT. "Real" is gym-pusht; simulators are the hand-built MuJoCo
PushT (`mujoco`) and learned video simulators (`learned:<checkpoint>`). Every policy x episode x
simulator is one seeded task (Ray by default, `--no-ray` in-process: same numbers), every simulator
starts from the same `NearGoalTask` start state (the learned one from gym-pusht's 64x64 frame of it),
every policy sees frames only, and success is judged on frames by the same pixel judge everywhere
(its agreement with gym-pusht's true state is reported). Success rates carry bootstrap 95% intervals
over episodes, Pearson/MMRV per simulator bootstrap intervals over the (paired) episodes.

    python evaluations/real2sim.py --rollout
    python evaluations/real2sim.py --rollout --sims real,mujoco,learned:assets/pusht_pose_rlvr --episodes 20
    python evaluations/real2sim.py --rollout --ray-address ray://head:10001   # a Ray cluster
    python evaluations/real2sim.py --perturb-sweep                           # MuJoCo gaps vs ranking
    python evaluations/real2sim.py --simpler PutCarrotOnPlateInScene-v1      # ManiSkill3, if installed
    python evaluations/real2sim.py --build-support assets/pusht_pose_rlvr    # write its support.npz

Learned simulators also report, per policy, the share of predicted frames out of the training data's
support (`DataSupport`, the checkpoint's `support.npz`), and flag policies above `--support-flag`.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.real2sim import (
    TaskSuccessRates,
    load_success_table,
    mean_maximum_rank_violation,
    pearson_correlation,
    real2sim_report,
    report_markdown,
)
from rlvr_sim.reporting import add_out_argument

DEFAULT_POLICIES = ("expert", "good", "laggy", "mediocre", "poor", "bc", "random")
DEFAULT_SIMS = "real,mujoco,learned:pusht_pose_base,learned:pusht_pose_rlvr"
DEFAULT_OUT = "evaluations/results/real2sim_pusht"
MUJOCO_ID = "RLVRSim/PushT-MuJoCo-v0"
# --perturb-sweep: for each gap of the MuJoCo sim to gym-pusht, the levels charted (the first is none).
PERTURBATIONS: dict[str, list[Any]] = {
    "friction": [0.0, 0.3, 1.0],
    "damping": [0.0, 0.5, 0.9],
    "block_mass": [1.0, 3.0, 10.0],
    "colour_offset": [(0.0, 0.0, 0.0), (30.0, 30.0, 30.0), (60.0, 60.0, 60.0)],
    "camera_offset": [(0.0, 0.0), (12.0, 0.0), (32.0, 0.0)],
}


def evaluate_table(table: str | Path, percent: bool = False, task: str | None = None) -> dict[str, Any]:
    """Pearson and MMRV of every simulator in a result table, per task and averaged over tasks."""
    report = real2sim_report(load_success_table(table, percent=percent, task=task))
    report["source"] = str(table)
    report["metric_definitions"] = {
        "pearson": "Pearson correlation of per-policy success rates, simpler-env formula (higher is better)",
        "mmrv": "mean over policies i of max_j |real_i - real_j| where sim and real order (i, j) "
        "differently, strict >, as simpler-env (lower is better)",
    }
    return report


@dataclass(frozen=True)
class EpisodeSpec:
    """One rollout task: everything that decides its outcome, so it replays the same wherever it runs."""

    sim: str  # "real", "mujoco" or "learned:<checkpoint>"
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
        return f"{self.sim}[" + ",".join(f"{k}={_fmt(v)}" for k, v in self.perturb) + "]"


def _fmt(value: Any) -> str:
    return "/".join(f"{v:g}" for v in value) if isinstance(value, tuple | list) else f"{value:g}"


def _derived_seed(*parts: int | str) -> int:
    """A 32-bit seed from the episode's identity (strings hashed with crc32: stable across processes)."""
    numbers = [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts]
    return int(np.random.SeedSequence(numbers).generate_state(1)[0])


# ---- the data's support: does a learned simulator's frame look like the frames it was trained on? ----
SUPPORT_FILE = "support.npz"  # written into a packaged checkpoint by `build_support`
SUPPORT_ANGLE_SCALE = 60.0  # world units per radian of T angle: turning the T by a moves its bar's ends ~60 a
SUPPORT_QUANTILE = 99.0  # the threshold: this percentile of held-out frames' distances to the training frames
SUPPORT_FLAG_SHARE = 0.10  # flag a policy whose learned rollouts are out of support on more than this share
SUPPORT_MAX_FRAMES = 100_000  # training frames kept (5 bytes each), a seeded subsample beyond
SUPPORT_SLOTS = 5  # agent x, y; T x, y, angle (the pose tokenizer's slots)
# What of a frame must resemble the training frames, as columns of `support_features`: the T's pose, where the
# agent is relative to the T (in the T's body frame: the contact the dynamics turn on), where the agent is in
# the arena, and the whole scene (T pose and contact together).
SUPPORT_COMPONENTS = {"block": (0, 1, 2, 3), "contact": (4, 5), "agent": (6, 7), "scene": (0, 1, 2, 3, 4, 5)}
SUPPORT_MIN_SCALE = 4.0  # world units: one pose bin (512 / 128), the finest difference the codes can show


def support_features(states: np.ndarray) -> np.ndarray:
    """(N, 5) states (agent x, y; T x, y, angle; world units, radians) -> (N, 8) features in world units:
    the T's position, its angle as a point on a circle of radius SUPPORT_ANGLE_SCALE (1 degree weighs ~1
    world unit and the angle wraps), the agent's position in the T's body frame, the agent's position.
    Rows with a missing object (NaN) stay NaN."""
    states = np.asarray(states, dtype=np.float64).reshape(-1, SUPPORT_SLOTS)
    agent_x, agent_y, block_x, block_y, angle = states.T
    cos, sin = np.cos(angle), np.sin(angle)
    dx, dy = agent_x - block_x, agent_y - block_y
    # the T's body frame: world = R(angle) body + position (pusht_pixels._rotate), so body = R(-angle) (world - position)
    rel_x, rel_y = cos * dx + sin * dy, -sin * dx + cos * dy
    scale = SUPPORT_ANGLE_SCALE
    return np.stack([block_x, block_y, scale * cos, scale * sin, rel_x, rel_y, agent_x, agent_y], axis=1)


def _nearest(support: np.ndarray, query: np.ndarray, chunk: int = 32) -> np.ndarray:
    """Euclidean distance from each query row to its nearest support row (exact, brute force in chunks)."""
    norms, out = (support**2).sum(axis=1), np.empty(len(query))
    for start in range(0, len(query), chunk):
        q = query[start : start + chunk]
        squared = (q**2).sum(axis=1)[:, None] + norms[None] - 2.0 * q @ support.T
        out[start : start + chunk] = np.sqrt(np.maximum(squared.min(axis=1), 0.0))
    return out


class DataSupport:
    """The pose codes of a learned simulator's training frames and a calibrated out-of-support threshold.

    For each component c of SUPPORT_COMPONENTS, d_c is the Euclidean distance (world units, in
    `support_features` space) from a judged state, put on the tokenizer's bin grid first (what a model
    frame holds), to the nearest training frame; `scales[c]` is the 99th percentile of d_c over held-out
    (test split) frames, at least one bin. `distance` = max_c d_c / scales[c]: how far the frame is from the
    data in its least familiar respect, in units of that respect's held-out spread (0 for a training
    frame; inf when the judge sees no agent or no T). `threshold`: the SUPPORT_QUANTILE-th percentile of
    `distance` over the held-out frames, so a real frame the model was not trained on exceeds it 1% of the
    time. With `symmetries` (the D4 element indices the model was trained under), the support holds the
    training frames under those symmetries too."""

    def __init__(self, bins: np.ndarray, threshold: float = np.inf, num_bins: int = 128, symmetries: Sequence[int] = (0,),
                 scales: Sequence[float] | None = None, info: dict[str, Any] | None = None) -> None:  # fmt: skip
        from rlvr_sim.models.pose_tokenizer import PoseTokenizer, PoseTokenizerConfig

        self.bins = np.asarray(bins, dtype=np.int64).reshape(-1, SUPPORT_SLOTS)
        self.threshold, self.num_bins = float(threshold), int(num_bins)
        self.symmetries = tuple(int(k) for k in symmetries)
        self.scales = np.ones(len(SUPPORT_COMPONENTS)) if scales is None else np.asarray(scales, dtype=np.float64)
        self.info = dict(info or {})
        self._tokenizer = PoseTokenizer(PoseTokenizerConfig(bins=self.num_bins))
        codes = self.bins + np.arange(SUPPORT_SLOTS) * self._tokenizer.config.slot_size
        expanded = np.unique(np.concatenate([self._tokenizer.symmetry_codes(codes, k) for k in self.symmetries]), axis=0)
        features = support_features(self._tokenizer.codes_to_states(expanded))
        features = features[np.isfinite(features).all(axis=1)]
        if not len(features):
            raise ValueError("the support holds no frame with both the agent and the T visible")
        self._components = [np.unique(features[:, list(cols)], axis=0) for cols in SUPPORT_COMPONENTS.values()]

    def component_distances(self, states: np.ndarray) -> np.ndarray:
        """(N, 5) judged states -> (N, components) nearest-training-frame distances d_c (world units; inf if missing)."""
        states = np.asarray(states, dtype=np.float64).reshape(-1, SUPPORT_SLOTS)
        features = support_features(self._tokenizer.codes_to_states(self._tokenizer.states_to_codes(states)))
        out = np.full((len(features), len(SUPPORT_COMPONENTS)), np.inf)
        finite = np.isfinite(features).all(axis=1)
        for c, (cols, support) in enumerate(zip(SUPPORT_COMPONENTS.values(), self._components)):
            out[finite, c] = _nearest(support, features[finite][:, list(cols)])
        return out

    def distance(self, states: np.ndarray) -> np.ndarray:
        """(N, 5) judged states -> (N,) max over components of d_c / scales[c] (0 on training frames)."""
        return (self.component_distances(states) / self.scales).max(axis=1)

    def state_distance(self, estimate: dict[str, Any]) -> float:
        """The distance of one `estimate_state` reading (inf when the agent or the T is not visible)."""
        if estimate.get("pos_agent") is None or estimate.get("block_pose") is None:
            return float("inf")
        return float(self.distance(np.concatenate([estimate["pos_agent"], estimate["block_pose"]]))[0])

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        np.savez_compressed(path, bins=self.bins.astype(np.uint8 if self.num_bins < 255 else np.int16),
                            threshold=np.float64(self.threshold), num_bins=np.int64(self.num_bins),
                            symmetries=np.array(self.symmetries, dtype=np.int64), scales=self.scales,
                            components=np.array(list(SUPPORT_COMPONENTS)),
                            info=np.array(json.dumps(self.info, sort_keys=True)))  # fmt: skip
        return path

    @classmethod
    def load(cls, path: str | Path) -> DataSupport:
        with np.load(path) as data:
            if data["components"].tolist() != list(SUPPORT_COMPONENTS):
                raise ValueError(f"{path} was built for components {data['components'].tolist()}: rebuild it")
            return cls(data["bins"], float(data["threshold"]), int(data["num_bins"]), data["symmetries"].tolist(),
                       data["scales"], json.loads(str(data["info"])))  # fmt: skip


def _judged_bins(paths: Sequence[Path], image_size: int, frame_skip: int, tokenizer: Any, cache: Path | None,
                 progress: bool = False) -> np.ndarray:  # fmt: skip
    """(N, 5) pose-code bins (0..bins, `bins` = not visible) of every frame of the episodes at `frame_skip`,
    judged as the checkpoint's tokenizer codes them; cached under `cache` (keyed on files and settings)."""
    import hashlib

    from rlvr_sim.data.episodes import load_episode

    key = json.dumps({"files": [[p.name, p.stat().st_size] for p in paths], "size": image_size, "skip": frame_skip,
                      "tokenizer": vars(tokenizer.config)}, sort_keys=True)  # fmt: skip
    cache_file = cache / f"support_codes_{hashlib.sha1(key.encode()).hexdigest()[:16]}.npy" if cache else None
    if cache_file is not None and cache_file.is_file():
        return np.load(cache_file)
    bins = []
    for i, path in enumerate(paths):
        bins.append(tokenizer.encode(load_episode(path, image_size, frame_skip).images) % tokenizer.config.slot_size)
        if progress and (i + 1) % 100 == 0:
            print(f"  judged {i + 1}/{len(paths)} episodes", flush=True)
    out = np.concatenate(bins).astype(np.int16)
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache_file, out)
    return out


def build_support(checkpoint: str | Path, data_dir: str | Path | None = None, out: str | Path | None = None,
                  symmetries: bool | None = None, quantile: float = SUPPORT_QUANTILE,
                  max_frames: int = SUPPORT_MAX_FRAMES, progress: bool = True) -> DataSupport:  # fmt: skip
    """Write `<checkpoint>/support.npz` (or `out`): the judged pose codes of the training split's frames of
    the checkpoint's data set (`rlvr_sim.json` -> video_settings: data_dir unless `data_dir` is given,
    test_fraction, split_seed, frame_skip, image_size, extra_train_dirs) and the threshold calibrated on its
    test split. `symmetries`: include the training frames under the arena's eight symmetries (default: when
    the checkpoint's recorded `augment` is a d4 one)."""
    import torch

    from rlvr_sim.data.episodes import episode_paths, split_paths
    from rlvr_sim.models.lm import read_meta
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer, load_frame_tokenizer

    torch.set_num_threads(1)
    checkpoint = Path(checkpoint)
    meta = read_meta(checkpoint)
    settings = meta.get("video_settings")
    if not settings:
        raise ValueError(f"{checkpoint} is not a video world model checkpoint (no video_settings in rlvr_sim.json)")
    tokenizer = load_frame_tokenizer(checkpoint / settings.get("tokenizer_dir", "tokenizer"))
    if not isinstance(tokenizer, PoseTokenizer):
        raise ValueError(f"{checkpoint}: the data support needs a pose-token checkpoint (PushT pose tokenizer)")
    data_dir = Path(data_dir or settings["data_dir"])
    split = split_paths(episode_paths(data_dir), settings.get("test_fraction", 0.1), settings.get("split_seed", 0))
    train = split["train"] + [p for extra in settings.get("extra_train_dirs", []) for p in episode_paths(extra)]
    if symmetries is None:
        task_args = meta.get("task_args") or meta.get("config", {}).get("task_args", {}) or {}
        symmetries = str(task_args.get("augment", "none")).startswith("d4")
    size, skip, cache = int(settings.get("image_size", 64)), int(settings.get("frame_skip", 1)), data_dir / ".cache"
    start = time.perf_counter()
    train_bins = _judged_bins(train, size, skip, tokenizer, cache, progress)
    test_bins = _judged_bins(split["test"], size, skip, tokenizer, cache, progress)
    kept = train_bins
    if len(kept) > max_frames:
        kept = kept[np.sort(np.random.default_rng(0).choice(len(kept), max_frames, replace=False))]
    num_bins = tokenizer.config.bins
    support = DataSupport(kept, np.inf, num_bins, tuple(range(8)) if symmetries else (0,))
    components = support.component_distances(tokenizer.codes_to_states(test_bins))
    seen = np.isfinite(components).all(axis=1)
    if not seen.any():
        raise ValueError(f"no test frame of {data_dir} shows both the agent and the T: nothing to calibrate on")
    support.scales = np.maximum(np.percentile(components[seen], quantile, axis=0), SUPPORT_MIN_SCALE)
    test_distance = support.distance(tokenizer.codes_to_states(test_bins))
    finite = test_distance[np.isfinite(test_distance)]
    support.threshold = float(np.percentile(finite, quantile))
    support.info = {
        "data_dir": str(data_dir), "train_episodes": len(train), "test_episodes": len(split["test"]),
        "train_frames": int(len(train_bins)), "frames_kept": int(len(kept)), "frame_skip": skip, "image_size": size,
        "quantile": quantile, "angle_scale": SUPPORT_ANGLE_SCALE, "symmetries": bool(symmetries),
        "test_frames": int(len(test_distance)), "test_frames_missing_an_object": int((~np.isfinite(test_distance)).sum()),
        "test_distance_median": float(np.median(finite)), "test_distance_p95": float(np.percentile(finite, 95)),
        "component_scales": dict(zip(SUPPORT_COMPONENTS, support.scales.round(3).tolist())),
        "test_beyond_threshold_per_component": dict(zip(SUPPORT_COMPONENTS, (components[seen] / support.scales
                                                        > support.threshold).mean(axis=0).round(4).tolist())),
        "distance": "max over components (block: T x, y, 60 cos, 60 sin of its angle; contact: agent x, y in the "
                    "T's body frame; agent: agent x, y; scene: block + contact) of the Euclidean distance (world "
                    "units) to the nearest training frame divided by the component's scale (its 99th percentile "
                    "on held-out frames, at least one 4-unit bin); states on the pose tokenizer's bin grid; inf "
                    "when the agent or the T is missing",
        "seconds": round(time.perf_counter() - start, 1),
    }  # fmt: skip
    path = support.save(Path(out) if out else checkpoint / SUPPORT_FILE)
    if progress:
        scales = ", ".join(f"{name} {v:.1f}" for name, v in zip(SUPPORT_COMPONENTS, support.scales))
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB): threshold {support.threshold:.2f} ({quantile:g}th "
              f"percentile of {len(finite)} held-out frames' distances; scales in world units: {scales})", flush=True)  # fmt: skip
    return support


# Simulators live as long as their process (a Ray worker or this one), so a learned checkpoint loads once.
_SIMULATORS: dict[tuple[str, tuple], Any] = {}
_SUPPORTS: dict[str, DataSupport | None] = {}


def _support(env: Any) -> DataSupport | None:
    """The data support shipped with a learned simulator's checkpoint (None when it has no support.npz)."""
    checkpoint = str(getattr(env.unwrapped, "checkpoint", ""))
    if checkpoint not in _SUPPORTS:
        path = Path(checkpoint) / SUPPORT_FILE
        _SUPPORTS[checkpoint] = DataSupport.load(path) if checkpoint and path.is_file() else None
    return _SUPPORTS[checkpoint]


def _simulator(sim: str, perturb: tuple[tuple[str, Any], ...] = (), size: int = 64) -> Any:
    key = (sim, perturb)
    if key not in _SIMULATORS:
        import gymnasium as gym

        if sim == "real":
            from rlvr_sim.envs.worlds import make_ground_truth

            _SIMULATORS[key] = make_ground_truth(size, size)
        elif sim == "mujoco":
            import rlvr_sim  # noqa: F401  (registers the MuJoCo PushT id)

            _SIMULATORS[key] = gym.make(MUJOCO_ID, observation_size=size, perturb=dict(perturb) or None)
        elif sim.startswith("learned:"):
            from rlvr_sim.envs.worlds import make_world_model

            _SIMULATORS[key] = make_world_model(checkpoint=sim.split(":", 1)[1] or None)
        else:
            raise ValueError(f"unknown simulator {sim!r}: use real, mujoco or learned:<checkpoint>")
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
    real_frame, _ = _simulator("real").reset(options={"reset_to_state": state})
    size = int(env.observation_space.shape[0])
    if real_frame.shape[0] != size:
        import cv2

        real_frame = cv2.resize(real_frame, (size, size), interpolation=cv2.INTER_AREA)
    return env.reset(seed=world_seed, options={"frame": real_frame})


def run_episode(spec: EpisodeSpec) -> dict[str, Any]:
    """Roll one policy for one episode in one simulator; judged (pixel) and, where the sim knows it, true success."""
    import torch
    from rlvr_sim.envs.worlds import model_frame_skip, repeat_step
    from rlvr_sim.policies.pusht import NearGoalTask, make_frame_policy

    from rlvr_sim.metrics.pusht_pixels import estimate_state

    torch.set_num_threads(1)
    task = NearGoalTask(**{"horizon": spec.horizon, **dict(spec.task_overrides)})
    state = task.sample_start(np.random.default_rng([spec.seed, spec.episode]))
    env = _simulator(spec.sim, spec.perturb)
    learned = spec.sim.startswith("learned:")
    if learned and model_frame_skip(env) != task.frame_skip:
        raise ValueError(f"{spec.sim} steps {model_frame_skip(env)} env steps per frame; the task holds {task.frame_skip}")
    policy = make_frame_policy(spec.policy, seed=_derived_seed(spec.seed, spec.episode, spec.policy))
    frame, info = _start_frame(env, state, spec, _derived_seed(spec.seed, spec.episode, spec.policy, "world"))
    estimate = estimate_state(frame)
    result: dict[str, Any] = {"sim": spec.sim_name, "policy": spec.policy, "episode": spec.episode, "success": False,
                              "success_step": None, "true_success": None}  # fmt: skip
    judge_errors, agreement, uncertainty, support_distance = [], [], [], []
    support = _support(env) if learned else None
    for step in range(1, task.horizon + 1):
        action = policy.act(frame, estimate)
        frame, _, terminated, truncated, info = repeat_step(env, action, 1 if learned else task.frame_skip)
        estimate = estimate_state(frame)
        if support is not None:
            support_distance.append(support.state_distance(estimate))
        judged = task.success(estimate["block_pose"])
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


def _episode(
    env: Any,
    policy: Any,
    frame: np.ndarray,
    horizon: int,
    judge: Callable[[np.ndarray, dict], float],
    action_repeat: int = 1,
) -> tuple[float, list[np.ndarray]]:
    """Roll `policy` from `frame` for `horizon` decisions (each held `action_repeat` env steps); the best
    judged coverage and the frames seen."""
    from rlvr_sim.envs.worlds import repeat_step

    best, frames = 0.0, [frame]
    for _ in range(horizon):
        frame, _, terminated, truncated, info = repeat_step(env, policy.act(frame), action_repeat)
        frames.append(frame)
        best = max(best, judge(frame, info))
        if terminated or truncated:
            break
    return best, frames


def measure_rollout_rates(
    make_world: Callable[[], Any],
    policies: Sequence[str] = ("expert", "good", "mediocre", "poor", "jitter", "random"),
    episodes: int = 8,
    horizon: int = 40,
    threshold: float = 0.95,
    seed: int = 0,
    frame_size: int = 64,
) -> dict[str, Any]:
    """The earlier coverage-threshold comparison (gym-pusht's default starts): per-policy best goal coverage
    in gym-pusht and in one simulator from the same first frames (`run_rollouts` supersedes it)."""
    from rlvr_sim.envs.worlds import make_ground_truth, model_frame_skip
    from rlvr_sim.policies.pusht import PixelPushTPolicy

    from rlvr_sim.metrics.pusht_pixels import pixel_coverage

    if episodes < 1 or horizon < 1 or not 0.0 < threshold <= 1.0:
        raise ValueError("need episodes >= 1, horizon >= 1 and 0 < threshold <= 1")
    real_env, world = make_ground_truth(frame_size, frame_size), make_world()
    frame_skip = model_frame_skip(world)  # the real env holds each action as long as one model step lasts
    per_policy: dict[str, dict[str, list[float]]] = {}
    start = time.perf_counter()
    try:
        for index, skill in enumerate(policies):
            scores: dict[str, list[float]] = {"real": [], "world_model": [], "real_pixel_judge": []}
            for episode in range(episodes):
                episode_seed = seed + 1000 * index + episode
                frame, _ = real_env.reset(seed=episode_seed)
                real_best, real_frames = _episode(
                    real_env,
                    PixelPushTPolicy(skill, episode_seed),
                    frame,
                    horizon,
                    lambda f, i: i["coverage"],
                    frame_skip,
                )
                world_frame, _ = world.reset(seed=episode_seed, options={"frame": frame})
                world_best, _ = _episode(
                    world,
                    PixelPushTPolicy(skill, episode_seed),
                    world_frame,
                    horizon,
                    lambda f, i: pixel_coverage(f),
                )
                scores["real"].append(real_best)
                scores["world_model"].append(world_best)
                scores["real_pixel_judge"].append(max(pixel_coverage(f) for f in real_frames[1:]))
            per_policy[skill] = scores
    finally:
        real_env.close()
        world.close()
    rates = {
        skill: {name: float(np.mean([v > threshold for v in values])) for name, values in scores.items()}
        for skill, scores in per_policy.items()
    }
    return {
        "rates": rates,
        "max_coverage": per_policy,
        "settings": {
            "episodes": episodes,
            "horizon": horizon,
            "threshold": threshold,
            "seed": seed,
            "frame_size": frame_size,
            "frame_skip": frame_skip,
            "seconds": round(time.perf_counter() - start, 1),
        },
    }


def coverage_table(measured: dict[str, Any]) -> TaskSuccessRates:
    """Mean (over episodes) of each episode's best goal coverage, per policy: a continuous performance
    measure that still ranks policies when few or none reach the success threshold."""
    scores = measured["max_coverage"]
    policies = list(scores)
    columns = {
        name: np.array([np.mean(scores[p][name]) for p in policies]) for name in next(iter(scores.values()))
    }
    real = columns.pop("real")
    return TaskSuccessRates(task="pusht (mean best coverage)", policies=policies, real=real, sims=columns)


def write_rates_table(rates: dict[str, dict[str, float]], path: str | Path) -> Path:
    """The measured rates as a long CSV table (policy, real, world_model, real_pixel_judge) for `--table`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ["real", "world_model", "real_pixel_judge"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["policy", *columns])
        for skill, values in rates.items():
            writer.writerow([skill, *(f"{values[c]:.6f}" for c in columns)])
    return path


def write_report(report: dict[str, Any], out_dir: str | Path, name: str = "real2sim") -> tuple[Path, Path]:
    """Write `<name>.json` and `<name>.md` (a `--table` report) into `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    markdown_path.write_text(f"Real2Sim policy evaluation ({report['source']})\n\n" + report_markdown(report))
    return json_path, markdown_path


def _spec_key(spec: EpisodeSpec) -> str:
    return json.dumps([spec.sim_name, spec.policy, spec.episode, spec.seed, spec.horizon, list(spec.task_overrides)])


def run_episodes(
    specs: Sequence[EpisodeSpec], use_ray: bool = True, ray_address: str | None = None, num_cpus: int = 2,
    progress: bool = True, log: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Run every spec, as Ray tasks (a local instance with `num_cpus`, or the cluster at `ray_address`)
    or in this process; results in the order of `specs` either way. With `log`, every finished episode
    is appended to that JSON-lines file at once and episodes already there are not run again: episodes
    are deterministic, so an interrupted run resumes exactly."""
    from tqdm.auto import tqdm

    done: dict[str, dict[str, Any]] = {}
    if log is not None and Path(log).is_file():
        for line in Path(log).read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                done[record.pop("key")] = record
    todo = [s for s in specs if _spec_key(s) not in done]
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), desc="real2sim rollouts", unit="episode",
               disable=not progress)  # fmt: skip
    handle = open(log, "a") if log is not None else None  # noqa: SIM115 (closed below; appended per episode)

    def finish(spec: EpisodeSpec, result: dict[str, Any]) -> None:
        done[_spec_key(spec)] = result
        if handle is not None:
            handle.write(json.dumps({"key": _spec_key(spec), **result}) + "\n")
            handle.flush()
        bar.update()

    try:
        if not use_ray:
            for spec in todo:
                finish(spec, run_episode(spec))
        elif todo:
            import ray

            if not ray.is_initialized():
                if ray_address:
                    ray.init(address=ray_address)
                else:
                    # Ray renices its workers by +15 unless told otherwise: on a busy machine they would then
                    # only get idle CPU. Keep them at this process's priority (run under `nice` for less).
                    os.environ.setdefault("RAY_worker_niceness", "0")
                    ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level="warning")
            remote = ray.remote(num_cpus=1)(run_episode)
            pending = {remote.remote(spec): spec for spec in todo}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    finish(pending.pop(ref), ray.get(ref))
    finally:
        bar.close()
        if handle is not None:
            handle.close()
    return [done[_spec_key(s)] for s in specs]


def success_matrix(results: Sequence[dict[str, Any]], sims: Sequence[str], policies: Sequence[str]) -> np.ndarray:
    """(sims, policies, episodes) 0/1 judged success, episodes in index order."""
    episodes = sorted({r["episode"] for r in results})
    column = {e: i for i, e in enumerate(episodes)}
    matrix = np.full((len(sims), len(policies), len(episodes)), np.nan)
    sim_index, policy_index = {s: i for i, s in enumerate(sims)}, {p: i for i, p in enumerate(policies)}
    for r in results:
        matrix[sim_index[r["sim"]], policy_index[r["policy"]], column[r["episode"]]] = float(r["success"])
    if np.isnan(matrix).any():
        raise ValueError("missing rollouts: every policy needs every episode in every simulator")
    return matrix


def _interval(samples: np.ndarray) -> list[float]:
    return [float(np.percentile(samples, 2.5)), float(np.percentile(samples, 97.5))]


def summarise(
    results: Sequence[dict[str, Any]], sims: Sequence[str], policies: Sequence[str], boot: int = 2000, seed: int = 0,
    flag_share: float = SUPPORT_FLAG_SHARE,
) -> dict[str, Any]:
    """Per-simulator success rates (bootstrap 95% intervals over episodes) and Pearson/MMRV against `real`
    (intervals from resampling episodes jointly: every policy and simulator shares the start states); per
    learned simulator, each policy's mean out-of-support share of steps, flagged above `flag_share`."""
    if sims[0] != "real":
        raise ValueError("the first simulator must be 'real', the reference the others are scored against")
    success = success_matrix(results, sims, policies)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, success.shape[2], size=(boot, success.shape[2]))
    boot_rates = success[:, :, draws].mean(axis=-1)  # (sims, policies, boot)
    rates = {
        sim: {p: {"rate": float(success[s, i].mean()), "ci95": _interval(boot_rates[s, i])} for i, p in enumerate(policies)}
        for s, sim in enumerate(sims)
    }
    metrics = {}
    for s, sim in enumerate(sims[1:], start=1):
        real, simulated = success[0].mean(-1), success[s].mean(-1)
        pearson = [pearson_correlation(boot_rates[s, :, b], boot_rates[0, :, b]) for b in range(boot)]
        mmrv = [mean_maximum_rank_violation(boot_rates[s, :, b], boot_rates[0, :, b]) for b in range(boot)]
        metrics[sim] = {
            "pearson": pearson_correlation(simulated, real), "pearson_ci95": _interval(np.array(pearson)),
            "mmrv": mean_maximum_rank_violation(simulated, real), "mmrv_ci95": _interval(np.array(mmrv)),
        }  # fmt: skip
    judge = {}
    for sim in sims:
        own = [r for r in results if r["sim"] == sim and r["true_success"] is not None]
        if own:
            judge[sim] = {
                "episode_agreement": float(np.mean([r["success"] == r["true_success"] for r in own])),
                "true_success_rate": float(np.mean([r["true_success"] for r in own])),
                "judged_success_rate": float(np.mean([r["success"] for r in own])),
                "frame_agreement": float(np.mean([r["judge_frame_agreement"] for r in own if "judge_frame_agreement" in r])),
                "mean_position_error": float(np.mean([r["judge_position_error"] for r in own if "judge_position_error" in r])),
                "mean_angle_error_deg": float(np.mean([r["judge_angle_error_deg"] for r in own if "judge_angle_error_deg" in r])),
            }
    uncertainty = {
        sim: float(np.mean(values))
        for sim in sims
        if (values := [r["uncertainty"] for r in results if r["sim"] == sim and "uncertainty" in r])
    }
    return {"policies": list(policies), "sims": list(sims), "episodes": int(success.shape[2]), "rates": rates,
            "metrics": metrics, "judge_vs_truth": judge, "uncertainty": uncertainty,
            "support": support_summary(results, sims, policies, flag_share)}  # fmt: skip


def support_summary(results: Sequence[dict[str, Any]], sims: Sequence[str], policies: Sequence[str],
                    flag_share: float = SUPPORT_FLAG_SHARE) -> dict[str, Any]:  # fmt: skip
    """Per learned simulator: available (its checkpoint ships support.npz), each policy's mean share of
    out-of-support steps over its episodes, and the policies above `flag_share` ("flagged")."""
    out = {}
    for sim in sims:
        own = [r for r in results if r["sim"] == sim and "out_of_support" in r]
        if not own:
            continue
        if any(r["out_of_support"] is None for r in own):
            out[sim] = {"available": False}
            continue
        share = {p: float(np.mean([r["out_of_support"] for r in own if r["policy"] == p])) for p in policies}
        out[sim] = {"available": True, "flag_share": flag_share, "out_of_support": share,
                    "flagged": [p for p in policies if share[p] > flag_share]}  # fmt: skip
    return out


def rollout_markdown(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    """Success rates per policy x simulator, Pearson/MMRV per simulator and the judge's agreement, as markdown."""
    sims = summary["sims"]
    task = settings["task"]
    lines = [
        f"PushT near-goal task: block within {task['position_tol']:g} world units and {task['angle_tol_deg']:g} deg of "
        f"the goal pose (pixel judge) within {task['horizon']} model steps of {task['frame_skip']} env steps; "
        f"{summary['episodes']} episodes per policy and simulator, shared start states (seed {settings['seed']}). "
        "Success rate [bootstrap 95% interval over episodes]:",
        "",
        "| policy | " + " | ".join(sims) + " |",
        "|---|" + "---:|" * len(sims),
    ]
    for policy in summary["policies"]:
        cells = [summary["rates"][s][policy] for s in sims]
        lines.append(f"| {policy} | " + " | ".join(f"{c['rate']:.2f} [{c['ci95'][0]:.2f}, {c['ci95'][1]:.2f}]" for c in cells) + " |")
    lines += ["", "| simulator vs real | Pearson (higher better) | MMRV (lower better) |", "|---|---:|---:|"]
    for sim, m in summary["metrics"].items():
        lines.append(
            f"| {sim} | {m['pearson']:.3f} [{m['pearson_ci95'][0]:.3f}, {m['pearson_ci95'][1]:.3f}] "
            f"| {m['mmrv']:.3f} [{m['mmrv_ci95'][0]:.3f}, {m['mmrv_ci95'][1]:.3f}] |"
        )
    if summary["judge_vs_truth"]:
        lines += ["", "Pixel judge vs the simulator's true state (same frames):", "",
                  "| simulator | episode success agreement | true success rate | judged success rate | frame agreement "
                  "| mean position error (world units) | mean angle error (deg) |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for sim, j in summary["judge_vs_truth"].items():
            lines.append(
                f"| {sim} | {j['episode_agreement']:.3f} | {j['true_success_rate']:.3f} | {j['judged_success_rate']:.3f} "
                f"| {j['frame_agreement']:.4f} | {j['mean_position_error']:.2f} | {j['mean_angle_error_deg']:.2f} |"
            )
    if summary["uncertainty"]:
        lines += ["", "Mean `info['uncertainty']`: " + ", ".join(f"{s} {u:.4f}" for s, u in summary["uncertainty"].items())]
    lines += support_markdown(summary.get("support", {}), summary["policies"])
    lines += ["", f"Command: `{settings['command']}` ({settings['seconds']:.0f} s, {settings['backend']})", ""]
    return "\n".join(lines)


def support_markdown(support: dict[str, Any], policies: Sequence[str]) -> list[str]:
    """The out-of-support table (markdown lines) of the learned simulators, and which ship no support."""
    have = [sim for sim, s in support.items() if s["available"]]
    lines = []
    if have:
        share = support[have[0]]["flag_share"]
        lines += ["", "Out of the data's support: share of a learned simulator's predicted frames whose judged state is "
                  "farther from every training frame than the checkpoint's calibrated threshold (`support.npz`: the "
                  "99th percentile of held-out real frames' distances, so about 1% for frames like the data); "
                  f"**OUT** marks a policy out of support on more than {100 * share:g}% of its steps (its rates there "
                  "are extrapolation):", "",
                  "| policy | " + " | ".join(have) + " |", "|---|" + "---:|" * len(have)]  # fmt: skip
        for policy in policies:
            cells = [f"{100 * support[s]['out_of_support'][policy]:.1f}%" + (" **OUT**" if policy in support[s]["flagged"] else "")
                     for s in have]  # fmt: skip
            lines.append(f"| {policy} | " + " | ".join(cells) + " |")
        for sim in have:
            s = support[sim]
            if "threshold" in s:
                lines += ["", f"{sim}: threshold {s['threshold']:.2f} (distance in units of each component's held-out 99th "
                          f"percentile; {s['checkpoint']}/{SUPPORT_FILE}; docs/real2sim.md)."]
    for sim, s in support.items():
        if not s["available"]:
            lines += ["", f"{sim}: its checkpoint ships no `{SUPPORT_FILE}`, so out-of-support steps are not measured "
                      f"(create it: `python evaluations/real2sim.py --build-support <checkpoint> --data <episodes>`)."]  # fmt: skip
    return lines


def plot_rollout(summary: dict[str, Any], path: str | Path) -> Path | None:
    """Real vs simulated success, one point per policy (with 95% intervals), one panel per simulator."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'rlvr-sim[real2sim]'): no plot", file=sys.stderr)
        return None
    sims = summary["sims"][1:]
    figure, axes = plt.subplots(1, len(sims), figsize=(4.2 * len(sims), 4.2), squeeze=False)
    real = summary["rates"]["real"]
    for axis, sim in zip(axes[0], sims):
        for policy in summary["policies"]:
            x, y = real[policy], summary["rates"][sim][policy]
            axis.errorbar(x["rate"], y["rate"], xerr=[[x["rate"] - x["ci95"][0]], [x["ci95"][1] - x["rate"]]],
                          yerr=[[y["rate"] - y["ci95"][0]], [y["ci95"][1] - y["rate"]]], fmt="o", capsize=3)  # fmt: skip
            axis.annotate(policy, (x["rate"], y["rate"]), textcoords="offset points", xytext=(4, 4), fontsize=8)
        axis.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--")
        m = summary["metrics"][sim]
        axis.set(xlim=(-0.05, 1.05), ylim=(-0.05, 1.05), xlabel="real (gym-pusht) success", ylabel=f"{sim} success")
        axis.set_title(f"{sim}\nPearson {m['pearson']:.2f}, MMRV {m['mmrv']:.3f}", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return Path(path)


def plot_sweep(sweep: dict[str, list[dict[str, Any]]], path: str | Path) -> Path | None:
    """Pearson and MMRV of the MuJoCo sim vs real against each perturbation's level."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'rlvr-sim[real2sim]'): no plot", file=sys.stderr)
        return None
    figure, axes = plt.subplots(2, len(sweep), figsize=(3.2 * len(sweep), 5.6), squeeze=False)
    for column, (kind, rows) in enumerate(sweep.items()):
        levels = list(range(len(rows)))
        for row, metric in enumerate(("pearson", "mmrv")):
            axis = axes[row][column]
            values = [r[metric] for r in rows]
            low = [r[metric] - r[f"{metric}_ci95"][0] for r in rows]
            high = [r[f"{metric}_ci95"][1] - r[metric] for r in rows]
            axis.errorbar(levels, values, yerr=[low, high], fmt="o-", capsize=3)
            axis.set_xticks(levels, [_fmt(r["level"]) for r in rows], fontsize=8)
            axis.set(xlabel=kind, ylabel=metric)
    figure.suptitle("MuJoCo PushT vs gym-pusht: ranking agreement as the gap grows", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return Path(path)


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


def _settings(args: argparse.Namespace, argv: Sequence[str] | None, seconds: float) -> dict[str, Any]:
    from rlvr_sim.policies.pusht import NearGoalTask

    return {
        "task": asdict(NearGoalTask(horizon=args.horizon)),
        "seed": args.seed,
        "episodes": args.episodes,
        "command": "python evaluations/real2sim.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "backend": "in-process" if args.no_ray else f"ray ({args.ray_address or f'local, {args.num_cpus} CPUs'})",
        "seconds": seconds,
    }


def _episode_log(args: argparse.Namespace) -> Path:
    """`<out>/episodes.jsonl`, emptied unless `--resume`: its records do not know which code or which
    checkpoint contents produced them, so only the user can say they still hold."""
    log = Path(args.out) / "episodes.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    if not args.resume:
        log.write_text("")
    return log


def rollout(args: argparse.Namespace, argv: Sequence[str] | None) -> dict[str, Any]:
    """`--rollout`: every policy x episode x simulator, then rates, metrics, table, plot."""
    sims = [s.strip() for s in args.sims.split(",") if s.strip()]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if len(set(sims)) != len(sims) or len(set(policies)) != len(policies):
        raise SystemExit("--sims and --policies must not repeat a name")
    start = time.perf_counter()
    specs = rollout_specs(sims, policies, args.episodes, args.seed, args.horizon)
    out = Path(args.out)
    results = run_episodes(specs, not args.no_ray, args.ray_address, args.num_cpus, not args.quiet, _episode_log(args))
    summary = summarise(results, sims, policies, seed=args.seed, flag_share=args.support_flag)
    for sim, entry in summary["support"].items():  # where each support came from, and its calibration
        entry.update(_support_details(sim))
    report = {"settings": _settings(args, argv, time.perf_counter() - start), **summary, "episodes_detail": results}
    # real2sim.md: the name evaluations/report.py puts in the README's results section
    (out / "real2sim.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "real2sim.md").write_text(rollout_markdown(summary, report["settings"]))
    plot_rollout(summary, out / "real2sim_pusht.png")
    print((out / "real2sim.md").read_text())
    print(f"wrote {out / 'real2sim.json'}, {out / 'real2sim.md'}, {out / 'real2sim_pusht.png'}")
    return report


def _support_details(sim: str) -> dict[str, Any]:
    """The checkpoint directory of a `learned:` simulator and, where it ships one, its support's calibration."""
    from rlvr_sim.envs.video.world_model_env import resolve_checkpoint

    from rlvr_sim.resources import display_path

    checkpoint = resolve_checkpoint(sim.split(":", 1)[1] or None)
    path = checkpoint / SUPPORT_FILE
    if not path.is_file():
        return {"checkpoint": display_path(checkpoint)}
    support = DataSupport.load(path)
    return {"checkpoint": display_path(checkpoint), "threshold": support.threshold, "calibration": support.info}


def perturb_sweep(args: argparse.Namespace, argv: Sequence[str] | None) -> dict[str, Any]:
    """`--perturb-sweep`: Pearson/MMRV of the MuJoCo sim vs real as each of its gaps to gym-pusht grows."""
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    start = time.perf_counter()
    configs = [()] + [((kind, level),) for kind, levels in PERTURBATIONS.items() for level in levels[1:]]
    specs = rollout_specs(["real"], policies, args.episodes, args.seed, args.horizon)
    for perturb in configs:
        specs += rollout_specs(["mujoco"], policies, args.episodes, args.seed, args.horizon, perturb)
    specs.sort(key=lambda spec: spec.episode)  # episode by episode, as rollout_specs
    out = Path(args.out)
    results = run_episodes(specs, not args.no_ray, args.ray_address, args.num_cpus, not args.quiet, _episode_log(args))
    names = ["real"] + [EpisodeSpec("mujoco", "", 0, perturb=p).sim_name for p in configs]
    summary = summarise(results, names, policies, seed=args.seed)
    sweep = {
        kind: [{"level": level, **summary["metrics"][EpisodeSpec("mujoco", "", 0, perturb=((kind, level),) if i else ()).sim_name]}
               for i, level in enumerate(levels)]
        for kind, levels in PERTURBATIONS.items()
    }  # fmt: skip
    report = {"settings": _settings(args, argv, time.perf_counter() - start), **summary, "sweep": sweep}
    lines = ["# Real2Sim on PushT: MuJoCo perturbation sweep", "", rollout_markdown(summary, report["settings"]), "",
             "| perturbation | level | Pearson | MMRV |", "|---|---:|---:|---:|"]  # fmt: skip
    for kind, rows in sweep.items():
        for r in rows:
            lines.append(f"| {kind} | {_fmt(r['level'])} | {r['pearson']:.3f} [{r['pearson_ci95'][0]:.3f}, "
                         f"{r['pearson_ci95'][1]:.3f}] | {r['mmrv']:.3f} [{r['mmrv_ci95'][0]:.3f}, {r['mmrv_ci95'][1]:.3f}] |")  # fmt: skip
    (out / "perturb_sweep.json").write_text(json.dumps(report, indent=2, default=list) + "\n")
    (out / "perturb_sweep.md").write_text("\n".join(lines) + "\n")
    plot_sweep(sweep, out / "perturb_sweep.png")
    print((out / "perturb_sweep.md").read_text())
    return report


def run_simpler(task: str, episodes: int = 2, seed: int = 0, max_steps: int = 60) -> dict[str, Any]:
    """Roll a seeded random policy in a ManiSkill3 SIMPLER scene (e.g. PutCarrotOnPlateInScene-v1), to
    show the scene runs here; a clear skip when ManiSkill3 (mani-skill, SAPIEN 3) is not importable."""
    try:
        import gymnasium as gym
        import mani_skill.envs  # noqa: F401  (registers the ManiSkill3 / SIMPLER ids)
    except ImportError as error:
        message = (f"SIMPLER skipped: ManiSkill3 is not importable here ({error}). Install `mani-skill` "
                   "(SAPIEN 3, a Vulkan driver) to run its Bridge/WidowX scenes; see docs/real2sim.md.")  # fmt: skip
        print(message)
        return {"skipped": message, "task": task}
    env = gym.make(task, obs_mode="rgb", num_envs=1)
    rng = np.random.default_rng(seed)
    successes = []
    try:
        for episode in range(episodes):
            env.reset(seed=seed + episode)
            success = False
            for _ in range(max_steps):
                action = rng.uniform(env.action_space.low, env.action_space.high).astype(np.float32)
                _, _, terminated, truncated, info = env.step(action)
                success = success or bool(np.asarray(info.get("success", False)).any())
                if np.asarray(terminated).any() or np.asarray(truncated).any():
                    break
            successes.append(success)
    finally:
        env.close()
    result = {"task": task, "policy": "random", "episodes": episodes, "success_rate": float(np.mean(successes))}
    print(json.dumps(result))
    return result


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="Real2Sim: Pearson/MMRV from a table, or measured PushT rollouts.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", help="CSV/TSV, markdown or JSON table of success rates")
    source.add_argument("--rollout", action="store_true", help="measure PushT rates: real vs simulators")
    source.add_argument("--perturb-sweep", action="store_true", help="MuJoCo sim vs real as its gaps grow")
    source.add_argument("--simpler", metavar="TASK", help="a ManiSkill3 SIMPLER task id (skips if not installed)")
    source.add_argument("--build-support", metavar="CHECKPOINT",
                        help=f"write CHECKPOINT/{SUPPORT_FILE} (training frames' pose codes, calibrated threshold)")
    parser.add_argument("--percent", action="store_true", help="numbers in the table are percentages")
    parser.add_argument("--task", help="task name of a single-task table (default: the file name)")
    add_out_argument(parser, help=f"output folder (default: runs/real2sim for --table, {DEFAULT_OUT} otherwise)")
    rollout_args = parser.add_argument_group("rollout")
    rollout_args.add_argument("--sims", default=DEFAULT_SIMS, help="comma-separated: real (first), mujoco, learned:<checkpoint>")
    rollout_args.add_argument("--policies", default=",".join(DEFAULT_POLICIES), help="comma-separated PushT policies")
    rollout_args.add_argument("--episodes", type=int, default=20, help="episodes per policy and simulator")
    rollout_args.add_argument("--horizon", type=int, default=48, help="model steps per episode (4 env steps each)")
    rollout_args.add_argument("--seed", type=int, default=0)
    rollout_args.add_argument("--no-ray", action="store_true", help="run every episode in this process")
    rollout_args.add_argument("--ray-address", help="a running Ray cluster (default: start a local instance)")
    rollout_args.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance")
    rollout_args.add_argument("--quiet", action="store_true", help="no progress bar")
    rollout_args.add_argument("--resume", action="store_true", help="keep episodes already in <out>/episodes.jsonl")
    rollout_args.add_argument("--support-flag", type=float, default=SUPPORT_FLAG_SHARE,
                              help="flag policies out of the data's support on more than this share of learned steps")
    parser.add_argument("--data", help="--build-support: episode folder (default: the checkpoint's data_dir)")
    args = parser.parse_args(argv)
    if args.build_support:
        support = build_support(args.build_support, args.data)
        return {"threshold": support.threshold, **support.info}
    if args.simpler:
        return run_simpler(args.simpler, seed=args.seed)
    if args.table:
        report = evaluate_table(args.table, percent=args.percent, task=args.task)
        json_path, markdown_path = write_report(report, args.out or "runs/real2sim")
        print(markdown_path.read_text())
        print(f"wrote {json_path} and {markdown_path}")
        return report
    args.out = args.out or DEFAULT_OUT
    return rollout(args, argv) if args.rollout else perturb_sweep(args, argv)


if __name__ == "__main__":
    # Run as the installed module, so Ray pickles `run_episode` by reference and workers import it (with
    # its per-process simulator cache) instead of receiving a copy of this script's globals.
    from rlvr_sim.evaluations.real2sim import main as package_main

    package_main()
