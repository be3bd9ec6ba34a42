"""Video world-model task (registered as "pusht"): frames and actions as tokens, verifiable frame rewards.

Vocabulary: [frame codes | action bins | specials] = [0, C) codes of the frame tokenizer (the PushT pose
tokenizer: 5 per frame; or the learned compressive FSQ tokenizer), [C, C + 256 A) action bins (256 per
action dimension, dimension d owns [C + 256 d, C + 256 (d + 1))), then PAD and BOS. A window of the data
starts at an anchor frame x_0 and lays out

    BOS | x_0 absolute codes | a_0 | f_1 | a_1 | f_2 | ... | a_{T-1} | f_T

where f_t are the codes of x_t (conditional on x_0 for the FSQ tokenizer) and a_t the binned action that
moves x_t to x_{t+1}. With `layout="relational"` (pose tokenizer) f_t is the agent's codes plus the T's
displacement in x_{t-1}'s T body frame, and a_t is followed by the agent's and the target's positions in
x_t's T body frame (`VideoCodec`); a rollout computes those forced tokens from its own frames (`StateForcing`). Two example kinds share that layout, so one MLE model serves both:
- multi-step (`mode="multi"`, RLVR-World's video setting): prompt BOS x_0 a_0; the model generates
  f_1..f_T and the ground-truth a_1..a_{T-1} are forced in between (sampler interleaving; never in the
  RL loss, and in the SFT loss only with `learn_forced`);
- single-step (`mode="single"`): prompt holds k context frames (x_0 and f_1..f_{k-1} with actions);
  the model generates f_k.
Reward, by `reward_kind`: predicted codes are decoded (with the true anchor frame) and each predicted
frame is scored against the true frame, averaged over frames: "perceptual" -(MAE + LPIPS) (the paper's;
[0, 1] pixels, LPIPS on [-1, 1]), "object" -(agent px + T px + T angle / 5) read by the pixel judge (on the
arm: tip px + puck px), "both" their sum (object / 10). An optional repetition penalty subtracts
`repetition_penalty` when a predicted frame repeats the one before it where the truth changed
(`rlvr_sim.metrics.video.repetition_rate`).
A completion too short for the layout gets `worst_reward`; a frame holding a non-code token (an action or
special token where a frame token belongs) is scored as the worst frame.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics import arm_pixels, pusht_pixels
from rlvr_sim.metrics.pusht_pixels import MAX_PENETRATION
from rlvr_sim.tasks.base import Example, GenerationSpec
from rlvr_sim.tasks.video_augment import (
    check_augment,
    shift_codes,
    symmetric_action_bins,
    window_variants,
)
from rlvr_sim.tasks.video_data import Windows, load_windows

WORST_REWARD = -2.0  # MAE <= 1 and LPIPS ~<= 1 on any frame, so no decodable prediction scores lower
# reward_kind: "perceptual" -(MAE + LPIPS) (the paper's), "object" -(agent + block position error in px
# at 64x64 + angle error / 5 degrees; on the arm, tip + puck px) read by the scene's pixel judge on decoded
# frames (each term capped, see rlvr_sim.metrics.pusht_pixels.object_errors), "both" their sum with the object
# score scaled by 1/10.
REWARD_KINDS = ("perceptual", "object", "both")
# the scenes whose objects a pixel judge reads off any frame, true or predicted: each module has `judge_states`,
# `object_errors`, `object_score` and `WORST_OBJECT_SCORE` (PushT: agent px + T px + angle / 5; arm: tip px + puck px)
SCENE_JUDGES = {"pusht": pusht_pixels, "arm": arm_pixels}


# augment ("none", "d4", "d4_shift"): rlvr_sim.tasks.video_augment
# layout: "pose" = each frame's codes as they are; "relational" = agent codes + the T's body-frame displacement,
# with body-frame agent and target tokens forced after each frame (`VideoCodec`, docs/video.md); "delta"
# (keypoint tokenizers: ordered per-coordinate levels) = each coordinate's change since the previous frame;
# "mixed" (keypoint tokenizers) = the change for the points that stay still in most training transitions (the
# objects that wait to be pushed), the coordinates themselves for the rest (what the actions drive)
LAYOUTS = ("pose", "relational", "delta", "mixed")
STILL_SHARE = 0.5  # "mixed": a point is change-coded if it moves in fewer than this share of training transitions


# Relational pose layout (`VideoCodec.relational`, task option `layout: relational`; pose tokenizer only).
# Generated per frame: agent x, y (pose codes) and the T's displacement since the previous frame in that
# frame's T body frame (du, dv in world units, dtheta in angle bins); forced after every frame besides the
# action: the agent's position and the commanded target in the current T body frame. Contact is a fixed
# region of the T's body frame, so in these coordinates a push is the same push wherever the T lies and
# however it is turned (docs/video.md gives the measured reason).
DISP_RANGE, ANGLE_DISP_RANGE = 96, 32  # |du|, |dv| <= 96 world units (1 per bin), |dtheta| <= 32 angle bins
REL_RANGE, REL_STEP = 160, 2  # body-frame positions in [-160, 160] world units, 2 units per bin (clipped)
REL_SLOTS = ("agent_u", "agent_v", "target_u", "target_v")
# Object frame of the keypoint layouts (`VideoCodec.object_frame`, task option `object_frame: true`; docs/video.md).
# The pose layout's body frame, read off learned points: the change-coded points are the objects that wait to be
# pushed, their centroid the frame's origin and the direction to one of them (`frame_point`) its x axis. Forced after
# every frame besides the action: the actor point nearest that centroid (PushT: the agent; an arm: the link closest to
# the puck) and, when the action is an image position (`action_spans_frame`), the commanded target, both in that frame
# in code levels (1 level per bin, clipped at OBJ_RANGE: 32 px at 64x64 with 128 levels).
OBJ_RANGE = 64


def still_slots(codes: np.ndarray, share: float = STILL_SHARE) -> list[int]:
    """The "mixed" layout's change-coded slots: both coordinates of every point whose code changes (in either
    coordinate) in fewer than `share` of the consecutive frame pairs of `codes` (windows (W, F, 2K) or (F, 2K))."""
    codes = np.asarray(codes, dtype=np.int64)
    codes = codes.reshape(-1, *codes.shape[-2:]) if codes.ndim > 2 else codes[None]
    if codes.shape[-1] % 2 or codes.shape[1] < 2:
        raise ValueError(f"need windows of >= 2 frames of (x, y) codes per point, got shape {codes.shape}")
    moved = (codes[:, 1:] != codes[:, :-1]).reshape(-1, codes.shape[-1] // 2, 2).any(-1).mean(0)
    return [2 * p + c for p in np.flatnonzero(moved < share).tolist() for c in (0, 1)]


def widest_point(codes: np.ndarray, delta_slots: list[int]) -> int | None:
    """The object frame's `frame_point`: the change-coded point farthest from the change-coded points' centroid on
    average over `codes` (W, F, 2K) (its direction from the centroid turns with the object and is the least
    disturbed by a level's rounding); None with fewer than two such points (a translated frame)."""
    objects = sorted({s // 2 for s in delta_slots})
    if len(objects) < 2:
        return None
    points = np.asarray(codes, dtype=np.float64).reshape(-1, np.shape(codes)[-1] // 2, 2)[:, objects]
    distance = np.linalg.norm(points - points.mean(1, keepdims=True), axis=-1).mean(0)
    return int(objects[int(np.argmax(distance))])


class LazyExamples(Sequence):
    """A read-only sequence of examples made on demand: `build(variant, j)` for the `j`-th of `sizes[variant]`."""

    def __init__(self, build: Callable[[int, int], Example], sizes: list[int]) -> None:
        self._build, self._ends = build, np.cumsum(np.asarray(sizes, dtype=np.int64))

    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = operator.index(i)
        i = i + len(self) if i < 0 else i
        if not 0 <= i < len(self):
            raise IndexError(f"example {i} out of range ({len(self)} examples)")
        v = int(np.searchsorted(self._ends, i, side="right"))
        return self._build(v, i - (int(self._ends[v - 1]) if v else 0))


@dataclass
class VideoCodec:
    """Token layout shared by the task, the evaluation and the env (saved with the checkpoint).

    Vocabulary: [frame codes | displacement tokens (relational only) | action bins | body-frame tokens
    (relational only) | PAD, BOS]. `cond_tokens` tokens are generated per frame and `chunk_len` forced
    after it (the action; with `relational` also its body-frame tokens, see the comment above)."""

    codebook_size: int
    action_dim: int
    abs_tokens: int
    cond_tokens: int
    num_bins: int = 256
    relational: bool = False
    action_low: list[float] | None = None  # world range of the action bins (relational: targets in body frame)
    action_high: list[float] | None = None
    # Delta / mixed layouts (keypoint codes, each an ordered level in [0, codebook_size)): the generated frame
    # slots in `delta_slots` hold the change of their coordinate since the previous frame, modulo codebook_size
    # (so "nothing moved" is token 0 wherever the point is, and the round trip is exact; decoded as (previous +
    # token) mod C); the other slots hold the coordinate itself.
    delta_slots: list[int] | None = None
    # Object frame (delta / mixed layouts, see OBJ_RANGE above): forced object-frame tokens after every frame;
    # `frame_point` is the change-coded point that sets the frame's x axis (None: a translated frame, no turn);
    # `action_spans_frame`: the first two action dimensions are an image position spanning the frame over the
    # action bins' range (PushT's agent target), so the target is given in the object frame too.
    object_frame: bool = False
    frame_point: int | None = None
    action_spans_frame: bool = False

    @property
    def delta(self) -> bool:
        return bool(self.delta_slots)

    @property
    def stateful(self) -> bool:
        """Whether a generated frame's tokens depend on the frame before it (relational and delta layouts)."""
        return self.relational or self.delta

    @property
    def chunks_follow_frames(self) -> bool:
        """Whether the forced tokens after a frame are computed from that frame (relational, object frame):
        a sampled rollout then computes them from its own frames (`StateForcing`)."""
        return self.relational or self.object_frame

    @property
    def object_points(self) -> list[int]:
        """Indices of the change-coded points (both coordinates in `delta_slots`)."""
        return sorted({s // 2 for s in self.delta_slots or ()})

    @property
    def actor_points(self) -> list[int]:
        """Indices of the points coded as coordinates (what the actions drive)."""
        return [p for p in range(self.cond_tokens // 2) if p not in self.object_points]

    @property
    def rel_slots(self) -> int:
        """Forced body-frame / object-frame tokens after every frame (besides the action)."""
        if self.relational:
            return len(REL_SLOTS)
        return (2 + 2 * self.action_spans_frame) if self.object_frame else 0

    def __post_init__(self) -> None:
        if self.delta_slots is not None:
            self.delta_slots = sorted({int(i) for i in self.delta_slots})
            if self.relational or self.abs_tokens != self.cond_tokens:
                raise ValueError("the delta layout needs one code per coordinate in both the anchor and the generated "
                                 "frames (a keypoint tokenizer) and excludes the relational layout")
            if self.delta_slots and not 0 <= self.delta_slots[0] <= self.delta_slots[-1] < self.cond_tokens:
                raise ValueError(f"delta_slots must index the {self.cond_tokens} frame slots, got {self.delta_slots}")
        if self.object_frame:
            if not self.delta or not self.actor_points:
                raise ValueError("object_frame needs the delta / mixed layout with some change-coded points (the objects) "
                                 f"and some coded as coordinates (the actor); delta_slots {self.delta_slots} of "
                                 f"{self.cond_tokens} frame slots")
            if self.frame_point is not None and self.frame_point not in self.object_points:
                raise ValueError(f"frame_point must be a change-coded point {self.object_points}, got {self.frame_point}")
            if self.action_spans_frame and self.action_dim < 2:
                raise ValueError(f"action_spans_frame needs >= 2 action dimensions, got {self.action_dim}")
        elif self.frame_point is not None or self.action_spans_frame:
            raise ValueError("frame_point and action_spans_frame are options of object_frame")
        if self.relational and (self.abs_tokens != 5 or self.cond_tokens != 5 or self.action_dim != 2
                                or self.action_low is None or self.action_high is None):
            raise ValueError("the relational layout needs the PushT pose tokenizer (5 codes per frame), 2-D "
                             "actions and their world range (action_low, action_high)")

    # ---- vocabulary ----
    @property
    def disp_sizes(self) -> tuple[int, ...]:
        """Codes per displacement slot (du, dv, dtheta), each with a last "unknown" code."""
        return (2 * DISP_RANGE + 2, 2 * DISP_RANGE + 2, 2 * ANGLE_DISP_RANGE + 2) if self.relational else ()

    @property
    def frame_vocab(self) -> int:
        """Token ids [0, frame_vocab) are the ones a generated frame may hold."""
        return self.codebook_size + sum(self.disp_sizes)

    @property
    def action_offset(self) -> int:
        return self.frame_vocab

    @property
    def rel_size(self) -> int:
        if self.object_frame:
            return 2 * OBJ_RANGE + 1  # code levels from the object centroid, clipped
        return 2 * (REL_RANGE // REL_STEP) + 2  # bins plus "unknown" (the T not visible)

    @property
    def rel_offset(self) -> int:
        return self.action_offset + self.num_bins * self.action_dim

    @property
    def pad_id(self) -> int:
        return self.rel_offset + self.rel_slots * self.rel_size

    @property
    def bos_id(self) -> int:
        return self.pad_id + 1

    @property
    def vocab_size(self) -> int:
        return self.bos_id + 1

    @property
    def chunk_len(self) -> int:
        """Forced tokens after every frame: the action (and its body-frame / object-frame tokens)."""
        return self.action_dim + self.rel_slots

    @property
    def pose_bins(self) -> int:
        return self.codebook_size // 5 - 1

    def slot_ranges(self) -> list[tuple[int, int]]:
        """[lo, hi) token ids of each generated frame slot (pose slots, or agent + displacement slots)."""
        size = self.codebook_size // self.cond_tokens
        if not self.relational:
            return [(i * size, (i + 1) * size) for i in range(self.cond_tokens)]
        out, lo = [(0, size), (size, 2 * size)], self.codebook_size
        for n in self.disp_sizes:
            out.append((lo, lo + n))
            lo += n
        return out

    def ordinal_groups(self, pose_codes: bool) -> list:
        """The vocabulary's ordered bins (`rlvr_sim.models.ordinal.OrdinalGroup`): the pose codes of every slot
        (`pose_codes`: the frame codes are the PushT pose tokenizer's; the angle circular), the displacement
        bins (relational), the action bins of each dimension and the body-frame bins (relational). The last
        code of a pose, displacement or body-frame slot ("not visible" / "unknown") is not a bin and stays free.
        Keypoint and VQ codes are not supported: their ids are shared by several coordinates or unordered."""
        from rlvr_sim.models.ordinal import OrdinalGroup

        if not pose_codes or self.delta or self.object_frame:
            raise ValueError("ordinal embeddings need the PushT pose tokenizer's codes in the 'pose' or 'relational' "
                             "layout (keypoint levels are shared by every coordinate; VQ codes are unordered)")
        slot = self.codebook_size // self.abs_tokens
        groups = [OrdinalGroup(i * slot, slot - 1, circular=i == 4) for i in range(self.abs_tokens)]
        lo = self.codebook_size
        for n in self.disp_sizes:
            groups.append(OrdinalGroup(lo, n - 1))
            lo += n
        groups += [OrdinalGroup(self.action_offset + d * self.num_bins, self.num_bins) for d in range(self.action_dim)]
        groups += [OrdinalGroup(self.rel_offset + k * self.rel_size, self.rel_size - 1) for k in range(self.rel_slots)]
        return groups

    def action_tokens(self, bins: np.ndarray) -> list[int]:
        """Binned action (A,) -> A token ids."""
        bins = np.asarray(bins).reshape(-1)
        if bins.shape != (self.action_dim,):
            raise ValueError(f"expected {self.action_dim} action bins, got shape {bins.shape}")
        return [self.action_offset + d * self.num_bins + int(b) for d, b in enumerate(bins)]

    # ---- relational geometry (vectorised over leading dimensions) ----
    @functools.cached_property
    def _pose_tokenizer(self):  # noqa: ANN202 - PoseTokenizer, imported lazily
        from rlvr_sim.models.pose_tokenizer import PoseTokenizer, PoseTokenizerConfig

        return PoseTokenizer(PoseTokenizerConfig(bins=self.pose_bins))

    def _poses(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pose codes (..., 5) -> (states (..., 5) at bin centres, NaN if not visible; angle bin index)."""
        codes = np.asarray(codes, dtype=np.int64)
        states = self._pose_tokenizer.codes_to_states(codes).reshape(codes.shape)
        return states, codes[..., 4] % (self.pose_bins + 1)

    def chunks(self, codes: np.ndarray | None, action_bins: np.ndarray) -> np.ndarray:
        """Forced tokens (..., chunk_len) after frames with pose codes (..., 5) given action bins (..., A)
        (`codes` is read only by the relational layout)."""
        action_bins = np.asarray(action_bins, dtype=np.int64)
        offsets = self.action_offset + self.num_bins * np.arange(self.action_dim)
        act = action_bins + offsets
        if self.object_frame:
            return np.concatenate([act, self._object_frame_tokens(codes, action_bins)], -1)
        if not self.relational:
            return act
        states, _ = self._poses(codes)
        low, high = np.asarray(self.action_low), np.asarray(self.action_high)
        target = low + (action_bins + 0.5) / self.num_bins * (high - low)
        c, s = np.cos(states[..., 4]), np.sin(states[..., 4])
        rel = []
        for px, py in ((states[..., 0], states[..., 1]), (target[..., 0], target[..., 1])):
            dx, dy = px - states[..., 2], py - states[..., 3]
            rel += [c * dx + s * dy, -s * dx + c * dy]
        half = REL_RANGE // REL_STEP
        out = [act]
        for i, value in enumerate(rel):
            index = np.clip(np.round(np.nan_to_num(value) / REL_STEP), -half, half).astype(np.int64) + half
            index = np.where(np.isnan(value), self.rel_size - 1, index)
            out.append((self.rel_offset + i * self.rel_size + index)[..., None])
        return np.concatenate(out, -1)

    def _object_frame_tokens(self, codes: np.ndarray, action_bins: np.ndarray) -> np.ndarray:
        """Object-frame tokens (..., rel_slots) of keypoint codes (..., cond_tokens) and action bins (..., A)."""
        points = np.asarray(codes, dtype=np.float64).reshape(*np.shape(codes)[:-1], -1, 2)
        centre = points[..., self.object_points, :].mean(-2)
        if self.frame_point is None:
            c, s = np.ones(centre.shape[:-1]), np.zeros(centre.shape[:-1])
        else:
            axis = points[..., self.frame_point, :] - centre
            length = np.hypot(axis[..., 0], axis[..., 1])
            c = np.where(length > 0, axis[..., 0] / np.maximum(length, 1e-9), 1.0)
            s = np.where(length > 0, axis[..., 1] / np.maximum(length, 1e-9), 0.0)
        actors = points[..., self.actor_points, :]
        nearest = np.argmin(((actors - centre[..., None, :]) ** 2).sum(-1), -1)
        places = [np.take_along_axis(actors, nearest[..., None, None], -2)[..., 0, :]]
        if self.action_spans_frame:  # the bin's centre as an image position, in code levels
            bins = np.asarray(action_bins, dtype=np.float64)[..., :2]
            places.append((bins + 0.5) / self.num_bins * self.codebook_size - 0.5)
        out = []
        for i, place in enumerate(places):
            dx, dy = place[..., 0] - centre[..., 0], place[..., 1] - centre[..., 1]
            for j, value in enumerate((c * dx + s * dy, -s * dx + c * dy)):
                index = np.clip(np.round(value), -OBJ_RANGE, OBJ_RANGE).astype(np.int64) + OBJ_RANGE
                out.append(self.rel_offset + (2 * i + j) * self.rel_size + index)
        return np.stack(out, -1)

    def frame_tokens(self, prev: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Generated tokens (..., cond_tokens) of the frame with codes `codes` after the frame `prev`."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.delta:
            out = codes.copy()
            change = (codes - np.asarray(prev, dtype=np.int64)) % self.codebook_size
            out[..., self.delta_slots] = change[..., self.delta_slots]
            return out
        if not self.relational:
            return codes
        before, angle_before = self._poses(prev)
        after, angle_after = self._poses(codes)
        c, s = np.cos(before[..., 4]), np.sin(before[..., 4])
        dx, dy = after[..., 2] - before[..., 2], after[..., 3] - before[..., 3]
        bins = self.pose_bins
        dtheta = (angle_after - angle_before + bins // 2) % bins - bins // 2
        unknown = np.isnan(before[..., 2:]).any(-1) | np.isnan(after[..., 2:]).any(-1)
        lo, out = self.codebook_size, [codes[..., :2]]
        for value, limit, n in ((c * dx + s * dy, DISP_RANGE, self.disp_sizes[0]),
                                (-s * dx + c * dy, DISP_RANGE, self.disp_sizes[1]),
                                (dtheta, ANGLE_DISP_RANGE, self.disp_sizes[2])):
            index = np.clip(np.round(np.nan_to_num(value)), -limit, limit).astype(np.int64) + limit
            out.append((lo + np.where(unknown, n - 1, index))[..., None])
            lo += n
        return np.concatenate(out, -1)

    def to_codes(self, prev: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """Pose codes (..., 5) of generated frame tokens (..., cond_tokens) after the frame `prev`.

        Relational: the agent codes as generated, the T moved by the displacement in `prev`'s body frame and
        re-quantised; an "unknown" displacement (or a token outside its slot) keeps the T where it was, and
        a T that was not visible stays so. Delta / mixed: each `delta_slots` coordinate moved by its token (mod
        codebook_size), the others as generated; a token outside the codes keeps the coordinate. Otherwise the
        tokens are the codes."""
        tokens = np.asarray(tokens, dtype=np.int64)
        if self.delta:
            prev = np.broadcast_to(np.asarray(prev, dtype=np.int64), tokens.shape)
            inside = (tokens >= 0) & (tokens < self.codebook_size)
            codes = tokens.copy()
            codes[..., self.delta_slots] = (prev + tokens)[..., self.delta_slots] % self.codebook_size
            return np.where(inside, codes, prev)
        if not self.relational:
            return tokens
        prev = np.asarray(prev, dtype=np.int64)
        bins, slot = self.pose_bins, self.pose_bins + 1
        before, angle_before = self._poses(prev)
        ranges = self.slot_ranges()
        values, known = [], []
        for i, limit in ((2, DISP_RANGE), (3, DISP_RANGE), (4, ANGLE_DISP_RANGE)):
            lo, hi = ranges[i]
            inside = (tokens[..., i] >= lo) & (tokens[..., i] < hi - 1)
            values.append(np.where(inside, tokens[..., i] - lo - limit, 0).astype(np.float64))
            known.append(inside)
        moved = known[0] & known[1] & known[2] & np.isfinite(before[..., 2:]).all(-1)
        c, s = np.cos(before[..., 4]), np.sin(before[..., 4])
        after = before.copy()  # the T moved in the arena, quantised as the tokenizer quantises a judged state
        after[..., 2] = np.nan_to_num(before[..., 2] + c * values[0] - s * values[1])
        after[..., 3] = np.nan_to_num(before[..., 3] + s * values[0] + c * values[1])
        moved_codes = (self._pose_tokenizer.states_to_codes(after.reshape(-1, 5)).reshape(after.shape)) % slot
        out = prev % slot
        agent = [np.where((tokens[..., i] >= 0) & (tokens[..., i] < self.codebook_size), tokens[..., i] % slot,
                          out[..., i]) for i in (0, 1)]
        block = [np.where(moved, moved_codes[..., 2], out[..., 2]), np.where(moved, moved_codes[..., 3], out[..., 3]),
                 np.where(moved, (angle_before + values[2].astype(np.int64)) % bins, out[..., 4])]
        return np.stack([*agent, *block], -1) + np.arange(5) * slot

    # ---- layout ----
    def window_array(self, abs_codes: np.ndarray, cond_codes: np.ndarray, action_bins: np.ndarray) -> np.ndarray:
        """Full layouts (W, L) of W windows: BOS x0 c0 f1 c1 ... f_n for n = cond_codes.shape[1] frames
        (abs_codes (W, abs_tokens); cond_codes (W, n, cond_tokens) pose codes of x_1..x_n; action_bins
        (W, >= n, A)); c_t = `chunks` of frame t and a_t, f_t = `frame_tokens` of x_t after x_{t-1}."""
        abs_codes = np.asarray(abs_codes, dtype=np.int64)
        cond_codes = np.asarray(cond_codes, dtype=np.int64).reshape(len(abs_codes), -1, self.cond_tokens)
        n = cond_codes.shape[1]
        bins = np.asarray(action_bins)[:, :n]
        if self.stateful:  # frame tokens relative to the frame before (the anchor's codes start the chain)
            frames = np.concatenate([abs_codes[:, None], cond_codes], 1)
            chunk, gen = self.chunks(frames[:, :n], bins), self.frame_tokens(frames[:, :-1], frames[:, 1:])
        else:  # chunks are the actions alone; frames are the codes themselves
            chunk, gen = self.chunks(None, bins), cond_codes
        body = np.concatenate([chunk, gen], -1).reshape(len(abs_codes), -1)
        return np.concatenate([np.full((len(abs_codes), 1), self.bos_id), abs_codes, body], 1)

    def window_tokens(self, abs_codes: np.ndarray, cond_codes: np.ndarray, action_bins: np.ndarray) -> list[int]:
        """Full layout BOS x0 c0 f1 c1 ... f_n of one window (action_bins has >= n rows)."""
        cond = np.asarray(cond_codes, dtype=np.int64).reshape(-1, self.cond_tokens)
        return self.window_array(np.asarray(abs_codes)[None], cond[None], np.asarray(action_bins)[None])[0].tolist()

    def parse_frames(self, completion: list[int], n_frames: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Generated frame tokens (n_frames, cond_tokens) out of `f c f c ... f` and a per-frame validity mask.

        None if the completion is too short for the layout; a frame holding a token outside its slot's
        range (relational) or outside the codes (otherwise) is marked invalid (zero-filled) so the reward
        can score it as the worst frame.
        """
        stride = self.cond_tokens + self.chunk_len
        expected = n_frames * self.cond_tokens + (n_frames - 1) * self.chunk_len
        if len(completion) < expected:
            return None
        frames = np.zeros((n_frames, self.cond_tokens), dtype=np.int64)
        valid = np.ones(n_frames, dtype=bool)
        ranges = self.slot_ranges() if self.relational else [(0, self.codebook_size)] * self.cond_tokens
        for t in range(n_frames):
            codes = completion[t * stride : t * stride + self.cond_tokens]
            if all(lo <= c < hi for c, (lo, hi) in zip(codes, ranges)):
                frames[t] = codes
            else:
                valid[t] = False
        return frames, valid

    def frames_to_codes(self, prev: np.ndarray, frames: np.ndarray) -> np.ndarray:
        """Codes (..., F, cond_tokens) of F consecutive generated frames (..., F, cond_tokens) after `prev`."""
        frames = np.asarray(frames, dtype=np.int64)
        if not self.stateful:
            return frames
        out, last = np.zeros_like(frames), np.asarray(prev, dtype=np.int64)
        for t in range(frames.shape[-2]):
            last = out[..., t, :] = self.to_codes(last, frames[..., t, :])
        return out


class StateForcing(list):
    """Forced chunks of one multi-step example whose chunks depend on the generated frames (relational, object frame).

    As a list it holds the teacher-forced chunks (the true frames'; SFT and its loss mask use them); called
    by the sampler as `forcing(index, tokens)` with the row's tokens so far it computes chunk `index` from
    the frames the row itself generated, so a sampled rollout never sees the true frames."""

    def __init__(self, chunks: list[list[int]], codec: VideoCodec, anchor: np.ndarray, action_bins: np.ndarray):
        super().__init__(chunks)
        self.codec, self.anchor, self.action_bins = codec, np.asarray(anchor), np.asarray(action_bins)

    def __call__(self, index: int, tokens: list[int]) -> list[int]:
        codec = self.codec
        stride = codec.cond_tokens + codec.chunk_len
        if len(tokens) < (index + 1) * codec.cond_tokens + index * codec.chunk_len:
            raise ValueError(f"chunk {index} asked before frame {index + 1} was generated")
        # the frames as generated (a token outside its slot keeps that quantity, as the env reads them)
        raw = np.array([tokens[t * stride : t * stride + codec.cond_tokens] for t in range(index + 1)])
        codes = codec.frames_to_codes(self.anchor, raw)[-1]
        return self.codec.chunks(codes, self.action_bins[index + 1]).tolist()


class VideoTask:
    """Task protocol implementation for video world models (see the module docstring).

    `camera` picks a LeRobot dataset's camera (its first video feature by default).
    `scene` names what the frames show and is saved with the checkpoint: "pusht" (the default) enables the
    PushT pixel judge (object reward, object-level tables) and the env's gym-pusht task signal; "arm" the
    arm's tip and puck judge (object reward and tables, no task signal); any other name (a user's robot)
    gets the pixel reward only."""

    name = "pusht"

    def __init__(
        self,
        tokenizer: Any = None,
        data_dir: str = "data/pusht",
        tokenizer_dir: str | None = None,
        mode: str = "multi",
        horizon: int = 7,
        context_frames: int = 4,
        frame_skip: int = 4,
        test_fraction: float = 0.1,
        split_seed: int = 0,
        train_stride: int = 4,
        test_stride: int = 4,
        max_test_windows: int = 256,
        repetition_penalty: float = 0.0,
        lpips: str = "auto",
        cache_dir: str | None = None,
        action_bins: dict | None = None,
        reward_kind: str = "perceptual",
        augment: str = "none",
        extra_train_dirs: list[str] | tuple[str, ...] = (),
        contact_weight: float = 0.0,
        layout: str = "pose",
        delta_slots: list[int] | None = None,
        object_frame: bool = False,
        action_spans_frame: bool = False,
        frame_point: int | None = None,
        scene: str = "pusht",
        camera: str | None = None,
    ) -> None:
        from rlvr_sim.models.pose_tokenizer import load_frame_tokenizer

        if mode not in ("multi", "single"):
            raise ValueError(f"mode must be 'multi' or 'single', got {mode!r}")
        if mode == "single" and not 1 <= context_frames <= horizon:
            raise ValueError(f"context_frames must be in [1, horizon={horizon}], got {context_frames}")
        self.tokenizer = None  # no text tokenizer: the vocabulary is codes + action bins + specials
        self.mode, self.horizon, self.context_frames = mode, horizon, context_frames
        self.frame_skip, self.repetition_penalty, self.lpips_kind = frame_skip, repetition_penalty, lpips
        if tokenizer_dir is None:  # the embedded PushT pose tokenizer
            from rlvr_sim.resources import asset_path

            tokenizer_dir = str(asset_path("pusht_pose") / "tokenizer")
        self.settings = dict(data_dir=str(data_dir), tokenizer_dir=str(tokenizer_dir), horizon=horizon,
                             frame_skip=frame_skip, test_fraction=test_fraction, split_seed=split_seed,
                             train_stride=train_stride, test_stride=test_stride, max_test_windows=max_test_windows,
                             scene=str(scene))
        if camera is not None:  # a LeRobot dataset's camera key (default: its first video feature)
            self.settings["camera"] = str(camera)
        if isinstance(extra_train_dirs, str):
            extra_train_dirs = [extra_train_dirs]
        if extra_train_dirs:  # more episodes for training only: data_dir's test split stays the same
            self.settings["extra_train_dirs"] = [str(d) for d in extra_train_dirs]
        if reward_kind not in REWARD_KINDS:
            raise ValueError(f"reward_kind must be one of {REWARD_KINDS}, got {reward_kind!r}")
        self.judge = SCENE_JUDGES.get(scene)  # None: no pixel judge for this scene
        if reward_kind != "perceptual" and self.judge is None:
            raise ValueError(f"reward_kind={reward_kind!r} reads objects off frames with a scene's pixel judge; "
                             f"scene {scene!r} has none (judged scenes: {', '.join(SCENE_JUDGES)}): "
                             "use reward_kind='perceptual'")
        self.reward_kind = reward_kind
        if contact_weight < 0 or not np.isfinite(contact_weight):
            raise ValueError(f"contact_weight must be a finite number >= 0, got {contact_weight}")
        self.contact_weight = float(contact_weight)
        worst_object = self.judge.WORST_OBJECT_SCORE if self.judge is not None else 0.0
        self.worst_reward = {"perceptual": WORST_REWARD, "object": -worst_object,
                             "both": WORST_REWARD - worst_object / 10}[reward_kind]
        self.worst_reward -= self.contact_weight * MAX_PENETRATION
        self.frame_tokenizer = load_frame_tokenizer(tokenizer_dir)
        self.image_size = self.frame_tokenizer.config.image_size
        self.windows, self.action_bins = load_windows(self.settings, self.image_size, horizon, frame_skip,
                                                      self.frame_tokenizer, action_bins,
                                                      Path(cache_dir) if cache_dir else None)
        cfg = self.frame_tokenizer.config
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if layout == "relational" and not hasattr(self.frame_tokenizer, "symmetry_codes"):
            raise ValueError("layout='relational' needs the PushT pose tokenizer (it reads poses from the codes)")
        if layout in ("delta", "mixed") and type(self.frame_tokenizer).__name__ != "KeypointTokenizer":
            raise ValueError(f"layout={layout!r} needs a keypoint tokenizer (its codes are ordered coordinate levels); "
                             f"{tokenizer_dir} holds a {type(self.frame_tokenizer).__name__}")
        if delta_slots is not None and layout != "mixed":
            raise ValueError(f"delta_slots pins the 'mixed' layout's change-coded slots; layout is {layout!r}")
        self._delta_slots = None if delta_slots is None else self._checked_slots(delta_slots, cfg.tokens_per_frame("conditional"))
        if (object_frame or action_spans_frame or frame_point is not None) and layout not in ("delta", "mixed"):
            raise ValueError(f"object_frame (and its action_spans_frame, frame_point) needs the keypoint layouts "
                             f"'delta' or 'mixed'; layout is {layout!r}")
        if (action_spans_frame or frame_point is not None) and not object_frame:
            raise ValueError("action_spans_frame and frame_point are options of object_frame: set object_frame: true")
        layout_args = self._layout_args(layout)
        if object_frame:
            layout_args.update(object_frame=True, action_spans_frame=bool(action_spans_frame),
                               frame_point=frame_point if frame_point is not None
                               else widest_point(self.windows["train"].cond_codes, layout_args["delta_slots"]))
        self.codec = VideoCodec(cfg.codebook_size, self.action_bins.action_dim,
                                cfg.tokens_per_frame("absolute"), cfg.tokens_per_frame("conditional"),
                                self.action_bins.num_bins, **layout_args)
        self.pad_token_id = self.codec.pad_id
        self.vocab_size = self.codec.vocab_size
        self._lpips = None
        self._gold_cache: dict[tuple[str, int, int], np.ndarray] = {}
        self.augment = augment
        check_augment(augment, self.frame_tokenizer, self.action_bins)
        if self.contact_weight and not hasattr(self.frame_tokenizer, "symmetry_codes"):
            raise ValueError("contact_weight needs the PushT pose tokenizer (it reads poses from the codes)")

    def ordinal_groups(self) -> list:
        """The ordered token bins for `ordinal_embeddings` (`VideoCodec.ordinal_groups`)."""
        return self.codec.ordinal_groups(pose_codes=hasattr(self.frame_tokenizer, "symmetry_codes"))

    # ------------------------------------------------------------------------------------------ data
    def _layout_args(self, layout: str) -> dict[str, Any]:
        if layout == "pose":
            return {}
        if layout == "delta":
            return {"delta_slots": list(range(self.frame_tokenizer.config.tokens_per_frame("conditional")))}
        if layout == "mixed":  # pinned (a model continued on more data keeps its layout) or chosen from the data
            slots = self._delta_slots if self._delta_slots is not None else still_slots(self.windows["train"].cond_codes)
            return {"delta_slots": slots}
        return {"relational": True, "action_low": self.action_bins.low.tolist(),
                "action_high": self.action_bins.high.tolist()}

    @staticmethod
    def _checked_slots(slots: Any, tokens: int) -> list[int]:
        """`delta_slots` as given in task_args: whole points' (x, y) slot pairs within the frame's tokens."""
        try:
            slots = sorted(int(v) for v in slots)
        except (TypeError, ValueError) as err:
            raise ValueError(f"delta_slots must be a list of slot indices, got {slots!r}") from err
        pairs = {v // 2 for v in slots}
        if any(not 0 <= v < tokens for v in slots) or sorted(2 * p + c for p in pairs for c in (0, 1)) != slots:
            raise ValueError(f"delta_slots must hold both coordinates (2p, 2p+1) of points within the frame's {tokens} "
                             f"tokens, each once; got {slots}")
        return slots

    # --------------------------------------------------------------------------------- augmentation
    def symmetric_action_bins(self, bins: np.ndarray, k: int, inverse: bool = False) -> np.ndarray:
        """Action bins (..., 2) under symmetry `k` (see `rlvr_sim.tasks.video_augment`)."""
        return symmetric_action_bins(bins, k, self.action_bins.num_bins, inverse)

    def _variants(self, split: str) -> list[tuple]:
        """The split's windows as examples are made from them: augmented copies for training only."""
        augment = self.augment if split == "train" else "none"
        return window_variants(self.windows[split], augment, self.frame_tokenizer, self.action_bins.num_bins,
                               self.settings["split_seed"])

    # -------------------------------------------------------------------------------------- protocol
    def examples(self, split: str) -> Sequence[Example]:
        """One example per window of the split (multi-step or single-step, by `mode`); with `augment="d4"`
        the training split holds every window under all eight symmetries of the square arena, with
        `"d4_shift"` also SHIFT_COPIES translated copies of each (`rlvr_sim.tasks.video_augment`).

        A sequence built on demand (`len`, indexing, slices, iteration): the examples of a few thousand augmented
        episodes would not fit a laptop's memory as Python objects; each is made when the trainer draws it."""
        if split not in self.windows:
            raise ValueError(f"unknown split {split!r}; known: {sorted(self.windows)}")
        variants = []
        for k, shift, abs_codes, cond_codes, action_bins, *index in self._variants(split):
            rows = index[0] if index else np.arange(len(abs_codes))
            variants.append((k, shift, rows, abs_codes, cond_codes, action_bins))
        return LazyExamples(lambda v, j: self._example(split, *variants[v], j), [len(v[2]) for v in variants])

    def _example(self, split: str, sym: int, shift: np.ndarray, rows: np.ndarray, abs_codes: np.ndarray,
                 cond_codes: np.ndarray, action_bins: np.ndarray, j: int) -> Example:
        """Example `j` of one variant (symmetry `sym`, per-row `shift`) of the split's windows `rows`."""
        codec, i = self.codec, int(rows[j])
        full = codec.window_array(abs_codes[j : j + 1], cond_codes[j : j + 1, 1:], action_bins[j : j + 1])[0].tolist()
        stride = codec.cond_tokens + codec.chunk_len
        tag = {"sym": sym, "shift": shift[j].tolist()} if sym or shift[j].any() else {"sym": 0}
        if self.mode == "multi":
            cut = 1 + codec.abs_tokens + codec.chunk_len
            start = cut + codec.cond_tokens
            forced = [full[start + t * stride : start + t * stride + codec.chunk_len] for t in range(self.horizon - 1)]
            meta = {"split": split, "index": i, "first": 1, "frames": self.horizon, **tag}
            if codec.chunks_follow_frames:  # chunks follow the generated frames when sampling
                forced = StateForcing(forced, codec, abs_codes[j], action_bins[j])
            if codec.stateful:
                meta["prev"] = abs_codes[j].tolist()
            return Example(full[:cut], full[cut:], forced, meta)
        k = self.context_frames
        cut = 1 + codec.abs_tokens + k * stride - codec.cond_tokens
        meta = {"split": split, "index": i, "first": k, "frames": 1, **tag}
        if codec.stateful:
            meta["prev"] = cond_codes[j, k - 1].tolist()
        return Example(full[:cut], full[cut : cut + codec.cond_tokens], None, meta)

    def generation_spec(self) -> GenerationSpec:
        frames = self.horizon if self.mode == "multi" else 1
        return GenerationSpec(
            max_new_tokens=frames * self.codec.cond_tokens,
            interleave_every=self.codec.cond_tokens if self.mode == "multi" else None,
            temperature=1.0,
            # Single-step answers are all visual codes: sample only those. Multi-step answers interleave
            # forced action tokens, which the trainer re-scores under the same restriction (log-prob -inf),
            # so multi-step training samples the whole vocabulary: a non-code token where a frame token
            # belongs scores that frame as the worst. Evaluation and the env always restrict frame tokens
            # to visual codes (`code_range`).
            allowed_token_range=self.code_range if self.mode == "single" else None,
        )

    @property
    def code_range(self) -> tuple[int, int]:
        """Token ids a frame position may hold (visual codes; relational: also displacement tokens)."""
        return (0, self.codec.frame_vocab)

    @property
    def perceptual(self):  # noqa: ANN201 - PerceptualMetric, imported lazily
        if self._lpips is None:
            from rlvr_sim.metrics.video import perceptual_metric

            self._lpips = perceptual_metric(self.lpips_kind)
        return self._lpips

    def decode_predictions(self, codes: np.ndarray, index: np.ndarray, split: str) -> np.ndarray:
        """(N, F, cond_tokens) predicted codes of windows `index` -> (N, F, S, S, 3) uint8 frames."""
        from rlvr_sim.models.visual_tokenizer import CONDITIONAL

        n, f = codes.shape[:2]
        context = np.repeat(self.windows[split].context[index], f, axis=0)
        frames = self.frame_tokenizer.decode(codes.reshape(n * f, -1), context, CONDITIONAL)
        return frames.reshape(n, f, *frames.shape[1:])

    def gold_states(self, split: str, rows: np.ndarray, first: np.ndarray, n_frames: int) -> np.ndarray:
        """(N, n_frames, D) judged states of the true frames x_first..x_{first+n_frames-1} (cached; D is the
        scene judge's: 5 for PushT, 4 for the arm)."""
        w = self.windows[split]
        out = []
        for r, f in zip(rows, first):
            for t in range(n_frames):
                key = (split, int(r), int(f) + t)
                if key not in self._gold_cache:
                    self._gold_cache[key] = self.judge.judge_states(w.future[r, f - 1 + t][None])[0]
                out.append(self._gold_cache[key])
        return np.asarray(out).reshape(len(rows), n_frames, -1)

    def frame_scores(self, pred: np.ndarray, gold: np.ndarray, gold_states: np.ndarray | None = None) -> np.ndarray:
        """Per-frame score (lower is better) of (N, F, S, S, 3) predicted vs true frames, by `reward_kind`."""
        from rlvr_sim.metrics.video import mae

        n, f = pred.shape[:2]
        flat_pred, flat_gold = pred.reshape(-1, *pred.shape[2:]), gold.reshape(-1, *gold.shape[2:])
        score = np.zeros(n * f)
        if self.reward_kind in ("perceptual", "both"):
            score += mae(flat_pred, flat_gold) + self.perceptual(flat_pred, flat_gold)
        if self.reward_kind in ("object", "both"):
            judge = self.judge
            truth = judge.judge_states(flat_gold) if gold_states is None else gold_states.reshape(n * f, -1)
            objects = judge.object_score(judge.object_errors(judge.judge_states(flat_pred), truth))
            score += objects if self.reward_kind == "object" else objects / 10
        return score.reshape(n, f)

    def reward(self, prompts: list[list[int]], completions: list[list[int]], metadata: list[dict[str, Any]]) -> list[float]:
        """Minus the per-frame score (`reward_kind`), averaged over predicted frames, minus the optional
        repetition penalty.

        A frame holding a non-code token scores the worst frame score; a completion too short for the
        layout scores `worst_reward`.
        """
        rewards = [self.worst_reward] * len(completions)
        by_split: dict[str, list] = {}
        for i, (completion, meta) in enumerate(zip(completions, metadata)):
            parsed = self.codec.parse_frames(completion, meta["frames"])
            if parsed is not None:
                codes, valid = parsed
                if self.codec.stateful:  # generated tokens -> codes, in the example's own frame
                    codes = self.codec.frames_to_codes(np.asarray(meta["prev"]), codes)
                if "shift" in meta:  # a translated copy: move the prediction back first
                    codes = shift_codes(codes[None], -np.asarray(meta["shift"])[None],
                                        self.frame_tokenizer.config.slot_size)[0]
                if meta.get("sym", 0):  # a symmetric copy: map the prediction back onto the true window
                    codes = self.frame_tokenizer.symmetry_codes(codes, meta["sym"], inverse=True)
                by_split.setdefault(meta["split"], []).append((i, codes, valid))
        for split, items in by_split.items():
            w = self.windows[split]
            rows = np.array([metadata[i]["index"] for i, _, _ in items])
            first = np.array([metadata[i]["first"] for i, _, _ in items])
            codes = np.stack([c for _, c, _ in items])
            valid = np.stack([v for _, _, v in items])
            n_frames = codes.shape[1]
            pred = self.decode_predictions(codes, rows, split)
            gold = np.stack([w.future[r, f - 1 : f - 1 + n_frames] for r, f in zip(rows, first)])
            states = self.gold_states(split, rows, first, n_frames) if self.reward_kind != "perceptual" else None
            score = self.frame_scores(pred, gold, states)
            if self.contact_weight:  # the agent's disc inside the T: a push the prediction failed to make
                score = score + self.contact_weight * self._penetration(codes)
            score = np.where(valid, score, -self.worst_reward)
            per_item = -score.mean(axis=1)
            if self.repetition_penalty:
                prev = np.stack([w.cond_codes[r, f - 1] for r, f in zip(rows, first)])
                pred_codes = np.concatenate([prev[:, None], codes], axis=1)
                gold_codes = np.stack([w.cond_codes[r, f - 1 : f + n_frames] for r, f in zip(rows, first)])
                same = (pred_codes[:, 1:] == pred_codes[:, :-1]).all(-1) & valid
                changed = (gold_codes[:, 1:] != gold_codes[:, :-1]).any(-1)
                per_item = per_item - self.repetition_penalty * (same & changed).any(axis=1)
            for (i, _, _), r in zip(items, per_item):
                rewards[i] = float(r)
        return rewards

    def _penetration(self, codes: np.ndarray) -> np.ndarray:
        """(N, F) depth of the agent's disc inside the T per predicted frame, read from the pose codes
        themselves (a decoded frame draws the T over the disc, so a disc deep inside is hidden from the
        pixel judge)."""
        from rlvr_sim.metrics.pusht_pixels import penetration

        states = self.frame_tokenizer.codes_to_states(codes.reshape(-1, codes.shape[-1]))
        return penetration(states).reshape(codes.shape[:2])

    def checkpoint_meta(self) -> dict[str, Any]:
        """What a checkpoint needs to use this model later: codec, action ranges, tokenizer, settings."""
        return {"video_codec": asdict(self.codec), "action_bins": self.action_bins.to_dict(),
                "video_settings": {**self.settings, "mode": self.mode, "context_frames": self.context_frames,
                                   "image_size": self.image_size, "augment": self.augment}}


__all__ = ["StateForcing", "VideoCodec", "VideoTask", "WORST_REWARD", "Windows", "still_slots", "widest_point"]
