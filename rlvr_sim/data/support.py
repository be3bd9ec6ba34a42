"""Build a learned PushT simulator's data support (`support.npz`) from the episodes it was trained on.

`build_support` judges every frame of the checkpoint's training split (the pose tokenizer's codes, as a pose
model saw them; a visual PushT model's frames are judged the same way), keeps them as a
`rlvr_sim.metrics.support.DataSupport` and calibrates its out-of-support threshold on the test split. Training
packages it into each PushT checkpoint (`training/pusht_pipeline.py`); `python evaluations/real2sim.py
--build-support CHECKPOINT` rebuilds it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.support import (
    SUPPORT_ANGLE_SCALE,
    SUPPORT_COMPONENTS,
    SUPPORT_FILE,
    SUPPORT_MAX_FRAMES,
    SUPPORT_MIN_SCALE,
    SUPPORT_QUANTILE,
    DataSupport,
)


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
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer, PoseTokenizerConfig, load_frame_tokenizer

    torch.set_num_threads(1)
    checkpoint = Path(checkpoint)
    meta = read_meta(checkpoint)
    settings = meta.get("video_settings")
    if not settings:
        raise ValueError(f"{checkpoint} is not a video world model checkpoint (no video_settings in rlvr_sim.json)")
    tokenizer = load_frame_tokenizer(checkpoint / settings.get("tokenizer_dir", "tokenizer"))
    if not isinstance(tokenizer, PoseTokenizer):  # a visual PushT model: its frames are judged the same way
        if settings.get("scene") != "pusht":
            raise ValueError(f"{checkpoint}: the data support is over PushT poses read by the pixel judge; this "
                             f"checkpoint's scene is {settings.get('scene')!r}, not 'pusht'")
        tokenizer = PoseTokenizer(PoseTokenizerConfig(image_size=int(settings.get("image_size", 64))))
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
