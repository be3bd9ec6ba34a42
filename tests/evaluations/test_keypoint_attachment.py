"""evaluations/keypoint_attachment.py: a point attached to the T reads one place in the T's frame however the T lies;
a point defined in the image ("the T's top end") wanders there; the agent's point is measured against the agent."""

import numpy as np
import pytest

from evaluations.keypoint_attachment import attachment


def _scene(n: int, seed: int = 0):
    """Judged states (agent x, y, T x, y, angle; world units) and codes of three points: one fixed on the T, one at
    the T's topmost corner in the image, one on the agent (128 levels across 512 units)."""
    rng = np.random.default_rng(seed)
    states = np.column_stack([rng.uniform(50, 460, (n, 2)), rng.uniform(150, 360, (n, 2)), rng.uniform(-np.pi, np.pi, n)])
    c, s = np.cos(states[:, 4]), np.sin(states[:, 4])
    place = np.array([30.0, 40.0])  # in the T's frame
    on_t = states[:, 2:4] + np.column_stack([c * place[0] - s * place[1], s * place[0] + c * place[1]])
    corners = np.array([[-60.0, 0.0], [60.0, 0.0], [0.0, 120.0]])
    world = states[:, None, 2:4] + np.stack([c[:, None] * corners[:, 0] - s[:, None] * corners[:, 1],
                                             s[:, None] * corners[:, 0] + c[:, None] * corners[:, 1]], -1)
    top = world[np.arange(n), world[..., 1].argmin(1)]
    points = np.stack([on_t, top, states[:, :2]], 1)
    codes = np.clip(np.floor(points / 512 * 128), 0, 127).astype(int).reshape(n, 6)
    return codes, states


def test_attached_points_stay_put_in_the_t_frame_and_image_defined_ones_wander():
    codes, states = _scene(400)
    rows = attachment(codes, states, bins=128, size=64)
    assert [r["marks"] for r in rows] == ["T", "T", "agent"]
    assert rows[0]["median_px"] < 0.5 and np.allclose(rows[0]["place_in_T_frame"], [30 / 8, 40 / 8], atol=0.5)
    assert rows[1]["median_px"] > 3.0
    assert rows[2]["median_px"] < 0.5 and rows[2]["place_in_T_frame"] is None


def test_frames_the_judge_cannot_read_are_left_out_and_none_is_an_error():
    codes, states = _scene(50)
    states[:10] = np.nan
    assert attachment(codes, states, 128, 64)[0]["median_px"] < 0.5
    with pytest.raises(ValueError, match="judge read no frame"):
        attachment(codes, np.full_like(states, np.nan), 128, 64)
