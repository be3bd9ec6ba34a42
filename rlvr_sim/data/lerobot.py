"""Read a LeRobot dataset folder (format v2.0 / v2.1 or v3.0) as video episodes: one camera's frames and
the `action` column, the way robot-learning users now keep their data.

A LeRobot folder is described by `meta/info.json`: `codebase_version`, `fps`, `features` (name -> dtype,
shape; camera streams have dtype "video") and the path templates `data_path` and `video_path`.

- v2.x keeps one episode per file: `data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet`
  and `videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4`, with
  `episode_chunk = episode_index // chunks_size`; `meta/episodes.jsonl` lists the episodes (index, length).
- v3.0 packs many episodes per file: `data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet` and
  `videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4`; the episode table
  `meta/episodes/chunk-*/file-*.parquet` says where each episode lives (`data/chunk_index`,
  `data/file_index`, `videos/<key>/chunk_index`, `videos/<key>/file_index`, `videos/<key>/from_timestamp`).

Rows of an episode are its frames in `frame_index` order; frame t of the camera is the video frame shown
at `from_timestamp + timestamp[t]` (from_timestamp is 0 in v2.x), matched to the nearest decoded frame
within half a frame period. Parquet is read with pyarrow and mp4 (AV1, H.264, ...) decoded with PyAV
(`av`). `action[t]` is the command issued at frame t, the Open-X / RT-1 convention of our `.npz` episodes,
so both formats feed `rlvr_sim.data.episodes.load_episodes` alike. Anything malformed raises
`EpisodeFormatError` naming the folder and what is wrong.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.data.episodes import EpisodeFormatError

INFO_FILE = Path("meta") / "info.json"
SUPPORTED_VERSIONS = ("v2.0", "v2.1", "v3.0")
DEFAULT_ACTION_KEY = "action"


@dataclass(frozen=True, order=True)
class LeRobotEpisodeRef:
    """One episode of a LeRobot folder, as `episode_paths` lists it: sortable, and loadable by `load_episode`."""

    root: Path
    episode_index: int
    camera: str
    action_key: str = DEFAULT_ACTION_KEY

    @property
    def name(self) -> str:
        """A file-like name for logs and caches: the camera key and the episode number."""
        return f"{self.camera}/episode_{self.episode_index:06d}"

    def __str__(self) -> str:
        return f"{self.root}[episode {self.episode_index}, camera {self.camera}]"


def is_lerobot_dataset(directory: str | Path) -> bool:
    """True when `directory` holds a LeRobot `meta/info.json`."""
    return (Path(directory) / INFO_FILE).is_file()


def _import_pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ImportError("reading LeRobot datasets needs pyarrow: pip install 'rlvr-sim[data]' (or pyarrow)") from error
    return pq


def _import_av() -> Any:
    try:
        import av
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ImportError("decoding LeRobot videos needs PyAV: pip install av") from error
    return av


def read_info(root: str | Path) -> dict[str, Any]:
    """`meta/info.json`, checked for what the reader needs (version, fps, features, path templates)."""
    root = Path(root)
    path = root / INFO_FILE
    try:
        info = json.loads(path.read_text())
    except FileNotFoundError as error:
        raise EpisodeFormatError(f"{root}: no {INFO_FILE} (not a LeRobot dataset folder)") from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EpisodeFormatError(f"{path}: not readable JSON ({error})") from error
    if not isinstance(info, dict):
        raise EpisodeFormatError(f"{path}: expected a JSON object, got {type(info).__name__}")
    version = info.get("codebase_version")
    if version not in SUPPORTED_VERSIONS:
        raise EpisodeFormatError(f"{path}: codebase_version {version!r} is not supported (supported: "
                                 f"{', '.join(SUPPORTED_VERSIONS)})")
    fps = info.get("fps")
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0:
        raise EpisodeFormatError(f"{path}: `fps` must be a positive number, got {fps!r}")
    features = info.get("features")
    if not isinstance(features, dict) or not all(isinstance(f, dict) for f in features.values()):
        raise EpisodeFormatError(f"{path}: `features` must map feature names to {{dtype, shape}} objects")
    for key in ("data_path", "video_path"):
        if not isinstance(info.get(key), str):
            raise EpisodeFormatError(f"{path}: `{key}` (the file path template) is missing or not a string")
    if version.startswith("v2"):
        chunks_size = info.get("chunks_size")
        if isinstance(chunks_size, bool) or not isinstance(chunks_size, int) or chunks_size < 1:
            raise EpisodeFormatError(f"{path}: `chunks_size` must be a positive integer for {version}, got {chunks_size!r}")
    return info


def video_keys(info: dict[str, Any]) -> list[str]:
    """The camera streams: features with dtype "video", in the order info.json lists them."""
    return [key for key, feature in info["features"].items() if feature.get("dtype") == "video"]


def _resolve_camera(root: Path, info: dict[str, Any], camera: str | None) -> str:
    cameras = video_keys(info)
    if not cameras:
        images = [k for k, f in info["features"].items() if f.get("dtype") == "image"]
        detail = f" (features {images} store images inside the parquet files, which this reader does not read)" if images else ""
        raise EpisodeFormatError(f"{root}: info.json lists no video feature{detail}")
    if camera is None:
        return cameras[0]
    if camera not in cameras:
        raise EpisodeFormatError(f"{root}: camera {camera!r} is not a video feature (cameras: {cameras})")
    return camera


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError as error:
        raise EpisodeFormatError(f"{path.parent.parent}: missing {path.relative_to(path.parent.parent)} "
                                 "(the episode list of a v2 dataset)") from error
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise EpisodeFormatError(f"{path}:{number}: not JSON ({error})") from error
        if not isinstance(row, dict):
            raise EpisodeFormatError(f"{path}:{number}: expected a JSON object per line")
        rows.append(row)
    return rows


def _read_episode_table(root: Path) -> list[dict[str, Any]]:
    """The v3.0 episode table: every row of meta/episodes/**/*.parquet."""
    pq = _import_pyarrow()
    files = sorted((root / "meta" / "episodes").glob("**/*.parquet"))
    if not files:
        raise EpisodeFormatError(f"{root}: no meta/episodes/chunk-*/file-*.parquet (the episode table of a v3.0 dataset)")
    rows = []
    for file in files:
        try:
            rows += pq.read_table(file).to_pylist()
        except Exception as error:  # pyarrow raises its own ArrowInvalid/OSError family for damaged files
            raise EpisodeFormatError(f"{file}: not a readable parquet file ({error})") from error
    return rows


def _stamp(path: Path) -> tuple[str, int, int]:
    """What identifies one version of a file: its path, modification time (ns) and size."""
    status = path.stat()
    return str(path), status.st_mtime_ns, status.st_size


@functools.lru_cache(maxsize=16)
def _dataset(root: str, stamps: tuple) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """(info, episode rows by index) of a folder, cached per version of its metadata files (`stamps`)."""
    path = Path(root)
    info = read_info(path)
    if info["codebase_version"].startswith("v2"):
        rows = _read_jsonl(path / "meta" / "episodes.jsonl")
    else:
        rows = _read_episode_table(path)
    episodes: dict[int, dict[str, Any]] = {}
    for row in rows:
        index = row.get("episode_index")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise EpisodeFormatError(f"{root}: an episode row has no valid `episode_index` ({index!r})")
        if index in episodes:
            raise EpisodeFormatError(f"{root}: episode {index} is listed twice")
        episodes[index] = row
    if not episodes:
        raise EpisodeFormatError(f"{root}: the episode list is empty")
    return info, episodes


def _load_dataset(root: Path) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    info_path = root / INFO_FILE
    if not info_path.is_file():
        raise EpisodeFormatError(f"{root}: no {INFO_FILE} (not a LeRobot dataset folder)")
    meta = root / "meta"
    listed = [meta / "episodes.jsonl"] if (meta / "episodes.jsonl").is_file() else []
    listed += sorted((meta / "episodes").glob("**/*.parquet"))
    return _dataset(str(root.resolve()), tuple(_stamp(p) for p in [info_path, *listed]))


def lerobot_episode_refs(root: str | Path, camera: str | None = None,
                         action_key: str = DEFAULT_ACTION_KEY) -> list[LeRobotEpisodeRef]:
    """Every episode of the folder, sorted by index, reading camera `camera` (default: the first video
    feature) and the `action_key` column."""
    root = Path(root)
    info, episodes = _load_dataset(root)
    camera = _resolve_camera(root, info, camera)
    if action_key not in info["features"]:
        raise EpisodeFormatError(f"{root}: no feature {action_key!r} in info.json (features: {sorted(info['features'])})")
    return [LeRobotEpisodeRef(root, index, camera, action_key) for index in sorted(episodes)]


def _template(root: Path, info: dict[str, Any], key: str, **fields: Any) -> Path:
    try:
        return root / info[key].format(**fields)
    except (KeyError, IndexError, ValueError) as error:
        raise EpisodeFormatError(f"{root}: info.json `{key}` {info[key]!r} uses a field this reader does not "
                                 f"know ({error}; known: {sorted(fields)})") from error


def _int_field(root: Path, row: dict[str, Any], key: str) -> int:
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise EpisodeFormatError(f"{root}: episode {row.get('episode_index')} has no integer `{key}` in its episode row")
    return int(value)


def _column_as_matrix(table: Any, key: str, where: str) -> np.ndarray:
    """A parquet column of fixed-length lists (or scalars) -> (rows, width) float64."""
    import pyarrow as pa

    column = table.column(key).combine_chunks()
    if column.null_count:
        raise EpisodeFormatError(f"{where}: column {key!r} has {column.null_count} missing values")
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type) or pa.types.is_fixed_size_list(column.type):
        lengths = np.asarray(column.value_lengths()) if not pa.types.is_fixed_size_list(column.type) else None
        if lengths is not None and len(lengths) and (lengths != lengths[0]).any():
            raise EpisodeFormatError(f"{where}: column {key!r} has rows of different lengths {sorted(set(lengths.tolist()))}")
        values = column.flatten()
        if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
            raise EpisodeFormatError(f"{where}: column {key!r} must hold numbers, got {values.type}")
        width = len(values) // max(len(column), 1)
        return values.to_numpy(zero_copy_only=False).astype(np.float64).reshape(len(column), width)
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)[:, None]
    raise EpisodeFormatError(f"{where}: column {key!r} must hold numbers or lists of numbers, got {column.type}")


@functools.lru_cache(maxsize=2)
def _data_table(path: str, mtime_ns: int, size: int) -> Any:
    """A whole data parquet file, cached per version (mtime and size): a v3.0 file holds many episodes, which are read one
    after another, so each file is parsed once rather than once per episode."""
    pq = _import_pyarrow()
    try:
        return pq.read_table(path)
    except Exception as error:  # pyarrow's ArrowInvalid/OSError family for damaged files
        raise EpisodeFormatError(f"{path}: not a readable parquet file ({error})") from error


def _read_rows(ref: LeRobotEpisodeRef, info: dict[str, Any], row: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, Path]:
    """(actions (T, A), timestamps (T,) seconds from the episode start, data file) of one episode."""
    import pyarrow.compute as pc

    root, index = ref.root, ref.episode_index
    if info["codebase_version"].startswith("v2"):
        path = _template(root, info, "data_path", episode_chunk=index // info["chunks_size"], episode_index=index)
    else:
        path = _template(root, info, "data_path", chunk_index=_int_field(root, row, "data/chunk_index"),
                         file_index=_int_field(root, row, "data/file_index"))
    if not path.is_file():
        raise EpisodeFormatError(f"{root}: episode {index}'s data file {path.relative_to(root)} is missing")
    table = _data_table(*_stamp(path))
    names = table.column_names
    if ref.action_key not in names:
        raise EpisodeFormatError(f"{path}: no column {ref.action_key!r} (columns: {names})")
    if "episode_index" in names:
        table = table.filter(pc.equal(table.column("episode_index"), index))
    elif info["codebase_version"] == "v3.0":
        raise EpisodeFormatError(f"{path}: no `episode_index` column, so the episodes of this file cannot be told apart")
    if table.num_rows == 0:
        raise EpisodeFormatError(f"{path}: no rows for episode {index}")
    if "frame_index" in names:
        table = table.sort_by("frame_index")
    where = f"{path} (episode {index})"
    actions = _column_as_matrix(table, ref.action_key, where)
    if "timestamp" in names:
        timestamps = _column_as_matrix(table, "timestamp", where)[:, 0]
    else:
        timestamps = np.arange(table.num_rows) / float(info["fps"])
    length = row.get("length")
    if isinstance(length, int) and length != table.num_rows:
        raise EpisodeFormatError(f"{where}: the episode list says {length} frames, the data file has {table.num_rows}")
    return actions, timestamps, path


def _decode(path: Path, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
    """(times (N,) seconds, frames (N, H, W, 3) uint8) of the video frames shown in [start, end]."""
    av = _import_av()
    times, frames = [], []
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise EpisodeFormatError(f"{path}: no video stream")
            stream = container.streams.video[0]
            if start > 0 and stream.time_base is not None:
                container.seek(int(start / stream.time_base), stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                if frame.pts is None:
                    continue
                time = float(frame.pts * frame.time_base)
                if time > end:
                    break
                if time >= start:
                    times.append(time)
                    frames.append(frame.to_ndarray(format="rgb24"))
    except FileNotFoundError as error:
        raise EpisodeFormatError(f"video file {path} is missing") from error
    except av.error.FFmpegError as error:
        raise EpisodeFormatError(f"{path}: not a decodable video ({error})") from error
    if not frames:
        raise EpisodeFormatError(f"{path}: no frames between {start:.3f} s and {end:.3f} s")
    return np.asarray(times), np.stack(frames)


def read_lerobot_episode(ref: LeRobotEpisodeRef) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(frames (T, H, W, 3) uint8 at the video's own size, actions (T, A) float64, metadata) of one episode."""
    info, episodes = _load_dataset(ref.root)
    root, index, camera = ref.root, ref.episode_index, ref.camera
    if index not in episodes:
        raise EpisodeFormatError(f"{root}: no episode {index} in the episode list")
    row = episodes[index]
    actions, timestamps, _ = _read_rows(ref, info, row)
    fps = float(info["fps"])
    if info["codebase_version"].startswith("v2"):
        video = _template(root, info, "video_path", episode_chunk=index // info["chunks_size"], video_key=camera,
                          episode_index=index)
        offset = 0.0
    else:
        video = _template(root, info, "video_path", video_key=camera,
                          chunk_index=_int_field(root, row, f"videos/{camera}/chunk_index"),
                          file_index=_int_field(root, row, f"videos/{camera}/file_index"))
        offset = row.get(f"videos/{camera}/from_timestamp")
        if isinstance(offset, bool) or not isinstance(offset, (int, float)):
            raise EpisodeFormatError(f"{root}: episode {index} has no `videos/{camera}/from_timestamp`")
    if not video.is_file():
        raise EpisodeFormatError(f"{root}: episode {index}'s video {video.relative_to(root)} is missing")
    wanted = offset + timestamps
    tolerance = 0.5 / fps
    times, decoded = _decode(video, float(wanted.min()) - tolerance, float(wanted.max()) + tolerance)
    nearest = np.abs(times[None, :] - wanted[:, None]).argmin(axis=1)
    gaps = np.abs(times[nearest] - wanted)
    if (gaps >= tolerance).any():
        worst = int(gaps.argmax())
        raise EpisodeFormatError(f"{video}: no frame within half a frame period of {wanted[worst]:.3f} s "
                                 f"(episode {index}, frame {worst}; nearest at {times[nearest[worst]]:.3f} s)")
    metadata = {"format": f"lerobot {info['codebase_version']}", "episode_index": index, "camera": camera,
                "fps": fps, "action_key": ref.action_key}
    tasks = row.get("tasks")
    if isinstance(tasks, list) and tasks and all(isinstance(t, str) for t in tasks):
        metadata["task"] = "; ".join(tasks)
    return decoded[nearest], actions, metadata


__all__ = ["LeRobotEpisodeRef", "is_lerobot_dataset", "lerobot_episode_refs", "read_info", "read_lerobot_episode",
           "video_keys"]
