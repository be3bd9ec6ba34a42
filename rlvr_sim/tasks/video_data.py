"""Episodes -> tokenised windows for `VideoTask`: the train/test split, action bins and the window cache.

A window is an anchor frame x_0, the true frames x_1..x_T and the actions a_0..a_{T-1} between them, coded by the
frame tokenizer once (absolute codes of x_0, conditional codes of x_0..x_T given x_0) and cached on disk under a
digest of everything that shapes it (settings, files, action bins, tokenizer weights). Windows overlap (a stride
below the horizon), so their true frames are kept once per episode frame (`WindowFrames`), not once per window:
at stride 2 and horizon 16 that is 5.5x less memory on 50-step PushT episodes (`benchmarks/video_data_memory.py`),
part of what lets a few thousand episodes train on a laptop.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class WindowFrames:
    """The true frames x_1..x_T of every window, read like a (W, T, S, S, 3) uint8 array: each distinct episode
    frame is stored once (`frames`, (N, S, S, 3)) and `index` (W, T) says which frame is each window's step.
    Indexing materialises only what is asked for (`future[r, t]`, `future[:n]`, `future[rows, k]`)."""

    def __init__(self, frames: np.ndarray, index: np.ndarray) -> None:
        index = np.asarray(index, dtype=np.int64)
        if index.ndim != 2 or (index.size and not 0 <= index.min() <= index.max() < len(frames)):
            raise ValueError(f"window frame index must be (W, T) rows into {len(frames)} frames, got shape {index.shape}")
        self.frames, self.index = frames, index

    @classmethod
    def dense(cls, future: np.ndarray) -> WindowFrames:
        """From a (W, T, ...) array (each window's frames stored apart, as caches written before this class were)."""
        future = np.asarray(future)
        return cls(future.reshape(-1, *future.shape[2:]), np.arange(future.shape[0] * future.shape[1]).reshape(future.shape[:2]))

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.index.shape, *self.frames.shape[1:])

    @property
    def dtype(self) -> np.dtype:
        return self.frames.dtype

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.frames[self.index[key]]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.frames[self.index]
        return out if dtype is None else out.astype(dtype)


@dataclass
class Windows:
    """Pre-tokenised windows of one split (arrays indexed by window)."""

    context: np.ndarray  # (W, S, S, 3) uint8 anchor frames x_0
    future: WindowFrames  # (W, T, S, S, 3) uint8 true frames x_1..x_T, each episode frame stored once
    abs_codes: np.ndarray  # (W, abs_tokens)
    cond_codes: np.ndarray  # (W, T + 1, cond_tokens): index 0 = x_0 given itself ("no change")
    action_bins: np.ndarray  # (W, T, A) bins of a_0..a_{T-1}


def tokenizer_digest(directory: Path, weights_file: str) -> str:
    """Digest of a tokenizer checkpoint: its weights, or its config for weightless (pose) tokenizers."""
    path = directory / weights_file
    path = path if path.is_file() else directory / "tokenizer_config.json"
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


