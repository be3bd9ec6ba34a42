"""Write small episode datasets in every format `rlvr_sim.data.episodes` reads, from two synthetic scenes.

The committed fixtures under tests/fixtures/ come from here (`python -m rlvr_sim.data.fixtures --out
tests/fixtures`), and tests regenerate the same frames and actions to check what the loader returns:

- `npz_pusht64/`: Open-X / RT-1-style .npz, 64x64 frames of a PushT-like table (a blue disc tracking a 2-D
  target in 512-unit coordinates, a grey block), 2-dim actions;
- `npz_robot7/`: .npz with real-robot-like 120x160 frames (a textured table, a red cube, a two-finger
  gripper seen from above that moves, rises and opens with the action) and 7-dim actions
  (dx, dy, dz, droll, dpitch, dyaw, gripper), as RT-1 / Bridge episodes carry;
- `lerobot_v21/`: the robot scene as a LeRobot v2.1 dataset (one parquet and one H.264 mp4 per episode and
  camera, meta/episodes.jsonl), two cameras (`observation.images.front` 120x160 and
  `observation.images.wrist` 96x128);
- `lerobot_v30/`: the same as LeRobot v3.0 (episodes packed into shared parquet and AV1 mp4 files,
  two data/video files, the episode table in meta/episodes/chunk-000/file-000.parquet).

Every frame and action is a function of a seed, so the files can be rebuilt and compared.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

FPS = 10
FRONT, WRIST = "observation.images.front", "observation.images.wrist"
ROBOT_SIZE, WRIST_SIZE = (120, 160), (96, 128)
TASK = "push the red cube"


# ---- scenes ------------------------------------------------------------------------------------------
def pusht_like_episode(seed: int, length: int, size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """(frames (T, size, size, 3) uint8, actions (T, 2) float32): a disc that moves halfway to each held
    target (512-unit coordinates) per frame beside a fixed grey block, on white."""
    rng = np.random.default_rng(seed)
    actions = np.repeat(rng.uniform(60, 452, size=(length // 3 + 1, 2)), 3, axis=0)[:length].astype(np.float32)
    position = rng.uniform(100, 412, size=2)
    block = rng.uniform(150, 362, size=2)
    ys, xs = (np.mgrid[0:size, 0:size] + 0.5) * (512.0 / size)
    frames = np.empty((length, size, size, 3), np.uint8)
    for t in range(length):
        frame = np.full((size, size, 3), 255, np.uint8)
        frame[(np.abs(xs - block[0]) < 40) & (np.abs(ys - block[1]) < 40)] = (119, 136, 153)
        frame[(xs - position[0]) ** 2 + (ys - position[1]) ** 2 < 20**2] = (65, 105, 225)
        frames[t] = frame
        position = position + 0.5 * (actions[t] - position)
    return frames, actions


def _table_texture(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A smooth wood-like table: low-frequency noise and grain stripes, (H, W, 3) float in 0-255."""
    import cv2

    coarse = rng.normal(0.0, 1.0, size=(6, 8)).astype(np.float32)
    blotches = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    grain = np.sin(xs * 0.35 + 3.0 * np.sin(ys * 0.05 + rng.uniform(0, 6.28)) + rng.uniform(0, 6.28))
    shade = 150.0 + 14.0 * blotches + 9.0 * grain
    return np.stack([shade, shade * 0.78, shade * 0.55], axis=-1)


