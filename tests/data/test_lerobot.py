"""Bring-your-own robot video: the committed fixtures in every format (.npz 64x64 2-dim, .npz 120x160 7-dim,
LeRobot v2.1 with H.264, LeRobot v3.0 with AV1 and several episodes per file) load back as the frames and
actions that were written, and malformed LeRobot folders raise `EpisodeFormatError` naming the problem."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("av")
pytest.importorskip("cv2")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from rlvr_sim.data.episodes import (  # noqa: E402
    EpisodeFormatError,
    episode_paths,
    load_episode,
    load_episodes,
    resize_frames,
    split_paths,
)
from rlvr_sim.data.fixtures import (  # noqa: E402
    FRONT,
    WRIST,
    episode_seed,
    pusht_like_episode,
    robot_episode,
    robot_states,
    wrist_frames,
    write_all,
    write_npz_dataset,
)
from rlvr_sim.data.lerobot import LeRobotEpisodeRef, read_lerobot_episode  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LEROBOT = {"v2.1": FIXTURES / "lerobot_v21", "v3.0": FIXTURES / "lerobot_v30"}
EPISODES = {"v2.1": 2, "v3.0": 3}
LENGTH = 20
CODEC_MAE = 4.0  # mean absolute error (0-255) a high-quality yuv420p encode stays under on these frames


def _truth(index: int, camera: str = FRONT) -> tuple[np.ndarray, np.ndarray]:
    frames, actions = robot_episode(episode_seed(0, index), LENGTH)
    return (wrist_frames(frames) if camera == WRIST else frames), actions


def test_npz_pusht64_fixture_loads_exactly():
    episodes = load_episodes(FIXTURES / "npz_pusht64", image_size=64)
    assert len(episodes) == 2
    for index, episode in enumerate(episodes):
        frames, actions = pusht_like_episode(episode_seed(0, index), 16)
        assert np.array_equal(episode.images, frames)
        assert np.array_equal(episode.actions, actions[:-1])


def test_npz_robot7_fixture_non_square_frames_and_7dim_actions():
    paths = episode_paths(FIXTURES / "npz_robot7")
    with np.load(paths[0]) as raw:
        assert raw["image"].shape == (10, 120, 160, 3) and raw["action"].shape == (10, 7)
    episode = load_episode(paths[0], image_size=64, frame_skip=2)
    frames, actions = robot_episode(episode_seed(0, 0), 10)
    assert episode.images.shape == (5, 64, 64, 3) and episode.actions.shape == (4, 7)
    assert np.array_equal(episode.images, resize_frames(frames[::2], 64))
    np.testing.assert_allclose(episode.actions, actions[:8].reshape(4, 2, 7).mean(axis=1), rtol=1e-6)
    assert episode.metadata["language_instruction"] == "push the red cube"


def test_480x640_frames_keep_their_content_where_it_was(tmp_path):
    """A non-square real-camera frame is resized (not cropped) to the square: a patch at a relative
    position stays at that relative position."""
    frames = np.zeros((3, 480, 640, 3), np.uint8)
    frames[:, 60:120, 480:560] = 255  # rows 1/8..1/4, columns 3/4..7/8
    path = tmp_path / "cam.npz"
    np.savez_compressed(path, image=frames, action=np.zeros((3, 7), np.float32))
    episode = load_episode(path, image_size=64)
    rows, cols = np.nonzero(episode.images[0, :, :, 0] > 127)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (8, 15, 48, 55)
    assert episode.actions.shape == (2, 7)


@pytest.mark.parametrize("version", ["v2.1", "v3.0"])
@pytest.mark.parametrize("camera", [FRONT, WRIST])
def test_lerobot_fixture_frames_and_actions_match_what_was_written(version, camera):
    refs = episode_paths(LEROBOT[version], camera=camera)
    assert [ref.episode_index for ref in refs] == list(range(EPISODES[version]))
    for ref in refs:
        frames, actions, metadata = read_lerobot_episode(ref)
        truth, true_actions = _truth(ref.episode_index, camera)
        assert frames.shape == truth.shape and frames.dtype == np.uint8
        assert np.array_equal(actions, true_actions)  # float32 values survive parquet exactly
        per_frame = np.abs(frames.astype(np.int16)[:, None] - truth.astype(np.int16)[None]).mean(axis=(2, 3, 4))
        assert np.diagonal(per_frame).max() < CODEC_MAE
        assert (per_frame.argmin(axis=1) == np.arange(LENGTH)).all()  # frame t is the video frame at t
        assert metadata["format"] == f"lerobot {version}" and metadata["camera"] == camera
        assert metadata["task"] == "push the red cube" and metadata["fps"] == 10


@pytest.mark.parametrize("version", ["v2.1", "v3.0"])
def test_lerobot_folder_through_load_episodes_and_split(version):
    refs = episode_paths(LEROBOT[version])
    assert all(isinstance(ref, LeRobotEpisodeRef) and ref.camera == FRONT for ref in refs)
    split = split_paths(refs, 0.34, seed=0)
    assert sorted(split["train"] + split["test"]) == refs and split == split_paths(episode_paths(LEROBOT[version]), 0.34, 0)
    episodes = load_episodes(LEROBOT[version], image_size=64, frame_skip=2)
    assert len(episodes) == EPISODES[version]
    for ref, episode in zip(refs, episodes):
        truth, actions = _truth(ref.episode_index)
        assert episode.images.shape == (10, 64, 64, 3) and episode.actions.shape == (9, 7)
        assert np.abs(episode.images.astype(int) - resize_frames(truth[::2], 64)).mean() < CODEC_MAE
        np.testing.assert_allclose(episode.actions, actions[:18].reshape(9, 2, 7).mean(axis=1), rtol=1e-6)
        assert str(ref) in episode.path


def test_lerobot_state_column_is_written_as_documented():
    table = pq.read_table(LEROBOT["v3.0"] / "data" / "chunk-000" / "file-000.parquet")
    assert table.num_rows == 2 * LENGTH and set(table.column("episode_index").to_pylist()) == {0, 1}
    state = np.array(table.column("observation.state").to_pylist()[LENGTH:], np.float32)
    np.testing.assert_array_equal(state, robot_states(_truth(1)[1]))


def test_fixture_writer_reproduces_the_committed_files(tmp_path):
    written = write_all(tmp_path)
    for name in ("npz_pusht64", "npz_robot7"):
        for committed in sorted((FIXTURES / name).glob("*.npz")):
            with np.load(committed) as old, np.load(written[name] / committed.name) as new:
                assert sorted(old.files) == sorted(new.files)
                assert all(np.array_equal(old[key], new[key]) for key in old.files)
    for name in ("lerobot_v21", "lerobot_v30"):
        for committed in sorted((FIXTURES / name).rglob("*.parquet")):
            new = written[name] / committed.relative_to(FIXTURES / name)
            assert pq.read_table(committed).equals(pq.read_table(new))
        assert json.loads((FIXTURES / name / "meta" / "info.json").read_text()) == json.loads(
            (written[name] / "meta" / "info.json").read_text())
    with pytest.raises(ValueError, match="kind"):
        write_npz_dataset(tmp_path / "x", "robot9")


# ---- malformed folders ---------------------------------------------------------------------------
def _copy(tmp_path: Path, version: str) -> Path:
    return Path(shutil.copytree(LEROBOT[version], tmp_path / version))


def _edit_info(root: Path, **changes) -> None:
    info = json.loads((root / "meta" / "info.json").read_text())
    for key, value in changes.items():
        if value is None:
            info.pop(key)
        else:
            info[key] = value
    (root / "meta" / "info.json").write_text(json.dumps(info))


@pytest.mark.parametrize("changes, message", [
    ({"codebase_version": "v1.6"}, "codebase_version 'v1.6' is not supported"),
    ({"fps": None}, "`fps` must be a positive number"),
    ({"features": []}, "`features` must map"),
    ({"data_path": None}, "`data_path`"),
    ({"chunks_size": 0}, "`chunks_size`"),
])
def test_bad_info_json_is_named(tmp_path, changes, message):
    root = _copy(tmp_path, "v2.1")
    _edit_info(root, **changes)
    with pytest.raises(EpisodeFormatError, match=message):
        episode_paths(root)


def test_unreadable_info_and_missing_features(tmp_path):
    root = _copy(tmp_path, "v3.0")
    (root / "meta" / "info.json").write_text("{not json")
    with pytest.raises(EpisodeFormatError, match="not readable JSON"):
        episode_paths(root)
    root = _copy(tmp_path / "b", "v3.0")
    with pytest.raises(EpisodeFormatError, match="camera 'observation.images.side' is not a video feature"):
        episode_paths(root, camera="observation.images.side")
    with pytest.raises(EpisodeFormatError, match="no feature 'actions'"):
        episode_paths(root, action_key="actions")
    info = json.loads((root / "meta" / "info.json").read_text())
    for key in (FRONT, WRIST):
        info["features"][key]["dtype"] = "image"
    (root / "meta" / "info.json").write_text(json.dumps(info))
    with pytest.raises(EpisodeFormatError, match="no video feature.*inside the parquet"):
        episode_paths(root)
    with pytest.raises(ValueError, match="LeRobot folders only"):
        episode_paths(FIXTURES / "npz_pusht64", camera=FRONT)


def test_missing_episode_lists_and_files(tmp_path):
    root = _copy(tmp_path, "v2.1")
    (root / "meta" / "episodes.jsonl").unlink()
    with pytest.raises(EpisodeFormatError, match="episodes.jsonl"):
        episode_paths(root)
    root = _copy(tmp_path / "b", "v3.0")
    shutil.rmtree(root / "meta" / "episodes")
    with pytest.raises(EpisodeFormatError, match="episode table of a v3.0 dataset"):
        episode_paths(root)
    root = _copy(tmp_path / "c", "v2.1")
    (root / "videos" / "chunk-000" / FRONT / "episode_000001.mp4").unlink()
    (root / "data" / "chunk-000" / "episode_000000.parquet").unlink()
    first, second = episode_paths(root)
    with pytest.raises(EpisodeFormatError, match="episode 0's data file data/chunk-000/episode_000000.parquet is missing"):
        load_episode(first)
    with pytest.raises(EpisodeFormatError, match="episode 1's video .*episode_000001.mp4 is missing"):
        load_episode(second)


def test_inconsistent_lengths_timestamps_and_corrupt_video(tmp_path):
    root = _copy(tmp_path, "v2.1")
    assert len(load_episode(episode_paths(root)[0])) == LENGTH  # read (and cached) before the edits below
    (root / "meta" / "episodes.jsonl").write_text(
        json.dumps({"episode_index": 0, "tasks": ["t"], "length": 99}) + "\n"
        + json.dumps({"episode_index": 0, "tasks": ["t"], "length": 20}) + "\n")
    with pytest.raises(EpisodeFormatError, match="episode 0 is listed twice"):
        episode_paths(root)
    (root / "meta" / "episodes.jsonl").write_text(json.dumps({"episode_index": 0, "tasks": ["t"], "length": 99}) + "\n")
    with pytest.raises(EpisodeFormatError, match="says 99 frames, the data file has 20"):
        load_episode(episode_paths(root)[0])

    root = _copy(tmp_path / "b", "v3.0")
    table_path = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    rows = pq.read_table(table_path).to_pylist()
    rows[2][f"videos/{FRONT}/from_timestamp"] = 30.0  # past the end of file-001.mp4
    pq.write_table(pa.Table.from_pylist(rows), table_path)
    refs = episode_paths(root)
    with pytest.raises(EpisodeFormatError, match="no frames between"):
        load_episode(refs[2])
    video = root / "videos" / FRONT / "chunk-000" / "file-000.mp4"
    video.write_bytes(b"\x00" * 64)
    with pytest.raises(EpisodeFormatError, match="not a decodable video"):
        load_episode(refs[0])


def test_action_column_problems(tmp_path):
    root = _copy(tmp_path, "v3.0")
    data_path = root / "data" / "chunk-000" / "file-001.parquet"
    table = pq.read_table(data_path)
    ragged = pa.array([[0.0] * (1 + i % 2) for i in range(table.num_rows)], pa.list_(pa.float32()))
    pq.write_table(table.set_column(table.column_names.index("action"), "action", ragged), data_path)
    with pytest.raises(EpisodeFormatError, match="rows of different lengths"):
        load_episode(episode_paths(root)[2])
    pq.write_table(table.drop_columns(["action"]), data_path)
    with pytest.raises(EpisodeFormatError, match="no column 'action'"):
        load_episode(episode_paths(root)[2])
    pq.write_table(table.drop_columns(["episode_index"]), data_path)
    with pytest.raises(EpisodeFormatError, match="cannot be told apart"):
        load_episode(episode_paths(root)[2])