def load_windows(settings: dict[str, Any], image_size: int, horizon: int, frame_skip: int, frame_tokenizer: Any,
                 action_bins: dict | None, cache_dir: Path | None) -> tuple[dict[str, Windows], Any]:
    """({"train", "test"} windows, ActionBins) of the episodes `settings` name (VideoTask's settings dict).

    `action_bins` given (a checkpoint's) is used as is; else the bins are fitted to the training actions."""
    from rlvr_sim.data.episodes import episode_paths, load_episodes, split_paths
    from rlvr_sim.models.action_bins import ActionBins
    from rlvr_sim.models.visual_tokenizer import WEIGHTS_FILE

    s = settings
    paths = episode_paths(s["data_dir"], **({"camera": s["camera"]} if "camera" in s else {}))
    split = split_paths(paths, s["test_fraction"], s["split_seed"])
    for extra in s.get("extra_train_dirs", []):
        more = episode_paths(extra)
        split["train"] = split["train"] + more
        paths = paths + more
    episodes = {name: load_episodes(split[name], image_size, frame_skip) for name in split}
    if action_bins is not None:
        bins = ActionBins.from_dict(action_bins)
    else:
        bins = ActionBins.fit(np.concatenate([ep.actions for ep in episodes["train"]]))
    key = json.dumps({**s, "files": [p.name for p in paths], "bins": bins.to_dict(),
                      "tok": tokenizer_digest(Path(s["tokenizer_dir"]), WEIGHTS_FILE)}, sort_keys=True)
    digest = hashlib.sha1(key.encode()).hexdigest()[:16]
    cache = (cache_dir or Path(s["data_dir"]) / ".cache") / f"video_windows_{digest}.npz"
    if cache.is_file():
        with np.load(cache) as data:
            return {name: _from_arrays(data, name) for name in ("train", "test")}, bins
    result = {}
    for name, eps in episodes.items():
        stride = s["train_stride"] if name == "train" else s["test_stride"]
        limit = s["max_test_windows"] if name == "test" else None
        result[name] = tokenise(eps, stride, limit, horizon, frame_skip, frame_tokenizer, bins)
    arrays = {}
    for name, w in result.items():
        arrays.update({f"{name}_{f}": getattr(w, f) for f in Windows.__dataclass_fields__ if f != "future"})
        arrays.update({f"{name}_future_frames": w.future.frames, f"{name}_future_index": w.future.index})
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **arrays)
    return result, bins


def _from_arrays(data: Any, name: str) -> Windows:
    """A split's windows from a cache file (frames stored once, or, in caches written before, per window)."""
    if f"{name}_future_frames" in data.files:
        future = WindowFrames(data[f"{name}_future_frames"], data[f"{name}_future_index"])
    else:
        future = WindowFrames.dense(data[f"{name}_future"])
    return Windows(data[f"{name}_context"], future, data[f"{name}_abs_codes"], data[f"{name}_cond_codes"],
                   data[f"{name}_action_bins"])


def tokenise(episodes: list, stride: int, limit: int | None, horizon: int, frame_skip: int, frame_tokenizer: Any,
             action_bins: Any) -> Windows:
    """The windows of `horizon` + 1 frames starting every `stride` frames (at most `limit`, drawn with seed 0)."""
    from rlvr_sim.models.visual_tokenizer import ABSOLUTE, CONDITIONAL

    T = horizon
    starts = [(e, t) for e, ep in enumerate(episodes) for t in range(0, len(ep) - T, stride)]
    if limit is not None and len(starts) > limit:
        keep = np.random.default_rng(0).choice(len(starts), limit, replace=False)
        starts = [starts[i] for i in sorted(keep)]
    if not starts:
        raise ValueError(f"no window of {T + 1} frames (frame skip {frame_skip}) in the episodes")
    context = np.stack([episodes[e].images[t] for e, t in starts])
    used = sorted({e for e, _ in starts})  # each used episode's frames once; windows index into them
    offset = dict(zip(used, np.cumsum([0] + [len(episodes[e].images) for e in used[:-1]]).tolist()))
    future = WindowFrames(np.concatenate([episodes[e].images for e in used]),
                          np.array([offset[e] + t + 1 + np.arange(T) for e, t in starts]))
    actions = np.stack([episodes[e].actions[t : t + T] for e, t in starts])
    tok = frame_tokenizer
    if tok.context_free:  # codes do not depend on the anchor: code every frame of an episode once
        codes = [tok.encode(ep.images) for ep in episodes]
        abs_codes = np.stack([codes[e][t] for e, t in starts])
        cond = np.stack([codes[e][t : t + T + 1] for e, t in starts])
        return Windows(context, future, abs_codes, cond, action_bins.encode(actions))
    abs_codes = tok.encode(context, None, ABSOLUTE)
    frames = np.concatenate([context[:, None], np.asarray(future)], axis=1)  # (W, T+1, ...)
    flat = frames.reshape(-1, *frames.shape[2:])
    cond = tok.encode(flat, np.repeat(context, T + 1, axis=0), CONDITIONAL).reshape(len(starts), T + 1, -1)
    return Windows(context, future, abs_codes, cond, action_bins.encode(actions))


__all__ = ["WindowFrames", "Windows", "load_windows", "tokenise", "tokenizer_digest"]
