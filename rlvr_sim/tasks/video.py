"""Video world-model task (registered as "pusht"): frames and actions as tokens, verifiable frame rewards.

Vocabulary: [frame codes | action bins | specials] = [0, C) codes of the frame tokenizer (the PushT pose
tokenizer: 5 per frame; or the learned compressive FSQ tokenizer), [C, C + 256 A) action bins (256 per
action dimension, dimension d owns [C + 256 d, C + 256 (d + 1))), then PAD and BOS. A window of the data
starts at an anchor frame x_0 and lays out

    BOS | x_0 absolute codes | a_0 | f_1 | a_1 | f_2 | ... | a_{T-1} | f_T

where f_t are the codes of x_t (conditional on x_0 for the FSQ tokenizer) and a_t the binned action that
moves x_t to x_{t+1}. Two example kinds share that layout, so one MLE model serves both:
- multi-step (`mode="multi"`, RLVR-World's video setting): prompt BOS x_0 a_0; the model generates
  f_1..f_T and the ground-truth a_1..a_{T-1} are forced in between (sampler interleaving; never in the
  RL loss, and in the SFT loss only with `learn_forced`);
- single-step (`mode="single"`): prompt holds k context frames (x_0 and f_1..f_{k-1} with actions);
  the model generates f_k.
Reward, by `reward_kind`: predicted codes are decoded (with the true anchor frame) and each predicted
frame is scored against the true frame, averaged over frames: "perceptual" -(MAE + LPIPS) (the paper's;
[0, 1] pixels, LPIPS on [-1, 1]), "object" -(agent px + T px + T angle / 5) read by the pixel judge,
"both" their sum (object / 10). An optional repetition penalty subtracts `repetition_penalty` when a
predicted frame repeats the one before it where the truth changed (`rlvr_sim.metrics.video.repetition_rate`).
A completion too short for the layout gets `worst_reward`; a frame holding a non-code token (an action or
special token where a frame token belongs) is scored as the worst frame.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.pusht_pixels import MAX_PENETRATION, WORST_OBJECT_SCORE
from rlvr_sim.tasks.base import Example, GenerationSpec

WORST_REWARD = -2.0  # MAE <= 1 and LPIPS ~<= 1 on any frame, so no decodable prediction scores lower
# reward_kind: "perceptual" -(MAE + LPIPS) (the paper's), "object" -(agent + block position error in px
# at 64x64 + angle error / 5 degrees) read by the pixel judge on decoded frames (each term capped, see
# rlvr_sim.metrics.pusht_pixels.object_errors), "both" their sum with the object score scaled by 1/10.
REWARD_KINDS = ("perceptual", "object", "both")
# augment: "d4" trains on every window under the eight symmetries of the square arena (pose codes only);
AUGMENTS = ("none", "d4", "d4_shift")
# "d4_shift" adds SHIFT_COPIES copies of every symmetric window translated by up to SHIFT_MAX pose bins
# (16 bins = 64 world units = 8 px at 64x64), where the walls stay out of reach (see VideoTask._shifts)
SHIFT_COPIES, SHIFT_MAX = 2, 16


@dataclass
class VideoCodec:
    """Token layout shared by the task, the evaluation and the env (saved with the checkpoint)."""

    codebook_size: int
    action_dim: int
    abs_tokens: int
    cond_tokens: int
    num_bins: int = 256

    @property
    def action_offset(self) -> int:
        return self.codebook_size

    @property
    def pad_id(self) -> int:
        return self.codebook_size + self.num_bins * self.action_dim

    @property
    def bos_id(self) -> int:
        return self.pad_id + 1

    @property
    def vocab_size(self) -> int:
        return self.bos_id + 1

    def action_tokens(self, bins: np.ndarray) -> list[int]:
        """Binned action (A,) -> A token ids."""
        bins = np.asarray(bins).reshape(-1)
        if bins.shape != (self.action_dim,):
            raise ValueError(f"expected {self.action_dim} action bins, got shape {bins.shape}")
        return [self.action_offset + d * self.num_bins + int(b) for d, b in enumerate(bins)]

    def window_tokens(self, abs_codes: np.ndarray, cond_codes: np.ndarray, action_bins: np.ndarray) -> list[int]:
        """Full layout BOS x0 a0 f1 a1 ... f_n for n = len(cond_codes) (action_bins has >= n rows)."""
        tokens = [self.bos_id, *map(int, abs_codes)]
        for t, codes in enumerate(cond_codes):
            tokens += self.action_tokens(action_bins[t])
            tokens += list(map(int, codes))
        return tokens

    def parse_frames(self, completion: list[int], n_frames: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Frame codes (n_frames, cond_tokens) out of `f a f a ... f` and a per-frame validity mask.

        None if the completion is too short for the layout; a frame holding a non-code token is marked
        invalid (its codes are zero-filled) so the reward can score it as the worst frame.
        """
        stride = self.cond_tokens + self.action_dim
        expected = n_frames * self.cond_tokens + (n_frames - 1) * self.action_dim
        if len(completion) < expected:
            return None
        frames = np.zeros((n_frames, self.cond_tokens), dtype=np.int64)
        valid = np.ones(n_frames, dtype=bool)
        for t in range(n_frames):
            codes = completion[t * stride : t * stride + self.cond_tokens]
            if all(0 <= c < self.codebook_size for c in codes):
                frames[t] = codes
            else:
                valid[t] = False
        return frames, valid


