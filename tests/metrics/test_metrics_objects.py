"""Object-level fidelity errors and bootstrap intervals."""

import numpy as np
import pytest

from rlvr_sim.metrics.pusht_pixels import WORST_OBJECT_SCORE, object_errors, object_score
from rlvr_sim.metrics.stats import bootstrap_ci, paired_gain


def test_object_errors_in_64px_pixels_with_caps_for_missing_objects():
    gold = np.array([[256.0, 256.0, 100.0, 100.0, 0.1], [10.0, 10.0, 50.0, 50.0, 3.0]])
    pred = np.array([[264.0, 256.0, 100.0, 116.0, 0.1 + np.radians(10)], [np.nan, np.nan, np.nan, np.nan, np.nan]])
    errors = object_errors(pred, gold)
    assert errors["agent_px"][0] == pytest.approx(1.0) and errors["block_px"][0] == pytest.approx(2.0)
    assert errors["angle_deg"][0] == pytest.approx(10.0)
    assert errors["agent_missing"].tolist() == [False, True] and errors["block_missing"].tolist() == [False, True]
    assert object_score(errors)[1] == pytest.approx(WORST_OBJECT_SCORE)  # a lost frame is the worst frame
    wrapped = object_errors(np.array([[0, 0, 0, 0, np.pi - 0.01]]), np.array([[0, 0, 0, 0, -np.pi + 0.01]]))
    assert wrapped["angle_deg"][0] == pytest.approx(np.degrees(0.02))
    with pytest.raises(ValueError, match="state arrays"):
        object_errors(np.zeros((2, 5)), np.zeros((3, 5)))


def test_bootstrap_intervals_and_paired_gains():
    rng = np.random.default_rng(0)
    values = rng.normal(5.0, 1.0, 400)
    low, high = bootstrap_ci(values)
    assert low < 5.0 < high and high - low < 0.3
    better = paired_gain(values + 1.0, values + rng.normal(0, 0.1, 400))
    assert better["excludes_zero"] and better["gain"] == pytest.approx(1.0, abs=0.05)
    same = paired_gain(values, values + rng.normal(0, 0.1, 400))
    assert not same["excludes_zero"]
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci(np.array([1.0, np.nan]))
