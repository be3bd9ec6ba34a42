"""Out-of-support detection for learned PushT simulators: is a predicted frame like the frames it was trained on?

A learned simulator is only trustworthy near its training data. `DataSupport` holds the pose codes of a
checkpoint's training frames (its `support.npz`, written by `rlvr_sim.data.support.build_support`) and a
threshold calibrated on held-out frames; Real2Sim (`evaluations/real2sim.py --rollout`) reports, per policy,
the share of a learned simulator's predicted frames beyond it, and flags policies whose rates there are
extrapolation. Pure numpy over judged states (agent x, y; T x, y, angle); no model code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

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
