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


def test_penetration_measures_the_disc_inside_the_t():
    from rlvr_sim.metrics.pusht_pixels import MAX_PENETRATION, penetration

    # T at (300, 300), angle 0: bar x 240..360, y 300..330; stem x 285..315, y 330..420
    states = np.array([
        [250.0, 380.0, 300.0, 300.0, 0.0],  # beside the stem, clear of it (35 units from its edge)
        [270.0, 380.0, 300.0, 300.0, 0.0],  # touching the stem (15 units: the disc's radius)
        [285.0, 380.0, 300.0, 300.0, 0.0],  # centre on the stem's edge: 15 units deep
        [300.0, 375.0, 300.0, 300.0, 0.0],  # centre on the stem's mid-line: as deep as it gets
        [np.nan, np.nan, 300.0, 300.0, 0.0],  # no agent: nothing to measure
    ])
    depth = penetration(states)
    assert depth[0] == 0.0 and depth[1] == 0.0 and depth[4] == 0.0
    assert np.isclose(depth[2], (15 - 4) * 64 / 512) and np.isclose(depth[3], MAX_PENETRATION - 4 * 64 / 512)
    turned = states.copy()  # the same scene turned by 90 degrees about the T's origin gives the same depths
    turned[:, 0], turned[:, 1] = 300 - (states[:, 1] - 300), 300 + (states[:, 0] - 300)
    turned[:, 4] = np.pi / 2
    assert np.allclose(penetration(turned), depth)