def robot_episode(seed: int, length: int, size: tuple[int, int] = ROBOT_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """(frames (T, H, W, 3) uint8, actions (T, 7) float32) of the gripper scene at `size` (height, width).

    Actions are (dx, dy, dz, droll, dpitch, dyaw, gripper): dx, dy in [-1, 1] move the gripper up to 4 %
    of the frame width per frame, dz in [-1, 1] raises it (it grows), gripper in {0, 1} opens the fingers;
    the rotations are recorded but not drawn (a top camera barely sees them).
    """
    height, width = size
    rng = np.random.default_rng(seed)
    table = _table_texture(rng, height, width)
    cube = rng.uniform([0.25, 0.25], [0.75, 0.75]) * (width, height)
    steps = np.repeat(rng.uniform(-1, 1, size=(length // 4 + 1, 6)), 4, axis=0)[:length]
    grip = np.repeat(rng.integers(0, 2, size=length // 4 + 1), 4)[:length]
    actions = np.concatenate([steps, grip[:, None]], axis=1).astype(np.float32)
    position = rng.uniform([0.3, 0.3], [0.7, 0.7]) * (width, height)
    lift = 0.5
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    unit = width / 160.0
    frames = np.empty((length, height, width, 3), np.uint8)
    for t in range(length):
        frame = table.copy()
        frame[(np.abs(xs - cube[0]) < 9 * unit) & (np.abs(ys - cube[1]) < 9 * unit)] = (200, 40, 35)
        scale = unit * (0.8 + 0.4 * lift)
        gap = (4.0 + 7.0 * float(actions[t, 6])) * scale
        body = (np.abs(xs - position[0]) < 12 * scale) & (np.abs(ys - position[1] + 6 * scale) < 5 * scale)
        finger_y = (ys > position[1] - 2 * scale) & (ys < position[1] + 12 * scale)
        left = finger_y & (np.abs(xs - (position[0] - gap)) < 2.5 * scale)
        right = finger_y & (np.abs(xs - (position[0] + gap)) < 2.5 * scale)
        frame[body] = (60, 62, 70)
        frame[left | right] = (175, 180, 190)
        frames[t] = np.clip(np.rint(frame), 0, 255).astype(np.uint8)
        position = np.clip(position + actions[t, :2] * 0.04 * width, [10, 10], [width - 10, height - 10])
        lift = float(np.clip(lift + 0.1 * actions[t, 2], 0.0, 1.0))
    return frames, actions


def robot_states(actions: np.ndarray) -> np.ndarray:
    """(T, 8) float32 proprioception-like state for the LeRobot fixtures: the running sum of the 6 motion
    actions, the gripper command and the frame index (so `observation.state` is a real, checkable column)."""
    motion = np.cumsum(actions[:, :6], axis=0)
    return np.concatenate([motion, actions[:, 6:7], np.arange(len(actions))[:, None]], axis=1).astype(np.float32)


def episode_seed(seed: int, index: int) -> int:
    """The seed of episode `index` of a fixture set made with `seed`."""
    return int(np.random.default_rng([seed, index]).integers(0, 2**31 - 1))


def wrist_frames(frames: np.ndarray) -> np.ndarray:
    """The second camera: the centre of the front view, enlarged to 96x128 (a stand-in for a wrist camera)."""
    import cv2

    height, width = frames.shape[1:3]
    crop = frames[:, height // 6 : height - height // 6, width // 6 : width - width // 6]
    return np.stack([cv2.resize(f, WRIST_SIZE[::-1], interpolation=cv2.INTER_LINEAR) for f in crop])


# ---- writers -----------------------------------------------------------------------------------------
def write_npz_dataset(out: str | Path, kind: str, episodes: int = 2, length: int = 16, seed: int = 0) -> list[Path]:
    """`kind` "pusht64" (64x64, 2-dim actions) or "robot7" (120x160, 7-dim actions) episodes as .npz files."""
    if kind not in ("pusht64", "robot7"):
        raise ValueError(f"kind must be 'pusht64' or 'robot7', got {kind!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(episodes):
        maker = pusht_like_episode if kind == "pusht64" else robot_episode
        frames, actions = maker(episode_seed(seed, index), length)
        path = out / f"episode_{index:05d}.npz"
        np.savez_compressed(path, image=frames, action=actions, fps=np.array(FPS), seed=np.array(episode_seed(seed, index)),
                            language_instruction=np.array(TASK if kind == "robot7" else "push the block"))
        paths.append(path)
    return paths


def write_video(path: Path, frames: np.ndarray, codec: str, fps: int = FPS) -> str:
    """Encode (T, H, W, 3) uint8 frames as an mp4 with PyAV at high quality; returns the codec used
    (`codec` when this PyAV build can encode it, else MPEG-4 Part 2, which every build can)."""
    import av

    try:
        av.codec.Codec(codec, "w")
    except Exception:  # UnknownCodecError: this FFmpeg build lacks the encoder
        codec = "mpeg4"
    options = {"libx264": {"crf": "12", "preset": "medium"}, "libsvtav1": {"crf": "18", "preset": "8"},
               "mpeg4": {"qscale": "2"}}.get(codec, {})
    path.parent.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its configuration to stderr otherwise
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        stream.options = options
        for frame in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return {"libx264": "h264", "libsvtav1": "av1"}.get(codec, codec)


def _features(codec: str) -> dict:
    def video(size: tuple[int, int]) -> dict:
        return {"dtype": "video", "shape": [size[0], size[1], 3], "names": ["height", "width", "channels"],
                "info": {"video.height": size[0], "video.width": size[1], "video.codec": codec,
                         "video.pix_fmt": "yuv420p", "video.is_depth_map": False, "video.fps": FPS,
                         "video.channels": 3, "has_audio": False}}

    scalar = {"shape": [1], "names": None}
    return {
        FRONT: video(ROBOT_SIZE),
        WRIST: video(WRIST_SIZE),
        "observation.state": {"dtype": "float32", "shape": [8], "names": [f"state_{i}" for i in range(8)]},
        "action": {"dtype": "float32", "shape": [7], "names": ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"]},
        "timestamp": {"dtype": "float32", **scalar},
        "frame_index": {"dtype": "int64", **scalar},
        "episode_index": {"dtype": "int64", **scalar},
        "index": {"dtype": "int64", **scalar},
        "task_index": {"dtype": "int64", **scalar},
    }


def _frame_table(actions: np.ndarray, episode: int, first_index: int, fixed_size: bool):
    import pyarrow as pa

    length = len(actions)

    def vectors(values: np.ndarray):
        flat = pa.array(values.reshape(-1), pa.float32())
        if fixed_size:
            return pa.FixedSizeListArray.from_arrays(flat, values.shape[1])
        return pa.ListArray.from_arrays(pa.array(np.arange(0, values.size + 1, values.shape[1]), pa.int32()), flat)

    return pa.table({
        "observation.state": vectors(robot_states(actions)),
        "action": vectors(actions),
        "timestamp": pa.array(np.arange(length, dtype=np.float32) / FPS, pa.float32()),
        "frame_index": pa.array(np.arange(length), pa.int64()),
        "episode_index": pa.array(np.full(length, episode), pa.int64()),
        "index": pa.array(first_index + np.arange(length), pa.int64()),
        "task_index": pa.array(np.zeros(length, np.int64), pa.int64()),
    })


def _info(version: str, episodes: int, frames: int, codec: str, files: int) -> dict:
    info = {"codebase_version": version, "robot_type": "synthetic_top_down_gripper", "total_episodes": episodes,
            "total_frames": frames, "total_tasks": 1, "chunks_size": 1000, "fps": FPS,
            "splits": {"train": f"0:{episodes}"}, "features": _features(codec)}
    if version == "v2.1":
        info.update(total_videos=2 * episodes, total_chunks=1,
                    data_path="data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
                    video_path="videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4")
    else:
        info.update(data_files_size_in_mb=100, video_files_size_in_mb=500, total_files=files,
                    data_path="data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
                    video_path="videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4")
    return info


def write_lerobot_dataset(out: str | Path, version: str, episodes: int = 3, length: int = 20, seed: int = 0,
                          episodes_per_file: int = 2) -> Path:
    """The robot scene as a LeRobot `version` ("v2.1" or "v3.0") folder with two cameras; v2.1 videos are
    H.264, v3.0 videos AV1 (LeRobot's default), each falling back to MPEG-4 where PyAV cannot encode them.
    v3.0 packs `episodes_per_file` episodes into each data and video file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if version not in ("v2.1", "v3.0"):
        raise ValueError(f"version must be 'v2.1' or 'v3.0', got {version!r}")
    out = Path(out)
    (out / "meta").mkdir(parents=True, exist_ok=True)
    made = [robot_episode(episode_seed(seed, i), length) for i in range(episodes)]
    codec = "h264"
    if version == "v2.1":
        rows = []
        for index, (frames, actions) in enumerate(made):
            data_path = out / "data" / "chunk-000" / f"episode_{index:06d}.parquet"
            data_path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(_frame_table(actions, index, index * length, fixed_size=False), data_path)
            for key, views in ((FRONT, frames), (WRIST, wrist_frames(frames))):
                codec = write_video(out / "videos" / "chunk-000" / key / f"episode_{index:06d}.mp4", views, "libx264")
            rows.append({"episode_index": index, "tasks": [TASK], "length": length})
        (out / "meta" / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (out / "meta" / "tasks.jsonl").write_text(json.dumps({"task_index": 0, "task": TASK}) + "\n")
        files = episodes
    else:
        rows = []
        groups = [list(range(start, min(start + episodes_per_file, episodes))) for start in range(0, episodes, episodes_per_file)]
        for file_index, group in enumerate(groups):
            tables = [_frame_table(made[i][1], i, i * length, fixed_size=True) for i in group]
            data_path = out / "data" / "chunk-000" / f"file-{file_index:03d}.parquet"
            data_path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.concat_tables(tables), data_path)
            front = np.concatenate([made[i][0] for i in group])
            for key, views in ((FRONT, front), (WRIST, wrist_frames(front))):
                codec = write_video(out / "videos" / key / "chunk-000" / f"file-{file_index:03d}.mp4", views, "libsvtav1")
            for position, index in enumerate(group):
                row = {"episode_index": index, "tasks": [TASK], "length": length,
                       "data/chunk_index": 0, "data/file_index": file_index,
                       "dataset_from_index": index * length, "dataset_to_index": (index + 1) * length,
                       "meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0}
                for key in (FRONT, WRIST):
                    row.update({f"videos/{key}/chunk_index": 0, f"videos/{key}/file_index": file_index,
                                f"videos/{key}/from_timestamp": position * length / FPS,
                                f"videos/{key}/to_timestamp": (position + 1) * length / FPS})
                rows.append(row)
        table_path = out / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
        table_path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), table_path)
        pq.write_table(pa.table({"task_index": pa.array([0], pa.int64()), "task": [TASK]}), out / "meta" / "tasks.parquet")
        files = len(groups)
    info = _info(version, episodes, episodes * length, codec, files)
    (out / "meta" / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    return out


def write_all(out: str | Path, seed: int = 0) -> dict[str, Path]:
    """Every fixture set under `out` (what tests/fixtures/ holds)."""
    out = Path(out)
    write_npz_dataset(out / "npz_pusht64", "pusht64", episodes=2, length=16, seed=seed)
    write_npz_dataset(out / "npz_robot7", "robot7", episodes=2, length=10, seed=seed)
    return {
        "npz_pusht64": out / "npz_pusht64",
        "npz_robot7": out / "npz_robot7",
        "lerobot_v21": write_lerobot_dataset(out / "lerobot_v21", "v2.1", episodes=2, length=20, seed=seed),
        "lerobot_v30": write_lerobot_dataset(out / "lerobot_v30", "v3.0", episodes=3, length=20, seed=seed),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write the fixture sets into")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name, path in write_all(args.out, args.seed).items():
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        print(f"{name}: {path} ({size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
