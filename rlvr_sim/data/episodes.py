"""Load video episodes, at any resolution and action size, from an Open-X / RT-1-style `.npz` folder or a
LeRobot dataset folder (v2.x or v3.0: parquet tables plus mp4 videos; `rlvr_sim.data.lerobot`).

One file per episode with `image` (T, H, W, 3) uint8 frames and `action` (T, A) or (T - 1, A) float
actions, where action[t] is issued at frame t (the keys RLVR-World's Open-X converter writes; our PushT
collector writes the same). Frames are resized to the model's square size; grayscale (T, H, W) or
(T, H, W, 1) frames are repeated to RGB; float frames in [0, 1] are scaled to uint8. With `frame_skip`
s > 1 an episode keeps frames 0, s, 2s, ... and the action of each skipped transition is the mean of its
s sub-step actions (exact when actions were held for s steps, as our collector does). Anything else, a
missing key, a wrong shape, NaN actions, a corrupt file, raises `EpisodeFormatError` naming the file
and the problem.

A folder holding `meta/info.json` is read as a LeRobot dataset: `episode_paths` then lists one
`LeRobotEpisodeRef` per episode (the camera chosen by `camera`, default the first video feature, and the
action column by `action_key`), which `load_episode` reads like a file. Non-square frames (e.g. 480x640)
are resized to the square model size without cropping, as RLVR-World resizes RT-1's 256x320 frames.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rlvr_sim.data.lerobot import LeRobotEpisodeRef

IMAGE_KEY, ACTION_KEY = "image", "action"
# signed, unsigned, float: numpy counts complex and timedelta as numbers too, but neither is a pixel or an action
_REAL_KINDS = "iuf"


class EpisodeFormatError(ValueError):
    """An episode file that does not follow the documented format."""


@dataclass
class Episode:
    """One episode resized to the model's frame size: frames (T, S, S, 3) uint8, actions (T - 1, A) float32."""

    images: np.ndarray
    actions: np.ndarray  # actions[t] moves frames[t] to frames[t + 1]
    path: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.images)


def resize_frames(frames: np.ndarray, size: int) -> np.ndarray:
    """(T, H, W, 3) frames -> (T, size, size, 3): area averaging when shrinking, bilinear when growing."""
    import cv2

    if frames.shape[1:3] == (size, size):
        return frames
    shrinking = frames.shape[1] >= size and frames.shape[2] >= size
    interpolation = cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR
    return np.stack([cv2.resize(frame, (size, size), interpolation=interpolation) for frame in frames])


def _as_rgb_uint8(images: np.ndarray, where: str) -> np.ndarray:
    if images.ndim == 3:
        images = images[..., None]
    if images.ndim != 4 or images.shape[-1] not in (1, 3):
        raise EpisodeFormatError(f"{where}: `image` must have shape (T, H, W, 3), got {images.shape}")
    if images.shape[0] < 2:
        raise EpisodeFormatError(f"{where}: an episode needs at least 2 frames, got {images.shape[0]}")
    if images.shape[1] == 0 or images.shape[2] == 0:
        raise EpisodeFormatError(f"{where}: frames have no pixels (shape {images.shape})")
    if images.dtype != np.uint8:
        if images.dtype.kind not in _REAL_KINDS:
            raise EpisodeFormatError(f"{where}: `image` must hold integers or floats, got dtype {images.dtype}")
        if not np.isfinite(images).all():
            raise EpisodeFormatError(f"{where}: `image` contains NaN or inf")
        scale = 255.0 if images.max() <= 1.0 else 1.0  # floats in [0, 1], or in [0, 255]
        images = np.clip(np.rint(images.astype(np.float64) * scale), 0, 255).astype(np.uint8)
    if images.shape[-1] == 1:
        images = np.repeat(images, 3, axis=-1)
    return images


def _as_actions(actions: np.ndarray, num_frames: int, where: str) -> np.ndarray:
    if actions.ndim == 1:
        actions = actions[:, None]
    if actions.ndim != 2 or actions.shape[1] == 0:
        raise EpisodeFormatError(f"{where}: `action` must have shape (T, A), got {actions.shape}")
    if actions.dtype.kind not in _REAL_KINDS:
        raise EpisodeFormatError(f"{where}: `action` must hold integers or floats, got dtype {actions.dtype}")
    if actions.shape[0] not in (num_frames, num_frames - 1):
        raise EpisodeFormatError(
            f"{where}: `action` has {actions.shape[0]} rows but `image` has {num_frames} frames "
            f"(expected {num_frames} or {num_frames - 1})"
        )
    actions = actions[: num_frames - 1]
    if not np.isfinite(actions).all():
        raise EpisodeFormatError(f"{where}: `action` contains NaN or inf")
    with np.errstate(over="ignore"):  # reported just below, by name
        as_float32 = actions.astype(np.float32)
    if not np.isfinite(as_float32).all():
        raise EpisodeFormatError(f"{where}: `action` holds values beyond float32's range (|a| > 3.4e38)")
    return as_float32


