"""Episode loader (Open-X / RT-1-style .npz at any resolution and action size) and the PushT collector."""

import numpy as np
import pytest

from rlvr_sim.data.episodes import EpisodeFormatError, episode_paths, load_episode, load_episodes, split_paths


def _write(path, **arrays):
    np.savez_compressed(path, **arrays)
    return path


def test_rt1_style_episode_any_resolution_and_action_dim(tmp_path):
    rng = np.random.default_rng(0)
    path = _write(tmp_path / "ep.npz", image=rng.integers(0, 256, (9, 256, 320, 3), dtype=np.uint8),
                  action=rng.normal(size=(9, 7)).astype(np.float32))
    ep = load_episode(path, image_size=64)
    assert ep.images.shape == (9, 64, 64, 3) and ep.images.dtype == np.uint8
    assert ep.actions.shape == (8, 7)  # the last action has no recorded outcome


def test_frame_skip_takes_every_sth_frame_and_averages_actions(tmp_path):
    images = np.zeros((9, 16, 16, 3), np.uint8)
    images[:, 0, 0, 0] = np.arange(9)
    actions = np.repeat(np.arange(9, dtype=np.float32)[:, None], 2, axis=1)
    ep = load_episode(_write(tmp_path / "e.npz", image=images, action=actions), image_size=16, frame_skip=4)
    assert ep.images[:, 0, 0, 0].tolist() == [0, 4, 8]
    assert ep.actions[:, 0].tolist() == [1.5, 5.5]


def test_grayscale_float_frames_and_short_actions(tmp_path):
    images = np.random.default_rng(1).random((5, 32, 32)).astype(np.float32)
    ep = load_episode(_write(tmp_path / "g.npz", image=images, action=np.zeros((4, 3))), image_size=16)
    assert ep.images.shape == (5, 16, 16, 3) and ep.actions.shape == (4, 3)


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"action": np.zeros((4, 2))}, "missing key 'image'"),
        ({"image": np.zeros((4, 8, 8, 3), np.uint8)}, "missing key 'action'"),
        ({"image": np.zeros((4, 8, 8, 5), np.uint8), "action": np.zeros((4, 2))}, r"shape \(T, H, W, 3\)"),
        ({"image": np.zeros((4, 8, 8, 3), np.uint8), "action": np.zeros((9, 2))}, "9 rows"),
        ({"image": np.zeros((4, 8, 8, 3), np.uint8), "action": np.full((4, 2), np.nan)}, "NaN"),
        ({"image": np.zeros((1, 8, 8, 3), np.uint8), "action": np.zeros((1, 2))}, "at least 2 frames"),
    ],
)
def test_bad_episode_files_raise_clear_errors(tmp_path, arrays, message):
    path = _write(tmp_path / "bad.npz", **arrays)
    with pytest.raises(EpisodeFormatError, match=message):
        load_episode(path)


def test_corrupt_file_is_reported(tmp_path):
    path = tmp_path / "corrupt.npz"
    path.write_bytes(b"not a zip file at all")
    with pytest.raises(EpisodeFormatError, match="corrupt.npz"):
        load_episode(path)


def test_directory_loading_and_split(tmp_path):
    for i in range(5):
        _write(tmp_path / f"e{i}.npz", image=np.zeros((3, 8, 8, 3), np.uint8), action=np.zeros((3, 2)))
    assert len(load_episodes(tmp_path, image_size=8)) == 5
    split = split_paths(episode_paths(tmp_path), 0.2, seed=0)
    assert len(split["test"]) == 1 and len(split["train"]) == 4
    assert split == split_paths(episode_paths(tmp_path), 0.2, seed=0)
    with pytest.raises(FileNotFoundError):
        episode_paths(tmp_path / "missing")


def test_mixed_action_dims_are_rejected(tmp_path):
    _write(tmp_path / "a.npz", image=np.zeros((3, 8, 8, 3), np.uint8), action=np.zeros((3, 2)))
    _write(tmp_path / "b.npz", image=np.zeros((3, 8, 8, 3), np.uint8), action=np.zeros((3, 4)))
    with pytest.raises(EpisodeFormatError, match="action dimension"):
        load_episodes(tmp_path, image_size=8)


def test_collector_writes_loadable_seeded_episodes(tmp_path):
    from rlvr_sim.envs.video.collect import main

    main(["--out", str(tmp_path / "a"), "--episodes", "2", "--max-steps", "12", "--seed", "3"])
    main(["--out", str(tmp_path / "b"), "--episodes", "2", "--max-steps", "12", "--seed", "3"])
    files = episode_paths(tmp_path / "a")
    with np.load(files[0]) as data:
        assert data["image"].dtype == np.uint8 and data["image"].ndim == 4
        assert data["action"].dtype == np.float32 and data["action"].shape == (len(data["image"]), 2)
        assert str(data["env_id"]) == "gym_pusht/PushT-v0" and str(data["policy"])
        with np.load(episode_paths(tmp_path / "b")[0]) as again:
            assert np.array_equal(data["image"], again["image"])
    ep = load_episode(files[0], image_size=64, frame_skip=4)
    assert ep.images.shape[1:] == (64, 64, 3) and ep.metadata["policy"]


def test_collector_rejects_unknown_policy(tmp_path):
    from rlvr_sim.envs.video.collect import main

    with pytest.raises(ValueError, match="unknown policy"):
        main(["--out", str(tmp_path), "--episodes", "1", "--mix", "wizard:1"])
