"""Video prediction metrics: MSE, PSNR, SSIM (x100), LPIPS (x100), MAE and the repetition rate.

Frames are (N, H, W, 3) arrays: uint8 in [0, 255] or float in [0, 1]; every pixel metric works on [0, 1]
values, per frame, and returns one number per frame so callers can average over frames, rollouts or
best-of-N draws as they need. SSIM follows the usual definition (11x11 Gaussian window, sigma 1.5,
per channel, valid region, C1 = 0.01^2, C2 = 0.03^2, as in iVideoGPT's evaluator via piqa).

LPIPS: the standard ImageNet-backbone LPIPS needs backbone weights that are downloaded at run time; when
they are not available locally we use ST-LPIPS (Ghildyal & Liu, 2022: shift-tolerant LPIPS, AlexNet
trunk and linear heads trained on human perceptual judgements), read from the weight files that the
`stlpips-pytorch` PyPI package ships, with the network built here (no torchvision needed). The two are
different metrics: `PerceptualMetric.name` says which one produced a number, and every table and log
prints it. Torch is imported only when a perceptual metric is built.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

SSIM_WINDOW, SSIM_SIGMA = 11, 1.5
SSIM_C1, SSIM_C2 = 0.01**2, 0.03**2
PSNR_EPS = 1e-8


def to_unit_float(frames: np.ndarray) -> np.ndarray:
    """(…, H, W, 3) frames as float64 in [0, 1]: uint8 is divided by 255, floats must already be in [0, 1]."""
    frames = np.asarray(frames)
    if frames.ndim < 3 or frames.shape[-1] != 3:
        raise ValueError(f"frames must have shape (..., H, W, 3), got {frames.shape}")
    if frames.dtype == np.uint8:
        return frames.astype(np.float64) / 255.0
    if not np.issubdtype(frames.dtype, np.floating):
        raise ValueError(f"frames must be uint8 or float in [0, 1], got dtype {frames.dtype}")
    if not np.isfinite(frames).all():
        raise ValueError("frames contain NaN or inf")
    if frames.min() < -1e-6 or frames.max() > 1 + 1e-6:
        raise ValueError(f"float frames must lie in [0, 1], got range [{frames.min():.3f}, {frames.max():.3f}]")
    return frames.astype(np.float64)


def _pair(pred: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pred, gold = to_unit_float(pred), to_unit_float(gold)
    if pred.shape != gold.shape:
        raise ValueError(f"prediction shape {pred.shape} != ground-truth shape {gold.shape}")
    return pred.reshape(-1, *pred.shape[-3:]), gold.reshape(-1, *gold.shape[-3:])


def mse(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Mean squared error per frame on [0, 1] pixels, shape (N,)."""
    p, g = _pair(pred, gold)
    return ((p - g) ** 2).mean(axis=(1, 2, 3))


