"""Video metrics: known values, shapes, bad input, repetition definition, ST-LPIPS sanity."""

import numpy as np
import pytest

from rlvr_sim.metrics import video as vm


def _frames(seed: int, n: int = 3, size: int = 32) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, size, size, 3), dtype=np.uint8)


def test_identical_frames_are_perfect():
    a = _frames(0)
    assert np.allclose(vm.mse(a, a), 0) and np.allclose(vm.mae(a, a), 0)
    assert np.allclose(vm.ssim(a, a), 1.0)
    assert np.allclose(vm.psnr(a, a), 80.0)


def test_known_values_on_constant_frames():
    a = np.zeros((1, 16, 16, 3), np.uint8)
    b = np.full((1, 16, 16, 3), 51, np.uint8)  # 0.2 on [0, 1]
    assert vm.mse(a, b)[0] == pytest.approx(0.04)
    assert vm.mae(a, b)[0] == pytest.approx(0.2)
    assert vm.psnr(a, b)[0] == pytest.approx(10 * np.log10(1 / 0.04), rel=1e-6)
    # constant images: SSIM reduces to the luminance term (2 mu_a mu_b + C1) / (mu_a^2 + mu_b^2 + C1)
    expected = (0 + vm.SSIM_C1) / (0.04 + vm.SSIM_C1)
    assert vm.ssim(a, b)[0] == pytest.approx(expected, rel=1e-6)


def test_ssim_drops_with_noise_and_is_symmetric():
    a = _frames(1)
    noisy = np.clip(a.astype(int) + np.random.default_rng(2).integers(-40, 40, a.shape), 0, 255).astype(np.uint8)
    s = vm.ssim(a, noisy)
    assert (s < 0.99).all() and np.allclose(s, vm.ssim(noisy, a))


def test_float_and_uint8_inputs_agree():
    a, b = _frames(3), _frames(4)
    assert np.allclose(vm.mse(a, b), vm.mse(a / 255.0, b / 255.0))


@pytest.mark.parametrize(
    "pred, gold, message",
    [
        (np.zeros((2, 16, 16, 3)), np.zeros((2, 16, 8, 3)), "shape"),
        (np.zeros((2, 16, 16)), np.zeros((2, 16, 16)), "shape"),
        (np.full((1, 16, 16, 3), np.nan), np.zeros((1, 16, 16, 3)), "NaN"),
        (np.full((1, 16, 16, 3), 2.0), np.zeros((1, 16, 16, 3)), r"\[0, 1\]"),
    ],
)
def test_bad_frames_raise_clear_errors(pred, gold, message):
    with pytest.raises(ValueError, match=message):
        vm.mse(pred, gold)


def test_ssim_rejects_tiny_frames():
    with pytest.raises(ValueError, match="at least 11"):
        vm.ssim(np.zeros((1, 8, 8, 3)), np.zeros((1, 8, 8, 3)))


def test_repetition_rate_definition():
    gold = np.array([[[0], [1], [2]], [[0], [1], [2]], [[0], [0], [0]]])
    pred = np.array([
        [[0], [1], [1]],  # repeats at t=2 where gold changed -> counts
        [[0], [1], [2]],  # never repeats
        [[0], [0], [0]],  # repeats but gold did not change either -> does not count
    ])
    assert vm.repetition_rate(pred, gold) == pytest.approx(1 / 3)
    assert vm.repeated_rollouts(pred, gold).tolist() == [True, False, False]  # per rollout, for paired intervals
    # t=1 counts too: copying the context frame where the truth moved
    assert vm.repetition_rate(np.array([[[0], [0], [5]]]), np.array([[[0], [1], [2]]])) == 1.0


def test_repetition_rate_rejects_bad_shapes():
    with pytest.raises(ValueError, match="shape"):
        vm.repetition_rate(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="at least one predicted"):
        vm.repetition_rate(np.zeros((2, 1, 4)), np.zeros((2, 1, 4)))


def test_perceptual_metric_is_named_and_orders_distortions():
    metric = vm.perceptual_metric()
    assert "LPIPS" in metric.name
    rng = np.random.default_rng(0)
    base = np.full((1, 64, 64, 3), 255, np.uint8)
    base[:, 20:40, 20:44] = (120, 130, 150)
    shifted = np.roll(base, 2, axis=2)
    noisy = np.clip(base.astype(int) + rng.integers(-90, 90, base.shape), 0, 255).astype(np.uint8)
    same, small, large = metric(base, base)[0], metric(base, shifted)[0], metric(base, noisy)[0]
    assert same == pytest.approx(0.0, abs=1e-6)
    assert 0 < small < large


def test_frame_metrics_bundle():
    a, b = _frames(5, size=16), _frames(6, size=16)
    out = vm.frame_metrics(a, b)
    assert set(out) == {"mse", "mae", "psnr", "ssim"} and all(v.shape == (3,) for v in out.values())


def test_near_copy_rate_definition():
    still = np.full((1, 3, 16, 16, 3), 255, np.uint8)
    moving = still.copy()
    moving[0, 1, :8] = 0
    moving[0, 2, 8:] = 0
    # prediction keeps the scene still where the truth moves -> near-copy
    assert vm.near_copy_rate(still, moving) == 1.0
    # following the truth, or staying still where the truth stays still, does not count
    assert vm.near_copy_rate(moving, moving) == 0.0 and vm.near_copy_rate(still, still) == 0.0
    with pytest.raises(ValueError, match="near_copy_rate"):
        vm.near_copy_rate(still[0], moving[0])
