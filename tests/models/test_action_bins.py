"""256-bin action discretiser: fit, encode/decode, clipping, persistence, bad input."""

import numpy as np
import pytest

from rlvr_sim.models.action_bins import ActionBins


def test_fit_and_encode_edges():
    bins = ActionBins.fit(np.array([[0.0, -1.0], [512.0, 1.0]]))
    assert bins.encode(np.array([0.0, -1.0])).tolist() == [0, 0]
    assert bins.encode(np.array([512.0, 1.0])).tolist() == [255, 255]  # x = 1 falls in the last bin
    assert bins.encode(np.array([256.0, 0.0])).tolist() == [128, 128]  # floor(0.5 * 256)
    assert bins.encode(np.array([1e6, -1e6])).tolist() == [255, 0]  # clipped


def test_decode_roundtrip_within_half_bin():
    rng = np.random.default_rng(0)
    actions = rng.uniform([0, -3], [512, 3], size=(100, 2))
    bins = ActionBins.fit(actions)
    back = bins.decode(bins.encode(actions))
    width = (bins.high - bins.low) / 256
    assert (np.abs(back - actions) <= width / 2 + 1e-4).all()


def test_constant_dimension_does_not_divide_by_zero():
    bins = ActionBins.fit(np.array([[1.0, 5.0], [2.0, 5.0]]))
    assert bins.encode(np.array([1.5, 5.0]))[1] == 0


def test_persistence_roundtrip():
    bins = ActionBins.fit(np.array([[0.0], [10.0]]))
    again = ActionBins.from_dict(bins.to_dict())
    assert np.array_equal(again.low, bins.low) and again.num_bins == 256


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0, 3.0]), np.array([np.nan, 1.0])])
def test_bad_actions_raise(bad):
    bins = ActionBins.fit(np.array([[0.0, 0.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="dimension|NaN"):
        bins.encode(bad)


def test_fit_rejects_nan_and_bad_metadata():
    with pytest.raises(ValueError, match="NaN"):
        ActionBins.fit(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="lacks"):
        ActionBins.from_dict({"low": [0.0]})