def _read_npz(path: Path, image_key: str, action_key: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(images, actions, scalar metadata) of one .npz episode, as stored."""
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):  # a bare .npy array under an .npz name
            raise EpisodeFormatError(f"{path}: a single array, not an .npz archive of {image_key!r} and {action_key!r}")
        with data:
            keys = list(data.keys())
            for key in (image_key, action_key):
                if key not in keys:
                    raise EpisodeFormatError(f"{path}: missing key {key!r} (keys present: {keys})")
            images, actions = data[image_key], data[action_key]
            metadata = {k: data[k].item() for k in keys if k not in (image_key, action_key) and data[k].ndim == 0}
    except EpisodeFormatError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise EpisodeFormatError(f"{path}: not a readable .npz episode ({error})") from error
    return images, actions, metadata


def load_episode(
    path: str | Path | LeRobotEpisodeRef, image_size: int = 64, frame_skip: int = 1,
    image_key: str = IMAGE_KEY, action_key: str = ACTION_KEY,
) -> Episode:
    """Read one episode (an .npz file, or a LeRobot episode from `episode_paths`), validate it and resize
    its frames to (image_size, image_size). `image_key`/`action_key` name the .npz arrays; a LeRobot
    reference carries its own camera and action column."""
    from rlvr_sim.data.lerobot import LeRobotEpisodeRef, read_lerobot_episode

    if frame_skip < 1:
        raise ValueError(f"frame_skip must be >= 1, got {frame_skip}")
    if isinstance(path, LeRobotEpisodeRef):
        images, actions, metadata = read_lerobot_episode(path)
    else:
        path = Path(path)
        images, actions, metadata = _read_npz(path, image_key, action_key)
    images = _as_rgb_uint8(images, str(path))
    actions = _as_actions(actions, len(images), str(path))
    if frame_skip > 1:
        kept = np.arange(0, len(images), frame_skip)
        if len(kept) < 2:
            raise EpisodeFormatError(f"{path}: {len(images)} frames are too few for frame_skip {frame_skip}")
        chunks = [actions[start : start + frame_skip] for start in kept[:-1]]
        actions = np.stack([chunk.mean(axis=0) for chunk in chunks]).astype(np.float32)
        images = images[kept]
    return Episode(resize_frames(images, image_size), actions, str(path), metadata)


def episode_paths(
    directory: str | Path, camera: str | None = None, action_key: str = ACTION_KEY,
) -> list[Path] | list[LeRobotEpisodeRef]:
    """The episodes of `directory`, sorted: for a LeRobot folder (one with `meta/info.json`) one reference
    per episode reading video feature `camera` (default the first) and column `action_key`; otherwise all
    `.npz` files under it (recursively, skipping hidden files and folders such as caches). An error if
    there are none."""
    from rlvr_sim.data.lerobot import is_lerobot_dataset, lerobot_episode_refs

    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"episode directory {directory} does not exist")
    if is_lerobot_dataset(directory):
        return lerobot_episode_refs(directory, camera, action_key)
    if camera is not None:
        raise ValueError(f"camera={camera!r} applies to LeRobot folders only; {directory} has no meta/info.json")
    paths = sorted(p for p in directory.rglob("*.npz")
                   if not any(part.startswith(".") for part in p.relative_to(directory).parts))
    if not paths:
        raise FileNotFoundError(f"no .npz episode files under {directory}")
    return paths


def split_paths(paths: list[Path], test_fraction: float = 0.1, seed: int = 0) -> dict[str, list[Path]]:
    """Deterministic episode-level split into "train" and "test" (at least one test episode)."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if len(paths) < 2:
        raise ValueError(f"need at least 2 episodes to split, got {len(paths)}")
    order = np.random.default_rng(seed).permutation(len(paths))
    num_test = max(1, int(round(test_fraction * len(paths))))
    test = sorted(paths[i] for i in order[:num_test])
    train = sorted(paths[i] for i in order[num_test:])
    return {"train": train, "test": test}


def load_episodes(
    paths: list[Path] | list[LeRobotEpisodeRef] | str | Path, image_size: int = 64, frame_skip: int = 1,
    image_key: str = IMAGE_KEY, action_key: str = ACTION_KEY, camera: str | None = None,
) -> list[Episode]:
    """Load a directory (.npz or LeRobot; `camera` picks a LeRobot video feature) or a list from
    `episode_paths`; all episodes must share one action dimension."""
    if isinstance(paths, (str, Path)):
        paths = episode_paths(paths, camera, action_key)
    episodes = [load_episode(p, image_size, frame_skip, image_key, action_key) for p in paths]
    dims = {ep.actions.shape[1] for ep in episodes}
    if len(dims) > 1:
        raise EpisodeFormatError(f"episodes disagree on the action dimension: {sorted(dims)}")
    return episodes


__all__ = ["Episode", "EpisodeFormatError", "episode_paths", "load_episode", "load_episodes", "split_paths"]
