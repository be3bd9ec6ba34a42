"""Fuzz the video episode loader with .npz files of random keys, dtypes and shapes, and corrupt bytes.

`load_episode` returns a validated `Episode` (uint8 RGB frames at the model's size, float32 finite
actions, one fewer than frames) or raises `EpisodeFormatError` naming the file.
"""

import io
import zipfile

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlvr_sim.data.episodes import EpisodeFormatError, load_episode

DTYPES = st.sampled_from([np.uint8, np.int16, np.int64, np.uint16, np.float16, np.float32, np.float64, np.bool_,
                          np.complex64, "U3", "S2", "m8[s]", "M8[D]"])


def _array(shape: st.SearchStrategy) -> st.SearchStrategy:
    return DTYPES.flatmap(lambda dtype: hnp.arrays(dtype, shape, elements=None if np.dtype(dtype).kind in "mM" else
                                                   hnp.from_dtype(np.dtype(dtype), allow_nan=True, allow_infinity=True)))


frames_shape = st.tuples(st.integers(0, 4), st.integers(0, 5), st.integers(0, 5)) .flatmap(
    lambda thw: st.sampled_from([thw, (*thw, 1), (*thw, 3), (*thw, 2), thw[:1], (*thw, 3, 1)]))
action_shape = st.tuples(st.integers(0, 5), st.integers(0, 3)).flatmap(lambda ta: st.sampled_from([ta, ta[:1], (*ta, 2)]))
keys = st.sampled_from(["image", "action", "fps", "language", "Image", "actions"])


@st.composite
def npz_payloads(draw: st.DrawFn) -> bytes:
    """An .npz archive: usually `image` and `action` of any dtype/shape, sometimes missing or renamed keys,
    scalar metadata, and now and then truncated or not an archive at all."""
    arrays = {"image": draw(_array(frames_shape)), "action": draw(_array(action_shape))}
    for key in draw(st.lists(keys, max_size=2)):
        arrays[key] = draw(_array(st.sampled_from([(), (2,), (2, 2)])))
    for key in draw(st.lists(st.sampled_from(["image", "action"]), max_size=1)):
        arrays.pop(key, None)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    payload = buffer.getvalue()
    damage = draw(st.sampled_from(["none", "none", "none", "truncate", "flip", "npy", "text"]))
    if damage == "truncate":
        payload = payload[: draw(st.integers(0, len(payload) - 1))]
    elif damage == "flip":
        position = draw(st.integers(0, len(payload) - 1))
        payload = payload[:position] + bytes([payload[position] ^ 0xFF]) + payload[position + 1:]
    elif damage == "npy":  # a bare .npy saved under an .npz name
        one = io.BytesIO()
        np.save(one, arrays.get("image", np.zeros(3)))
        payload = one.getvalue()
    elif damage == "text":
        payload = draw(st.binary(max_size=64))
    return payload


@pytest.fixture(scope="module")
def episode_file(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_episodes") / "episode.npz"


@given(payload=npz_payloads(), image_size=st.sampled_from([4, 8]), frame_skip=st.integers(1, 3))
def test_load_episode_returns_a_valid_episode_or_raises_its_error(episode_file, payload: bytes, image_size: int,
                                                                 frame_skip: int) -> None:
    episode_file.write_bytes(payload)
    try:
        episode = load_episode(episode_file, image_size=image_size, frame_skip=frame_skip)
    except EpisodeFormatError as error:
        assert str(episode_file) in str(error)
        return
    assert episode.images.dtype == np.uint8 and episode.images.shape[1:] == (image_size, image_size, 3)
    assert episode.actions.dtype == np.float32 and episode.actions.ndim == 2
    assert len(episode.actions) == len(episode.images) - 1 >= 1 and np.isfinite(episode.actions).all()


@given(image=_array(st.just((3, 4, 4, 3))), action=_array(st.just((2, 2))))
def test_frames_and_actions_of_any_dtype(episode_file, image: np.ndarray, action: np.ndarray) -> None:
    np.savez(episode_file, image=image, action=action)
    try:
        episode = load_episode(episode_file, image_size=4)
    except EpisodeFormatError as error:
        assert str(episode_file) in str(error)
        return
    assert image.dtype.kind in "iuf" and action.dtype.kind in "iuf"
    assert episode.images.dtype == np.uint8 and episode.actions.dtype == np.float32


@given(t=st.integers(2, 6), a=st.integers(1, 3), frame_skip=st.integers(1, 3), float_frames=st.booleans())
def test_a_valid_episode_loads_with_its_actions(episode_file, t: int, a: int, frame_skip: int,
                                                float_frames: bool) -> None:
    assume(len(range(0, t, frame_skip)) >= 2)
    rng = np.random.default_rng(t * 10 + a)
    images = rng.integers(0, 256, (t, 6, 6, 3), dtype=np.uint8)
    actions = rng.normal(size=(t - 1, a)).astype(np.float32)
    np.savez(episode_file, image=images / 255.0 if float_frames else images, action=actions, fps=10)
    episode = load_episode(episode_file, image_size=6, frame_skip=frame_skip)
    np.testing.assert_array_equal(episode.images, images[::frame_skip])
    kept = range(0, t, frame_skip)
    expected = [actions[start:start + frame_skip].mean(axis=0) for start in list(kept)[:-1]]
    np.testing.assert_allclose(episode.actions, expected, rtol=1e-6)
    assert episode.metadata == {"fps": 10}


def test_non_finite_or_float32_overflowing_actions_are_named(episode_file) -> None:
    images = np.zeros((3, 4, 4, 3), np.uint8)
    for action, message in ((np.array([[1.0], [np.nan]]), "NaN or inf"), (np.array([[1.0], [1e300]]), "float32's range")):
        np.savez(episode_file, image=images, action=action)
        with pytest.raises(EpisodeFormatError, match=message):
            load_episode(episode_file, image_size=4)


def test_zip_without_arrays_is_a_format_error(episode_file) -> None:
    with zipfile.ZipFile(episode_file, "w") as archive:
        archive.writestr("image.npy", b"not an array")
        archive.writestr("action.npy", b"\x93NUMPY")
    with pytest.raises(EpisodeFormatError, match="not a readable"):
        load_episode(episode_file)