@dataclass
class Windows:
    """Pre-tokenised windows of one split (arrays indexed by window)."""

    context: np.ndarray  # (W, S, S, 3) uint8 anchor frames x_0
    future: np.ndarray  # (W, T, S, S, 3) uint8 true frames x_1..x_T
    abs_codes: np.ndarray  # (W, abs_tokens)
    cond_codes: np.ndarray  # (W, T + 1, cond_tokens): index 0 = x_0 given itself ("no change")
    action_bins: np.ndarray  # (W, T, A) bins of a_0..a_{T-1}


def _tokenizer_digest(directory: Path, weights_file: str) -> str:
    """Digest of a tokenizer checkpoint: its weights, or its config for weightless (pose) tokenizers."""
    path = directory / weights_file
    path = path if path.is_file() else directory / "tokenizer_config.json"
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


class VideoTask:
    """Task protocol implementation for video world models (see the module docstring)."""

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
                             train_stride=train_stride, test_stride=test_stride, max_test_windows=max_test_windows)
        if isinstance(extra_train_dirs, str):
            extra_train_dirs = [extra_train_dirs]
        if extra_train_dirs:  # more episodes for training only: data_dir's test split stays the same
            self.settings["extra_train_dirs"] = [str(d) for d in extra_train_dirs]
        if reward_kind not in REWARD_KINDS:
            raise ValueError(f"reward_kind must be one of {REWARD_KINDS}, got {reward_kind!r}")
        self.reward_kind = reward_kind
        if contact_weight < 0 or not np.isfinite(contact_weight):
            raise ValueError(f"contact_weight must be a finite number >= 0, got {contact_weight}")
        self.contact_weight = float(contact_weight)
        self.worst_reward = {"perceptual": WORST_REWARD, "object": -WORST_OBJECT_SCORE,
                             "both": WORST_REWARD - WORST_OBJECT_SCORE / 10}[reward_kind]
        self.worst_reward -= self.contact_weight * MAX_PENETRATION
        self.frame_tokenizer = load_frame_tokenizer(tokenizer_dir)
        self.image_size = self.frame_tokenizer.config.image_size
        self._action_bins_override = action_bins
        self.windows = self._load_windows(Path(cache_dir) if cache_dir else None)
        cfg = self.frame_tokenizer.config
        self.codec = VideoCodec(cfg.codebook_size, self.action_bins.action_dim,
                                cfg.tokens_per_frame("absolute"), cfg.tokens_per_frame("conditional"))
        self.pad_token_id = self.codec.pad_id
        self.vocab_size = self.codec.vocab_size
        self._lpips = None
        self._gold_cache: dict[tuple[str, int, int], np.ndarray] = {}
        self.augment = augment
        self._check_augment()
        if self.contact_weight and not hasattr(self.frame_tokenizer, "symmetry_codes"):
            raise ValueError("contact_weight needs the PushT pose tokenizer (it reads poses from the codes)")

    # ------------------------------------------------------------------------------------------ data
    def _load_windows(self, cache_dir: Path | None) -> dict[str, Windows]:
        from rlvr_sim.data.episodes import episode_paths, load_episodes, split_paths
        from rlvr_sim.models.action_bins import ActionBins
        from rlvr_sim.models.visual_tokenizer import WEIGHTS_FILE

        s = self.settings
        paths = episode_paths(s["data_dir"])
        split = split_paths(paths, s["test_fraction"], s["split_seed"])
        for extra in s.get("extra_train_dirs", []):
            more = episode_paths(extra)
            split["train"] = split["train"] + more
            paths = paths + more
        episodes = {name: load_episodes(split[name], self.image_size, self.frame_skip) for name in split}
        if self._action_bins_override is not None:
            self.action_bins = ActionBins.from_dict(self._action_bins_override)
        else:
            self.action_bins = ActionBins.fit(np.concatenate([ep.actions for ep in episodes["train"]]))
        key = json.dumps({**s, "files": [p.name for p in paths], "bins": self.action_bins.to_dict(),
                          "tok": _tokenizer_digest(Path(s["tokenizer_dir"]), WEIGHTS_FILE)}, sort_keys=True)
        digest = hashlib.sha1(key.encode()).hexdigest()[:16]
        cache = (cache_dir or Path(s["data_dir"]) / ".cache") / f"video_windows_{digest}.npz"
        if cache.is_file():
            with np.load(cache) as data:
                return {name: Windows(*(data[f"{name}_{f}"] for f in Windows.__dataclass_fields__))
                        for name in ("train", "test")}
        result = {}
        for name, eps in episodes.items():
            stride = s["train_stride"] if name == "train" else s["test_stride"]
            result[name] = self._tokenise(eps, stride, s["max_test_windows"] if name == "test" else None)
        arrays = {f"{name}_{f}": v for name, w in result.items() for f, v in asdict(w).items()}
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, **arrays)
        return result

    def _tokenise(self, episodes: list, stride: int, limit: int | None) -> Windows:
        from rlvr_sim.models.visual_tokenizer import ABSOLUTE, CONDITIONAL

        T = self.horizon
        starts = [(e, t) for e, ep in enumerate(episodes) for t in range(0, len(ep) - T, stride)]
        if limit is not None and len(starts) > limit:
            keep = np.random.default_rng(0).choice(len(starts), limit, replace=False)
            starts = [starts[i] for i in sorted(keep)]
        if not starts:
            raise ValueError(f"no window of {T + 1} frames (frame skip {self.frame_skip}) in the episodes")
        context = np.stack([episodes[e].images[t] for e, t in starts])
        future = np.stack([episodes[e].images[t + 1 : t + T + 1] for e, t in starts])
        actions = np.stack([episodes[e].actions[t : t + T] for e, t in starts])
        tok = self.frame_tokenizer
        if tok.context_free:  # codes do not depend on the anchor: code every frame of an episode once
            codes = [tok.encode(ep.images) for ep in episodes]
            abs_codes = np.stack([codes[e][t] for e, t in starts])
            cond = np.stack([codes[e][t : t + T + 1] for e, t in starts])
            return Windows(context, future, abs_codes, cond, self.action_bins.encode(actions))
        abs_codes = tok.encode(context, None, ABSOLUTE)
        frames = np.concatenate([context[:, None], future], axis=1)  # (W, T+1, ...)
        flat = frames.reshape(-1, *frames.shape[2:])
        cond = tok.encode(flat, np.repeat(context, T + 1, axis=0), CONDITIONAL).reshape(len(starts), T + 1, -1)
        return Windows(context, future, abs_codes, cond, self.action_bins.encode(actions))

    # --------------------------------------------------------------------------------- augmentation
    def _check_augment(self) -> None:
        """`augment="d4"` needs pose codes and a square action range centred on the arena."""
        from rlvr_sim.metrics.pusht_pixels import WORLD_SIZE

        if self.augment not in AUGMENTS:
            raise ValueError(f"augment must be one of {AUGMENTS}, got {self.augment!r}")
        if self.augment == "none":
            return
        if not hasattr(self.frame_tokenizer, "symmetry_codes"):
            raise ValueError("augment='d4' needs the PushT pose tokenizer (a learned tokenizer's codes have no "
                             "known symmetry)")
        low, high = self.action_bins.low, self.action_bins.high
        if self.action_bins.action_dim != 2 or np.ptp(low) or np.ptp(high) or low[0] + high[0] != WORLD_SIZE:
            raise ValueError("augment='d4' needs 2-D actions binned over the same range in x and y, centred on "
                             f"the arena (e.g. action_bins low [0, 0], high [512, 512]); got low {low.tolist()}, "
                             f"high {high.tolist()}")
        pose_bins = self.frame_tokenizer.config.bins
        if self.augment == "d4_shift" and (high[0] - low[0] != WORLD_SIZE or self.action_bins.num_bins % pose_bins):
            raise ValueError("augment='d4_shift' needs action bins over [0, 512] in a multiple of the pose bins "
                             f"({pose_bins}), so a translation moves actions by whole bins")

    def symmetric_action_bins(self, bins: np.ndarray, k: int, inverse: bool = False) -> np.ndarray:
        """Action bins (..., 2) under symmetry `k` (see `PoseTokenizer.symmetry_codes`)."""
        last = self.action_bins.num_bins - 1
        flip, turns = divmod(k, 4)
        ops = ["flip"] * flip + ["turn"] * turns
        for op in (reversed(ops) if inverse else ops):
            x, y = bins[..., 0], bins[..., 1]
            if op == "flip":
                bins = np.stack([last - x, y], -1)
            else:
                bins = np.stack([last - y, x] if inverse else [y, last - x], -1)
        return bins

    def _shift_codes(self, codes: np.ndarray, shift: np.ndarray) -> np.ndarray:
        """Pose codes (W, ..., 5) with agent and T positions moved by `shift` (W, 2) bins."""
        slot = self.frame_tokenizer.config.slot_size
        out = codes.copy()
        extra = (1,) * (codes.ndim - 2)
        for i, axis in ((0, 0), (1, 1), (2, 0), (3, 1)):
            out[..., i] += shift[:, axis].reshape(-1, *extra)
        return np.where(codes % slot == slot - 1, codes, out)  # "not visible" stays so

    def _shifts(self, w: Windows, rng: np.random.Generator) -> np.ndarray:
        """One random translation (dx, dy) in pose bins per window, (0, 0) where none is safe.

        Safe: before and after the move, every agent position and commanded target keeps >= 32 world units
        and every T origin >= 64 from the arena's edge, and |d| <= SHIFT_MAX bins, so the walls (the only
        thing in the arena that breaks translation invariance) are out of reach in both windows."""
        bins, slot = self.frame_tokenizer.config.bins, self.frame_tokenizer.config.slot_size
        per_action_bin = self.action_bins.num_bins // bins
        codes = np.concatenate([w.abs_codes[:, None], w.cond_codes], axis=1) % slot  # (W, T+2, 5)
        shifts = np.zeros((len(codes), 2), np.int64)
        margin_agent, margin_block = bins // 16, bins // 8
        for axis in (0, 1):
            agent = np.concatenate([codes[..., axis], w.action_bins[..., axis] // per_action_bin], axis=1)
            block = codes[..., 2 + axis]
            low = np.maximum(margin_agent - agent.min(1), margin_block - block.min(1))
            high = np.minimum(bins - 1 - margin_agent - agent.max(1), bins - 1 - margin_block - block.max(1))
            safe = (low <= 0) & (high >= 0)  # the original window is clear of the walls too
            low, high = np.maximum(low, -SHIFT_MAX), np.minimum(high, SHIFT_MAX)
            draw = rng.integers(np.minimum(low, 0), np.maximum(high, 0) + 1)
            shifts[:, axis] = np.where(safe, draw, 0)
        shifts[(codes[..., :4] == bins).any((1, 2))] = 0  # an object out of view: no translation
        return shifts

    def _variants(self, split: str) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(symmetry k, per-window shift (W, 2), abs codes, cond codes, action bins) of the split: the
        original only, or for augmented training each of the 8 symmetries (and translated copies)."""
        w = self.windows[split]
        none = np.zeros((len(w.abs_codes), 2), np.int64)
        if self.augment == "none" or split != "train":
            return [(0, none, w.abs_codes, w.cond_codes, w.action_bins)]
        tok = self.frame_tokenizer
        per_action_bin = self.action_bins.num_bins // tok.config.bins  # action bins per pose bin
        rng = np.random.default_rng(self.settings["split_seed"])
        out = []
        for k in range(8):
            abs_codes, cond_codes = tok.symmetry_codes(w.abs_codes, k), tok.symmetry_codes(w.cond_codes, k)
            action_bins = self.symmetric_action_bins(w.action_bins, k)
            out.append((k, none, abs_codes, cond_codes, action_bins))
            for _ in range(SHIFT_COPIES if self.augment == "d4_shift" else 0):
                moved = Windows(w.context, w.future, abs_codes, cond_codes, action_bins)
                shift = self._shifts(moved, rng)
                keep = shift.any(1)
                out.append((k, shift[keep], self._shift_codes(abs_codes[keep], shift[keep]),
                            self._shift_codes(cond_codes[keep], shift[keep]),
                            action_bins[keep] + per_action_bin * shift[keep][:, None, :], np.flatnonzero(keep)))
        return out

    # -------------------------------------------------------------------------------------- protocol
    def examples(self, split: str) -> list[Example]:
        """One example per window of the split (multi-step or single-step, by `mode`); with `augment="d4"`
        the training split holds every window under all eight symmetries of the square arena, with
        `"d4_shift"` also SHIFT_COPIES translated copies of each (see `_shifts`)."""
        if split not in self.windows:
            raise ValueError(f"unknown split {split!r}; known: {sorted(self.windows)}")
        out = []
        for k, shift, abs_codes, cond_codes, action_bins, *index in self._variants(split):
            rows = index[0] if index else np.arange(len(abs_codes))
            out += self._examples(split, k, shift, rows, abs_codes, cond_codes, action_bins)
        return out

    def _examples(self, split: str, sym: int, shift: np.ndarray, rows: np.ndarray, abs_codes: np.ndarray,
                  cond_codes: np.ndarray, action_bins: np.ndarray) -> list[Example]:
        out = []
        for j, i in enumerate(rows.tolist()):
            full = self.codec.window_tokens(abs_codes[j], cond_codes[j, 1:], action_bins[j])
            tag = {"sym": sym, "shift": shift[j].tolist()} if sym or shift[j].any() else {"sym": 0}
            if self.mode == "multi":
                cut = 1 + self.codec.abs_tokens + self.codec.action_dim
                forced = [self.codec.action_tokens(action_bins[j, t]) for t in range(1, self.horizon)]
                meta = {"split": split, "index": i, "first": 1, "frames": self.horizon, **tag}
                out.append(Example(full[:cut], full[cut:], forced, meta))
            else:
                k = self.context_frames
                stride = self.codec.cond_tokens + self.codec.action_dim
                cut = 1 + self.codec.abs_tokens + k * stride - self.codec.cond_tokens
                meta = {"split": split, "index": i, "first": k, "frames": 1, **tag}
                out.append(Example(full[:cut], full[cut : cut + self.codec.cond_tokens], None, meta))
        return out

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
        """Token ids of visual codes: the only tokens a frame position may hold."""
        return (0, self.codec.codebook_size)

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
        """(N, n_frames, 5) judged states of the true frames x_first..x_{first+n_frames-1} (cached)."""
        from rlvr_sim.metrics.pusht_pixels import judge_states

        w = self.windows[split]
        out = np.zeros((len(rows), n_frames, 5))
        for i, (r, f) in enumerate(zip(rows, first)):
            for t in range(n_frames):
                key = (split, int(r), int(f) + t)
                if key not in self._gold_cache:
                    self._gold_cache[key] = judge_states(w.future[r, f - 1 + t][None])[0]
                out[i, t] = self._gold_cache[key]
        return out

    def frame_scores(self, pred: np.ndarray, gold: np.ndarray, gold_states: np.ndarray | None = None) -> np.ndarray:
        """Per-frame score (lower is better) of (N, F, S, S, 3) predicted vs true frames, by `reward_kind`."""
        from rlvr_sim.metrics.pusht_pixels import judge_states, object_errors, object_score
        from rlvr_sim.metrics.video import mae

        n, f = pred.shape[:2]
        flat_pred, flat_gold = pred.reshape(-1, *pred.shape[2:]), gold.reshape(-1, *gold.shape[2:])
        score = np.zeros(n * f)
        if self.reward_kind in ("perceptual", "both"):
            score += mae(flat_pred, flat_gold) + self.perceptual(flat_pred, flat_gold)
        if self.reward_kind in ("object", "both"):
            truth = judge_states(flat_gold) if gold_states is None else gold_states.reshape(-1, 5)
            objects = object_score(object_errors(judge_states(flat_pred), truth))
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
                if "shift" in meta:  # a translated copy: move the prediction back first
                    codes = self._shift_codes(codes[None], -np.asarray(meta["shift"])[None])[0]
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


__all__ = ["VideoCodec", "VideoTask", "WORST_REWARD", "Windows"]