def mae(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Mean absolute error per frame on [0, 1] pixels, shape (N,)."""
    p, g = _pair(pred, gold)
    return np.abs(p - g).mean(axis=(1, 2, 3))


def psnr(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Peak signal-to-noise ratio per frame in dB (peak 1.0, epsilon 1e-8 so identical frames give 80 dB)."""
    return 10.0 * np.log10(1.0 / (mse(pred, gold) + PSNR_EPS))


def _gaussian_kernel() -> np.ndarray:
    offsets = np.arange(SSIM_WINDOW) - (SSIM_WINDOW - 1) / 2
    kernel = np.exp(-(offsets**2) / (2 * SSIM_SIGMA**2))
    return kernel / kernel.sum()


def _filter_valid(images: np.ndarray) -> np.ndarray:
    """Separable Gaussian filter, valid region only, over axes 1 and 2 of (N, H, W, C)."""
    kernel = _gaussian_kernel()
    size = len(kernel)
    height, width = images.shape[1] - size + 1, images.shape[2] - size + 1
    rows = sum(kernel[i] * images[:, i : i + height] for i in range(size))
    return sum(kernel[j] * rows[:, :, j : j + width] for j in range(size))


def ssim(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Structural similarity per frame in [-1, 1] (multiply by 100 for tables); frames must be >= 11x11."""
    p, g = _pair(pred, gold)
    if min(p.shape[1:3]) < SSIM_WINDOW:
        raise ValueError(f"SSIM needs frames of at least {SSIM_WINDOW}x{SSIM_WINDOW}, got {p.shape[1:3]}")
    mu_p, mu_g = _filter_valid(p), _filter_valid(g)
    var_p = _filter_valid(p * p) - mu_p**2
    var_g = _filter_valid(g * g) - mu_g**2
    cov = _filter_valid(p * g) - mu_p * mu_g
    numerator = (2 * mu_p * mu_g + SSIM_C1) * (2 * cov + SSIM_C2)
    denominator = (mu_p**2 + mu_g**2 + SSIM_C1) * (var_p + var_g + SSIM_C2)
    return (numerator / denominator).mean(axis=(1, 2, 3))


def repetition_rate(pred_codes: np.ndarray, gold_codes: np.ndarray) -> float:
    """Share of multi-step rollouts that repeat a frame (the paper's "repetition rate").

    Inputs are token codes, shape (N rollouts, T + 1, L tokens per frame): index 0 holds the context frame
    (for both arrays, the same codes: the context frame as the tokenizer encodes it in the future-frame
    code space), indices 1..T the predicted (resp. ground-truth) future frames. A rollout *repeats* when
    for some t in 1..T its predicted frame t is token-identical to its predicted frame t - 1 while the
    ground-truth frames t and t - 1 differ in at least one token (so copying there was wrong). The rate
    is the share of rollouts that repeat at least once, in [0, 1].
    """
    return float(repeated_rollouts(pred_codes, gold_codes).mean())


def repeated_rollouts(pred_codes: np.ndarray, gold_codes: np.ndarray) -> np.ndarray:
    """Per rollout, whether it repeats (the test `repetition_rate` averages): (N,) bool, for paired intervals."""
    pred_codes, gold_codes = np.asarray(pred_codes), np.asarray(gold_codes)
    if pred_codes.ndim != 3 or pred_codes.shape != gold_codes.shape:
        raise ValueError(
            f"codes must both have shape (N, T+1, L); got {pred_codes.shape} and {gold_codes.shape}"
        )
    if pred_codes.shape[1] < 2:
        raise ValueError("repetition needs at least one predicted frame after the context frame")
    pred_same = (pred_codes[:, 1:] == pred_codes[:, :-1]).all(axis=2)
    gold_changed = (gold_codes[:, 1:] != gold_codes[:, :-1]).any(axis=2)
    return (pred_same & gold_changed).any(axis=1)


NEAR_COPY_MSE = 2e-4  # well under the one-step change of a moving PushT agent (~1e-3), over decoder noise


def near_copy_rate(pred: np.ndarray, gold: np.ndarray, threshold: float = NEAR_COPY_MSE) -> float:
    """Pixel-level companion of `repetition_rate`: share of rollouts that (nearly) copy a frame.

    pred / gold: (N, T + 1, H, W, 3) with index 0 the same context frame in both. A rollout near-copies
    when for some t in 1..T the MSE between predicted frames t and t - 1 is below `threshold` while the
    MSE between the true frames t and t - 1 is above it. Unlike the token-level repetition rate this
    also catches predictions that keep the scene still through slightly different codes.
    """
    pred, gold = to_unit_float(pred), to_unit_float(gold)
    if pred.ndim != 5 or pred.shape != gold.shape or pred.shape[1] < 2:
        raise ValueError(f"near_copy_rate needs (N, T+1, H, W, 3) arrays with T >= 1; got {pred.shape}, {gold.shape}")
    pred_step = ((pred[:, 1:] - pred[:, :-1]) ** 2).mean(axis=(2, 3, 4))
    gold_step = ((gold[:, 1:] - gold[:, :-1]) ** 2).mean(axis=(2, 3, 4))
    return float(((pred_step < threshold) & (gold_step > threshold)).any(axis=1).mean())


def _stlpips_weight_file(net: str) -> Path | None:
    spec = importlib.util.find_spec("stlpips_pytorch")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "weights" / "vST0.0" / f"{net}_shift_tolerant.pth"
    return path if path.is_file() else None


def _imagenet_lpips_available(net: str) -> bool:
    """ImageNet LPIPS runs offline only if the `lpips` package and torchvision's backbone weights are local."""
    if importlib.util.find_spec("lpips") is None or importlib.util.find_spec("torchvision") is None:
        return False
    checkpoints = Path.home() / ".cache" / "torch" / "hub" / "checkpoints"
    prefix = {"alex": "alexnet-", "vgg": "vgg16-"}[net]
    return checkpoints.is_dir() and any(p.name.startswith(prefix) for p in checkpoints.iterdir())


class PerceptualMetric:
    """LPIPS-style distance per frame pair (lower is better; x100 in tables); `name` says which network."""

    def __init__(self, kind: str = "auto", net: str = "alex", batch_size: int = 64) -> None:
        if kind not in ("auto", "imagenet-lpips", "st-lpips"):
            raise ValueError(f"kind must be 'auto', 'imagenet-lpips' or 'st-lpips', got {kind!r}")
        if net not in ("alex", "vgg"):
            raise ValueError(f"net must be 'alex' or 'vgg', got {net!r}")
        use_imagenet = kind == "imagenet-lpips" or (kind == "auto" and _imagenet_lpips_available(net))
        if use_imagenet:
            import lpips  # type: ignore[import-not-found]

            self.network: Any = lpips.LPIPS(net=net, verbose=False).eval()
            self.name = f"LPIPS ({net}, ImageNet)"
        elif net == "alex":
            from rlvr_sim.metrics._stlpips import build_stlpips_alex

            weights = _stlpips_weight_file(net)
            if weights is None:
                raise RuntimeError(
                    "no perceptual metric available: ImageNet LPIPS weights are not local and the "
                    "`stlpips-pytorch` package (pip install stlpips-pytorch) is not installed"
                )
            self.network = build_stlpips_alex(weights)
            self.name = "ST-LPIPS (AlexNet, shift-tolerant)"
        else:
            raise ValueError("ST-LPIPS is built here for net='alex' only; VGG needs ImageNet LPIPS")
        self.batch_size = batch_size

    def __call__(self, pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """Distance per frame pair, shape (N,), on inputs mapped to [-1, 1] as LPIPS expects."""
        import torch

        p, g = _pair(pred, gold)
        out = []
        with torch.no_grad():
            for start in range(0, len(p), self.batch_size):
                pt = torch.from_numpy(p[start : start + self.batch_size]).float().permute(0, 3, 1, 2) * 2 - 1
                gt = torch.from_numpy(g[start : start + self.batch_size]).float().permute(0, 3, 1, 2) * 2 - 1
                out.append(self.network(pt, gt).reshape(-1).double().numpy())
        return np.concatenate(out) if out else np.zeros(0)


_DEFAULT_PERCEPTUAL: dict[tuple[str, str], PerceptualMetric] = {}


def perceptual_metric(kind: str = "auto", net: str = "alex") -> PerceptualMetric:
    """A shared, lazily built `PerceptualMetric` (the network loads once per process)."""
    key = (kind, net)
    if key not in _DEFAULT_PERCEPTUAL:
        _DEFAULT_PERCEPTUAL[key] = PerceptualMetric(kind, net)
    return _DEFAULT_PERCEPTUAL[key]


def frame_metrics(pred: np.ndarray, gold: np.ndarray, lpips: PerceptualMetric | None = None) -> dict[str, np.ndarray]:
    """All per-frame pixel metrics (and LPIPS when a metric is passed), each an (N,) array."""
    result = {"mse": mse(pred, gold), "mae": mae(pred, gold), "psnr": psnr(pred, gold), "ssim": ssim(pred, gold)}
    if lpips is not None:
        result["lpips"] = lpips(pred, gold)
    return result


__all__ = [
    "PerceptualMetric",
    "frame_metrics",
    "mae",
    "mse",
    "near_copy_rate",
    "perceptual_metric",
    "psnr",
    "repeated_rollouts",
    "repetition_rate",
    "ssim",
    "to_unit_float",
]
