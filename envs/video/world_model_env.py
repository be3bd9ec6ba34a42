"""`RLVRWorld-Video-v0`: a trained video world model served as a Gymnasium environment.

The model is a causal LM over [frame codes | action bins | specials] (`rlvr_sim.tasks.video`) plus its
frame tokenizer (the PushT pose tokenizer, or the learned compressive FSQ tokenizer). `reset` encodes a
start frame as the *anchor*; every `step` appends the binned action and samples the next frame's codes
from the KV cache through the sampler's `DecodeSession` (the decoding loop GRPO and the evaluations
use), then decodes them to pixels. After `horizon` steps (the window the model was trained on) the
context rolls: the frame `horizon // 2` steps back becomes the anchor and the later frames and actions
are kept as context (so the model still sees the motion), and the cache is rebuilt.
`VideoWorldModelVectorEnv` runs N such worlds as one batch of rows through the same LM calls, so
`gym.make_vec(..., num_envs=N)` costs far less than N envs in a loop.

Task signal: on a PushT checkpoint each step returns gym-pusht's reward (goal coverage) and ends the
episode on gym-pusht's success rule, computed from the predicted pose (`rlvr_sim.metrics.pusht_reward`;
a pose the pixel judge reads off a visual model's frame succeeds above a calibrated 0.93 rather than 0.95, and
only where the drawn T is a T: `pusht_pixels.is_tee`);
a checkpoint of another scene returns 0.0 and never terminates (see `VideoWorldModelEnv`).

This module imports no training code: it needs the checkpoint directory (HF Llama + `rlvr_sim.json`
with codec and action ranges + `tokenizer/` + optional `start_frames.npz`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from rlvr_sim.envs.lm_env import LMWorldModelEnv, vector_seeds

from rlvr_sim import resources
from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer
from rlvr_sim.models.pose_tokenizer import SLOTS, PoseTokenizer

PUSHT = "pusht"  # the scene whose task signal (gym-pusht's reward and success) the env computes
DEFAULT_CHECKPOINT = "pusht_pose_base"  # under rlvr_sim/assets: the best measured, median-decoded (docs/video.md)
TOKENIZER_SUBDIR, START_FRAMES_FILE = "tokenizer", "start_frames.npz"


def resolve_checkpoint(checkpoint: str | Path | None) -> Path:
    """A video world-model checkpoint directory (`rlvr_sim.resources.resolve_checkpoint`, this env's default)."""
    return resources.resolve_checkpoint(checkpoint, DEFAULT_CHECKPOINT, what="video world-model checkpoint")


def checkpoint_tokenizer(checkpoint: Path, settings: dict[str, Any]) -> Any:
    """A checkpoint's frame tokenizer: its own `tokenizer/` folder, else the one its `video_settings` name."""
    from rlvr_sim.models.pose_tokenizer import load_frame_tokenizer

    own = checkpoint / TOKENIZER_SUBDIR
    return load_frame_tokenizer(own if own.is_dir() else settings["tokenizer_dir"])


def anchor_index(step: int, horizon: int) -> int:
    """The frame that step `step` (1-based) of a rollout is drawn over: the start frame (0) until the context first
    rolls, then each roll's anchor, `horizon // 2` steps apart (`VideoWorldModel._roll`)."""
    keep = horizon // 2
    return 0 if step <= horizon else keep * ((step - horizon - 1) // keep + 1)


def checkpoint_scene(meta: dict[str, Any], tokenizer: Any) -> str | None:
    """The scene a checkpoint simulates: `video_settings.scene`, else the training task (`task`), else
    "pusht" for a pose-token checkpoint (its five tokens are PushT's poses by design), else None."""
    scene = meta.get("video_settings", {}).get("scene") or meta.get("task")
    if scene:
        return str(scene)
    return PUSHT if isinstance(tokenizer, PoseTokenizer) else None


def unreadable_objects(frame: np.ndarray) -> list[str]:
    """What of a PushT scene the pixel judge cannot read in `frame`, as phrases ([] when both show).

    A pose-token model encodes its start frame as five poses read by the judge; a frame without the
    agent's disc or the T (all black, all white, another scene) would silently start it from nothing.
    Each object must show about its own area in its own colour: the disc between 1 pixel and 4 times its
    area, the T between 0.5 and 2 times (recorded frames: disc 4-12 px, T 87-114 px at 64x64; an all-black
    frame is nearest the T's grey everywhere)."""
    from rlvr_sim.metrics.pusht_pixels import LABELS, WORLD_SIZE, colour_labels

    labels = colour_labels(frame)
    scale = labels.shape[0] * labels.shape[1] / WORLD_SIZE**2
    objects = {  # label: (name, colour, expected pixels (disc radius 15; T area 6300 world units^2), bounds)
        "agent": ("agent", "blue", np.pi * 15.0**2 * scale, (1.0 / (np.pi * 15.0**2 * scale), 4.0)),
        "block": ("T", "grey", 6300.0 * scale, (0.5, 2.0)),
    }
    problems = []
    for label, (name, colour, expected, (low, high)) in objects.items():
        count = int((labels == LABELS[label]).sum())
        if not low * expected <= count <= high * expected:
            problems.append(f"no readable {name} ({count} pixels of the {name}'s {colour}; a visible {name} "
                            f"shows about {expected:.0f})")
    return problems


def median_codes(logits: torch.Tensor, slot: int, tokenizer: PoseTokenizer) -> torch.Tensor:
    """Per row, the code at the median of the next-token distribution restricted to pose slot `slot`.

    Greedy decoding picks the single most likely bin; when the model is unsure whether the pushed T moves
    (most of the mass spread over several "moved" bins, the largest single bin "still"), that is "still"
    every time. The median of the ordered bins is the point estimate with the least expected absolute error.
    The angle slot is circular: its bins are read in order starting half a turn from the most likely bin.
    The slot's "not visible" code wins when it holds more than half the mass."""
    size = tokenizer.config.slot_size
    return median_in_range(logits, slot * size, (slot + 1) * size, circular=SLOTS[slot] == "block_angle")


def median_in_range(logits: torch.Tensor, lo: int, hi: int, circular: bool = False,
                    absent_bin: bool = True) -> torch.Tensor:
    """Per row, the token at the median of the next-token distribution restricted to the ordered bins
    [lo, hi - 1) (the last id of the range means "not visible" / "unknown" and wins with more than half
    the mass; `absent_bin=False`: every id of [lo, hi) is an ordered bin); `circular` reads the bins in
    order starting half a turn from the most likely one."""
    bins = hi - lo - int(absent_bin)
    probs = torch.softmax(logits[:, lo:hi].double(), dim=-1)
    absent, values = (probs[:, -1], probs[:, :-1]) if absent_bin else (torch.zeros(len(probs)), probs)
    shift = torch.zeros(len(probs), dtype=torch.long)
    if circular:
        shift = values.argmax(-1) - bins // 2
        values = torch.gather(values, 1, (torch.arange(bins)[None, :] + shift[:, None]) % bins)
    cdf = values.cumsum(-1) / values.sum(-1, keepdim=True)
    index = ((cdf < 0.5).sum(-1) + shift) % bins
    return torch.where(absent > 0.5, torch.full_like(index, bins), index) + lo


class VideoWorldModel:
    """Batched frame generation for B worlds stepping in lock-step (no gym semantics here).

    Decoding runs through `rlvr_sim.rl.sampler.DecodeSession`, the loop that GRPO and the evaluations
    sample with: the first step prefills BOS + anchor codes + the first action in one pass (exactly the
    prompt of a multi-step training example), each step draws the frame's codes token by token (each
    fed back at once) and later actions are fed as one chunk, as `sample(..., forced=...)` does, so the
    env reproduces the evaluation's samples token for token. Past `horizon` steps the context rolls.
    """

    def __init__(self, checkpoint: str | Path | None = None) -> None:
        from rlvr_sim.models.action_bins import ActionBins
        from rlvr_sim.models.lm import load_model
        from rlvr_sim.tasks.video import VideoCodec

        self.checkpoint = resolve_checkpoint(checkpoint)
        self.model, _, meta = load_model(self.checkpoint)
        self.model.eval()
        missing = [k for k in ("video_codec", "action_bins", "video_settings") if k not in meta]
        if missing:
            raise ValueError(f"{self.checkpoint} is not a video world model: metadata lacks {missing}")
        self.codec = VideoCodec(**meta["video_codec"])
        self.action_bins = ActionBins.from_dict(meta["action_bins"])
        settings = meta["video_settings"]
        self.horizon = int(settings["horizon"])
        self.frame_skip = int(settings.get("frame_skip", 1))
        self.tokenizer = checkpoint_tokenizer(self.checkpoint, settings)
        self.image_size = self.tokenizer.config.image_size
        self.scene = checkpoint_scene(meta, self.tokenizer)
        start_file = self.checkpoint / START_FRAMES_FILE
        self.start_frames = np.load(start_file)["image"] if start_file.is_file() else None
        self.session = None

    def check_frames(self, frames: Any, count: int) -> np.ndarray:
        """(count, S, S, 3) uint8 frames, or a clear error."""
        frames = np.asarray(frames)
        size = self.image_size
        if frames.shape != (count, size, size, 3) or frames.dtype != np.uint8:
            raise ValueError(
                f"start frame(s) must be uint8 of shape {(size, size, 3)} (x{count}); got {frames.dtype} "
                f"{frames.shape[1:] if frames.ndim == 4 else frames.shape}"
            )
        return frames

    def check_actions(self, actions: Any, count: int) -> np.ndarray:
        """(count, A) finite float actions, or a clear error (values outside the data range are clipped)."""
        actions = np.asarray(actions, dtype=np.float64)
        if actions.shape != (count, self.codec.action_dim):
            raise ValueError(f"action must have shape {(self.codec.action_dim,)} per env; got {actions.shape}")
        if not np.isfinite(actions).all():
            raise ValueError("action contains NaN or inf")
        return actions

    def start(self, frames: np.ndarray, seeds: list[int], context: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Anchor every row at its frame (its absolute codes); the LM is prefilled at the first step.

        `context` = (past frames uint8 (N, K, S, S, 3), actions (N, K, A)): the K frames seen before `frames`
        and the action taken from each, oldest first. The rows are then anchored at the oldest, with the later
        frames and the actions as context, the way a rolling window keeps them: the model sees where the agent
        came from (its speed), as in training windows past their first step. K < the model's horizon."""
        from rlvr_sim.models.visual_tokenizer import ABSOLUTE, CONDITIONAL

        if len(seeds) != len(frames):
            raise ValueError(f"got {len(seeds)} seeds for {len(frames)} frames")
        past, past_actions = (None, None) if context is None else self._check_context(context, len(frames))
        every = frames if past is None else np.concatenate([past.reshape(-1, *frames.shape[1:]), frames])
        if isinstance(self.tokenizer, PoseTokenizer):  # a learned visual model accepts any frame of its size
            for row, frame in enumerate(every):
                name = f"start frame {row}" if past is None else f"frame {row} of the context and start frames"
                if problems := unreadable_objects(frame):
                    raise ValueError(f"{name} shows " + " and ".join(problems) + ": the pose model "
                                     "reads its start state off both (is it a PushT frame?)")
        self.generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
        self.session = None
        if past is not None:
            later = [past[:, k] for k in range(1, past.shape[1])] + [frames.copy()]
            self._anchor(past[:, 0], later, [self.action_bins.encode(past_actions[:, k]) for k in range(past.shape[1])])
            self.last_frames = frames.copy()
            return
        self.anchor = frames.copy()
        self.last_frames = frames.copy()
        codes = self.tokenizer.encode(frames, None, ABSOLUTE)
        self.prefix = [[self.codec.bos_id, *map(int, row)] for row in codes]
        # history since the anchor, for the rolling context: codes of each frame and the action bins
        own = codes if self.tokenizer.context_free else self.tokenizer.encode(frames, frames, CONDITIONAL)
        self.history_codes = [own]
        self.history_frames, self.history_bins = [frames.copy()], []
        self.steps_since_anchor = 0

    def _check_context(self, context: Any, rows: int) -> tuple[np.ndarray, np.ndarray]:
        try:
            past, actions = context
        except (TypeError, ValueError):
            raise ValueError("context must be (past frames (N, K, S, S, 3), actions (N, K, A))") from None
        past, actions = np.asarray(past), np.asarray(actions, dtype=np.float64)
        size, dim = self.image_size, self.codec.action_dim
        if past.ndim != 5 or past.shape[0] != rows or past.shape[2:] != (size, size, 3) or past.dtype != np.uint8:
            raise ValueError(f"context frames must be uint8 (N={rows}, K, {size}, {size}, 3), got {past.dtype} {past.shape}")
        if actions.shape != (rows, past.shape[1], dim) or not np.isfinite(actions).all():
            raise ValueError(f"context actions must be finite (N={rows}, K={past.shape[1]}, {dim}), got {actions.shape}")
        if not 1 <= past.shape[1] < self.horizon:
            raise ValueError(f"context holds 1 to {self.horizon - 1} past frames (the model's horizon is {self.horizon}), "
                             f"got {past.shape[1]}")
        return past, actions

    def _anchor(self, anchor: np.ndarray, frames: list[np.ndarray], bins: list[np.ndarray],
                codes: tuple[np.ndarray, list[np.ndarray]] | None = None) -> None:
        """Anchor at `anchor` with the later `frames` and the action `bins` between them as context (their
        codes, when `codes` does not give them: (anchor codes, [codes of each frame]))."""
        from rlvr_sim.models.visual_tokenizer import ABSOLUTE, CONDITIONAL

        if codes is not None:  # context-free codes the rolling window already holds
            abs_codes = anchor_codes = codes[0]
            cond = codes[1]
        elif self.tokenizer.context_free:
            abs_codes = anchor_codes = self.tokenizer.encode(anchor, None, ABSOLUTE)
            cond = [self.tokenizer.encode(f, None, ABSOLUTE) for f in frames]
        else:
            abs_codes = self.tokenizer.encode(anchor, None, ABSOLUTE)
            anchor_codes = self.tokenizer.encode(anchor, anchor, CONDITIONAL)
            cond = [self.tokenizer.encode(f, anchor, CONDITIONAL) for f in frames]
        self.prefix = [self.codec.window_tokens(abs_codes[r], [c[r] for c in cond], [b[r] for b in bins])
                       for r in range(len(anchor))]
        self.anchor = anchor.copy()
        self.history_frames = [anchor, *frames]
        self.history_codes = [anchor_codes, *cond]
        self.history_bins = list(bins)
        self.session = None
        self.steps_since_anchor = len(frames)

    def _roll(self) -> None:
        """Re-anchor at the frame `horizon // 2` steps back, keeping the later frames and actions as context."""
        keep = self.horizon // 2
        codes = None
        if self.tokenizer.context_free:  # codes do not depend on the anchor: reuse the sampled codes
            codes = (self.history_codes[-keep - 1], self.history_codes[-keep:])
        self._anchor(self.history_frames[-keep - 1], self.history_frames[-keep:], self.history_bins[-keep:], codes)

    @property
    def serves_median(self) -> bool:
        """Whether the env serves this model median-decoded by default: its codes are ordered bins (pose
        tokens, keypoint coordinates). The evaluations read this too, so they measure what the env serves."""
        return isinstance(self.tokenizer, (PoseTokenizer, KeypointTokenizer))

    @torch.no_grad()
    def step(self, actions: np.ndarray, temperature: float = 1.0, median: bool = False) -> np.ndarray:
        """Predict every row's next frame (uint8 (B, S, S, 3)) given its action.

        `median` (ordered codes: pose or keypoint checkpoints; temperature 0 only): each token is the median of
        the model's distribution over its slot's bins (the angle's circular median; a keypoint coordinate's
        128 levels) instead of the most likely bin; see `median_codes`."""
        keypoints = isinstance(self.tokenizer, KeypointTokenizer)
        if median and not (keypoints or isinstance(self.tokenizer, PoseTokenizer)):
            raise ValueError("median decoding needs ordered codes (a pose-token or keypoint checkpoint)")
        if median and temperature != 0:
            raise ValueError(f"median decoding is a point estimate: use temperature 0, got {temperature}")
        from rlvr_sim.models.visual_tokenizer import CONDITIONAL
        from rlvr_sim.rl.sampler import DecodeSession

        if self.steps_since_anchor >= self.horizon:
            self._roll()
        bins = self.action_bins.encode(actions)
        action_ids = self.codec.chunks(self.history_codes[-1], bins).tolist()  # the action (+ body frame)
        if self.session is None:
            prompts = [prefix + ids for prefix, ids in zip(self.prefix, action_ids)]
            self.session = DecodeSession(self.model, prompts, generators=self.generators,
                                         pad_token_id=self.codec.pad_id)
        else:
            self.session.feed(torch.tensor(action_ids, dtype=torch.long))
        codes, ranges = [], self.codec.slot_ranges()
        for slot in range(self.codec.cond_tokens):
            allowed = (0, self.codec.frame_vocab)  # any frame token, as `sample()` draws them (one path)
            if median and keypoints:  # a change-coded slot (delta / mixed layouts): read around its likeliest value
                token = median_in_range(self.session.logits, 0, self.codec.frame_vocab, absent_bin=False,
                                        circular=slot in (self.codec.delta_slots or ()))
            elif median and self.codec.relational:
                token = median_in_range(self.session.logits, *ranges[slot])
            elif median:
                token = median_codes(self.session.logits, slot, self.tokenizer)
            else:
                token, _ = self.session.draw(temperature, allowed_token_range=allowed)
            codes.append(token)
            self.session.feed(token[:, None])
        # generated tokens -> codes (relational: the T moved by its body-frame displacement; delta: each
        # coordinate moved by its token)
        code_array = self.codec.to_codes(self.history_codes[-1], torch.stack(codes, dim=1).numpy())
        self.last_frames = self.tokenizer.decode(code_array, self.anchor, CONDITIONAL)
        self.last_codes = code_array
        self.history_frames.append(self.last_frames)
        self.history_codes.append(code_array)
        self.history_bins.append(bins)
        self.steps_since_anchor += 1
        return self.last_frames.copy()

    def task_signal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(reward, success, coverage) per row of the last predicted frames: gym-pusht's on a PushT
        checkpoint, read off the predicted pose tokens (pose checkpoints) or by the pixel judge off the
        predicted frames (visual ones); zeros, False and None on another scene."""
        from rlvr_sim.metrics.pusht_reward import frame_reward, pose_reward

        rows = len(self.last_frames)
        if self.scene != PUSHT:
            return np.zeros(rows), np.zeros(rows, dtype=bool), None
        if isinstance(self.tokenizer, PoseTokenizer):
            return pose_reward(self.tokenizer.codes_to_states(self.last_codes)[:, 2:])
        return frame_reward(self.last_frames)

    def rollout(self, frames: np.ndarray, actions: np.ndarray, seeds: list[int], temperature: float = 1.0,
                batch_size: int = 32, median: bool = False,
                context: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Open-loop rollouts: (N, S, S, 3) start frames and (N, H, A) actions -> (N, H, S, S, 3) frames
        (`context`: the past frames and actions before each start, as `start` takes them).

        The evaluations call this: it is `step` in a loop, the env's own path."""
        frames = self.check_frames(frames, len(frames))
        actions = np.asarray(actions, dtype=np.float64)
        out = np.zeros((len(frames), actions.shape[1], *frames.shape[1:]), np.uint8)
        for lo in range(0, len(frames), batch_size):
            hi = min(lo + batch_size, len(frames))
            self.start(frames[lo:hi], list(seeds[lo:hi]),
                       None if context is None else (context[0][lo:hi], context[1][lo:hi]))
            for t in range(actions.shape[1]):
                out[lo:hi, t] = self.step(self.check_actions(actions[lo:hi, t], hi - lo), temperature, median)
        return out


class VideoWorldModelEnv(LMWorldModelEnv):
    """A learned PushT simulator: actions are agent target positions, observations predicted frames.

    ## Description
    Runs the embedded RLVR PushT video world model (or any checkpoint of ours) as an environment.
    ## Action Space
    The data set's: for PushT `Box(low, high, (2,), float32)` with the per-dimension ranges of the
    training actions (agent target x, y in gym-pusht pixels); values outside are clipped, a wrong shape
    or a NaN raises `ValueError`.
    ## Observation Space
    `Box(0, 255, (64, 64, 3), uint8)`: the predicted RGB frame.
    ## Rewards
    On a PushT checkpoint, gym-pusht's reward for the predicted frame: clip(coverage / 0.95, 0, 1), where
    coverage is the share of the goal T's area the predicted T covers (`rlvr_sim.metrics.pusht_reward`,
    gym-pusht's own formula). The T's pose is the model's predicted pose tokens (bin centres) on a
    pose-token checkpoint and the pixel judge's reading of the predicted frame on a visual one. It is the
    reward gym-pusht gives at the env step the frame shows (the last of the `frame_skip` env steps one
    model step spans), not their sum. `info["coverage"]` and `info["is_success"]` as gym-pusht reports
    them. A checkpoint of another scene (its `rlvr_sim.json` names another `video_settings.scene` or
    `task`, e.g. a robot-arm world the PushT judge cannot read) returns 0.0 and reports neither.
    ## Starting State
    A frame of the embedded data set (drawn with the env's seeded generator), or
    `reset(options={"frame": uint8 (64, 64, 3)})`; a square RGB uint8 frame of another size (gym-pusht's own
    96x96, a camera's 480x480) is resized first the way the training frames were (`resize_frames`: area
    averaging when shrinking), and the observation returned by `reset` is that resized frame. A pose-token model must be able to read the frame: one
    without a visible agent or T (all black, all white) raises `ValueError` naming what is missing; a
    visual model accepts any frame of its size.
    ## Episode End
    Terminated on gym-pusht's success rule (coverage > 0.95) on a PushT checkpoint, judged at each
    predicted frame: on the predicted pose tokens of a pose-token checkpoint; on a visual one, where the pose is
    the pixel judge's reading of the frame (a few world units off, which lowers the coverage), above
    `FRAME_SUCCESS_COVERAGE` (0.93, calibrated so the judge on gym-pusht's own frames ends where gym-pusht
    does: 32 of its 45 calibration ends instead of 9 at 0.95; `rlvr_sim.metrics.pusht_reward`), and only where
    the T pixels show a T (`pusht_pixels.is_tee`: a smeared T drawn over the goal does not end the episode).
    Never on another scene. Truncated after `max_episode_steps`.
    ## Arguments
    `checkpoint` (path or embedded name, default "pusht_pose_base"), `render_mode` ("rgb_array" | "human"),
    `max_episode_steps` (100), `temperature` (0.0 = greedy, the most likely next frame: on held-out data it
    keeps the T where gym-pusht keeps it far better than sampling at 1.0, see docs/video.md; 1.0 samples
    the model's distribution), `median` (None = `VideoWorldModel.serves_median`, True for pose-token and
    keypoint checkpoints, whose codes are ordered bins: with temperature 0, each token is the median of the
    model's distribution over its bins rather than the most likely bin, `median_codes`; False = the most
    likely bin), `uncertainty_samples` (0): K > 0 rolls K more worlds beside the served one,
    sampled at `uncertainty_temperature` (1.0) from the same start and actions with other seeds, and reports
    per step `info["uncertainty"]`: their mean absolute pixel difference from the served frame (% of the
    [0, 255] range), the model's disagreement with itself, a cheap signal of where not to trust it. The
    served world is unchanged by them (a separate batch). `world`: an already loaded `VideoWorldModel` to
    serve instead of loading `checkpoint` (the vector env's sub-envs share one).
    ## Seeding
    As the text world-model envs (`rlvr_sim.envs.lm_env.LMWorldModelEnv`): `reset(seed=s)` replays an episode
    exactly; the episode's sample seed is drawn from the env's `np_random` in [0, 2**31) and reported in
    `info["sample_seed"]`: `VideoWorldModel(checkpoint).rollout(start_frame[None], actions[None],
    [info["sample_seed"]], temperature)` (the evaluations' path) gives the same frames. One seed per episode,
    not per step: a video world keeps its decoding state (KV cache) from step to step.
    ## Version History
    v0: initial release.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 4}

    def __init__(self, checkpoint: str | None = None, render_mode: str | None = None, max_episode_steps: int = 100,
                 temperature: float = 0.0, uncertainty_samples: int = 0, uncertainty_temperature: float = 1.0,
                 median: bool | None = None, world: VideoWorldModel | None = None) -> None:
        self._check_render_mode(render_mode)
        self._set_temperature(temperature)
        if uncertainty_samples < 0:
            raise ValueError(f"uncertainty_samples must be >= 0, got {uncertainty_samples}")
        self.uncertainty_samples, self.uncertainty_temperature = uncertainty_samples, uncertainty_temperature
        # `world`: an already loaded model to share (the vector env's sub-envs), instead of `checkpoint`
        self.world = world if world is not None else VideoWorldModel(checkpoint)
        self.shadow = copy.copy(self.world) if uncertainty_samples else None  # shares the model, own state
        self.checkpoint = str(self.world.checkpoint)
        self.max_episode_steps = max_episode_steps
        self.median = self.world.serves_median if median is None else median
        size = self.world.image_size
        self.observation_space = spaces.Box(0, 255, (size, size, 3), np.uint8)
        bins = self.world.action_bins
        self.action_space = spaces.Box(bins.low.astype(np.float32), bins.high.astype(np.float32), dtype=np.float32)
        self.metadata = {**self.metadata, "render_fps": max(1, round(10 / self.world.frame_skip))}
        self.frame: np.ndarray | None = None
        self._window = None

    def _draw_episode(self, frame: Any) -> tuple[np.ndarray, int, list[int]]:
        """The episode's start frame (the caller's, validated, or a seeded draw; its index, -1 if given) and its
        sample seeds (the served world's first), drawn from the env's `np_random`."""
        frame, index = _start_frame(self.world, self.np_random, frame)
        return frame, index, [self._draw_sample_seed() for _ in range(1 + self.uncertainty_samples)]

    def _start(self, options: dict[str, Any]) -> tuple[np.ndarray, dict]:
        """`LMWorldModelEnv.reset`'s hook: a start frame, then the episode's sample seeds."""
        frame, index, seeds = self._draw_episode(options.get("frame"))
        self.world.start(frame[None], seeds[:1])
        if self.shadow is not None:
            self.shadow.start(np.repeat(frame[None], self.uncertainty_samples, axis=0), seeds[1:])
        self.frame, self.elapsed = frame.copy(), 0
        if self.render_mode == "human":
            self.render()
        return frame.copy(), {"start_index": index, "sample_seed": seeds[0]}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.frame is None:
            raise RuntimeError("call reset() before step()")
        actions = self.world.check_actions(np.asarray(action, dtype=np.float64)[None], 1)
        self.frame = self.world.step(actions, self.temperature, self.median and self.temperature == 0)[0]
        self.elapsed += 1
        if self.render_mode == "human":
            self.render()
        info = {"steps_since_anchor": self.world.steps_since_anchor}
        reward, success, coverage = self.world.task_signal()
        if coverage is not None:
            info["coverage"], info["is_success"] = float(coverage[0]), bool(success[0])
        if self.shadow is not None:
            others = self.shadow.step(np.repeat(actions, self.uncertainty_samples, axis=0), self.uncertainty_temperature)
            info["uncertainty"] = float(np.abs(others.astype(np.float64) - self.frame).mean() / 255.0 * 100.0)
        return self.frame.copy(), float(reward[0]), bool(success[0]), self.elapsed >= self.max_episode_steps, info

    def render(self) -> np.ndarray | None:
        if self.render_mode == "rgb_array":
            return None if self.frame is None else self.frame.copy()
        if self.render_mode == "human" and self.frame is not None:
            self._window = _show(self._window, self.frame, self.metadata["render_fps"])
        return None

    def close(self) -> None:
        if self._window is not None:
            import pygame

            pygame.display.quit()
            self._window = None


def _start_frame(world: VideoWorldModel, rng: np.random.Generator, frame: Any) -> tuple[np.ndarray, int]:
    """The caller's frame (validated; a square RGB uint8 frame of another size is resized as the training frames
    were, by `resize_frames`) or a seeded draw from the checkpoint's start frames."""
    if frame is not None:
        frame = np.asarray(frame)
        size = world.image_size
        if frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3 and frame.shape[0] == frame.shape[1] > 0 \
                and frame.shape[0] != size:
            from rlvr_sim.data.episodes import resize_frames

            frame = resize_frames(frame[None], size)[0]
        return world.check_frames(frame[None], 1)[0], -1
    if world.start_frames is None or not len(world.start_frames):
        raise ValueError(f"{world.checkpoint} ships no start frames: pass reset(options={{'frame': ...}})")
    index = int(rng.integers(len(world.start_frames)))
    return world.start_frames[index].copy(), index


def _show(window: Any, frame: np.ndarray, fps: int, scale: int = 6) -> Any:
    """Draw a frame in a pygame window (created on first use), upscaled for visibility."""
    import pygame

    if window is None:
        pygame.init()
        pygame.display.init()
        window = pygame.display.set_mode((frame.shape[1] * scale, frame.shape[0] * scale))
        pygame.display.set_caption("RLVRWorld-Video-v0")
    surface = pygame.surfarray.make_surface(np.repeat(np.repeat(frame, scale, 0), scale, 1).swapaxes(0, 1))
    window.blit(surface, (0, 0))
    pygame.event.pump()
    pygame.display.flip()
    return window


class VideoWorldModelVectorEnv(VectorEnv):
    """N learned-PushT worlds generated as one batch (same frames as N single envs seeded seed + i).

    Sub-env i is a `VideoWorldModelEnv` sharing the first one's loaded model: it holds the spaces, the
    settings and the seeded random stream that draws its start frame and sample seed, exactly as a single
    env does at reset; the vector env then starts all N worlds as rows of one decoding session and steps
    them together. All sub-envs reset together and share the episode length, so they stay in lock-step;
    autoreset is NEXT_STEP (the step after an episode ends returns the reset frames). Partial resets are not
    supported (one KV-cache session holds every row), so episodes end together: when a row terminates (PushT
    success, as in the single env) every other row is truncated at that step, and all rows reset at the next.
    Rewards and `info["coverage"]` / `info["is_success"]` are the single env's, per row.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, checkpoint: str | None = None, render_mode: str | None = None,
                 max_episode_steps: int = 100, temperature: float = 0.0, median: bool | None = None) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        settings = dict(render_mode=render_mode, max_episode_steps=max_episode_steps, temperature=temperature,
                        median=median)
        first = VideoWorldModelEnv(checkpoint, **settings)
        self.envs = [first] + [VideoWorldModelEnv(world=first.world, **settings) for _ in range(num_envs - 1)]
        self.world, self.num_envs, self.render_mode = first.world, num_envs, first.render_mode
        self.temperature, self.median, self.max_episode_steps = first.temperature, first.median, max_episode_steps
        self.single_observation_space, self.single_action_space = first.observation_space, first.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._needs_reset = False
        self.frames: np.ndarray | None = None
        self._window = None

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        options = options or {}
        if "reset_mask" in options and not np.all(options["reset_mask"]):
            raise ValueError("VideoWorldModelVectorEnv resets all sub-envs together; partial resets are not supported")
        given = options.get("frame")
        if given is not None:
            given = self.world.check_frames(given, self.num_envs)
        starts = []
        for i, (env, env_seed) in enumerate(zip(self.envs, vector_seeds(seed, self.num_envs))):
            gym.Env.reset(env, seed=env_seed)  # the sub-env's random stream, seeded as its own reset seeds it
            starts.append(env._draw_episode(None if given is None else given[i]))
        self.frames = np.stack([frame for frame, _, _ in starts])
        seeds = [episode_seeds[0] for _, _, episode_seeds in starts]
        self.world.start(self.frames, seeds)
        self.elapsed, self._needs_reset = 0, False
        return self.frames.copy(), {"start_index": np.array([index for _, index, _ in starts]),
                                    "sample_seed": np.array(seeds)}

    def step(self, actions: Any):
        if self.frames is None:
            raise RuntimeError("call reset() before step()")
        if self._needs_reset:
            frames, info = self.reset()
            zeros = np.zeros(self.num_envs, dtype=bool)
            return frames, np.zeros(self.num_envs), zeros, zeros.copy(), info
        actions = self.world.check_actions(actions, self.num_envs)
        self.frames = self.world.step(actions, self.temperature, self.median and self.temperature == 0)
        self.elapsed += 1
        rewards, terminated, coverage = self.world.task_signal()
        # one KV session holds every row: when one ends, the others are cut short (truncated) with it
        truncated = np.full(self.num_envs, self.elapsed >= self.max_episode_steps or bool(terminated.any())) & ~terminated
        self._needs_reset = bool((terminated | truncated).any())
        if self.render_mode == "human":
            self.render()
        info = {"steps_since_anchor": np.full(self.num_envs, self.world.steps_since_anchor)}
        if coverage is not None:
            info["coverage"], info["is_success"] = coverage.astype(np.float64), terminated.copy()
        return self.frames.copy(), rewards.astype(np.float64), terminated.astype(bool), truncated, info

    def render(self) -> np.ndarray | None:
        if self.frames is None:
            return None
        if self.render_mode == "rgb_array":
            return self.frames.copy()
        if self.render_mode == "human":
            self._window = _show(self._window, np.concatenate(list(self.frames), axis=1), 4)
        return None

    def close_extras(self, **kwargs: Any) -> None:
        if self._window is not None:
            import pygame

            pygame.display.quit()
            self._window = None
        for env in self.envs:
            env.close()


__all__ = ["VideoWorldModel", "VideoWorldModelEnv", "VideoWorldModelVectorEnv", "resolve_checkpoint"]
