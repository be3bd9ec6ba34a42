"""training/tokenizer.py: a step budget makes the run reproducible (the cosine LR no longer follows the clock)."""

import json

import numpy as np
from rlvr_sim.training.tokenizer import main
from safetensors.torch import load_file


def _episodes(directory, n=6, length=12, size=32, seed=0):
    rng = np.random.default_rng(seed)
    directory.mkdir()
    for i in range(n):
        images = np.full((length, size, size, 3), 230, np.uint8)
        x, y = rng.integers(4, size - 8, size=2)
        for t in range(length):
            images[t, y:y + 4, (x + t) % (size - 4):(x + t) % (size - 4) + 4] = (40, 90, 200)
        np.savez(directory / f"ep{i}.npz", image=images, action=rng.uniform(0, 512, (length, 2)).astype(np.float32))


def _train(data, out):
    return main(["--data", str(data), "--out", str(out), "--image-size", "32", "--frame-skip", "1", "--horizon", "2",
                 "--abs-grid", "4", "--cond-grid", "2", "--width", "8", "--batch-size", "4", "--lpips-weight", "0",
                 "--steps", "3", "--minutes", "5", "--test-fraction", "0.34"])


def test_step_budget_is_reproducible(tmp_path):
    _episodes(tmp_path / "data")
    first, second = _train(tmp_path / "data", tmp_path / "a"), _train(tmp_path / "data", tmp_path / "b")
    assert first["steps"] == second["steps"] == 3
    weights_a = load_file(str(tmp_path / "a" / "tokenizer.safetensors"))
    weights_b = load_file(str(tmp_path / "b" / "tokenizer.safetensors"))
    assert weights_a.keys() == weights_b.keys()
    assert all(np.array_equal(weights_a[k].numpy(), weights_b[k].numpy()) for k in weights_a)
    config = json.loads((tmp_path / "a" / "tokenizer_config.json").read_text())
    assert "--steps 3" in config["command"] and config["report"]["steps"] == 3


def test_collapse_check_on_measured_reports():
    """Figures of a real collapsed PushT tokenizer run and of the embedded tokenizer (foreground MSE)."""
    from rlvr_sim.training.tokenizer import collapsed

    collapsed_run = {"gap1_recon_fg_mse": 0.03245, "gap1_copy_fg_mse": 0.03325,
                     "gap7_recon_fg_mse": 0.06505, "gap7_copy_fg_mse": 0.06662}
    embedded = {"gap1_recon_fg_mse": 0.01483, "gap1_copy_fg_mse": 0.03325,
                "gap7_recon_fg_mse": 0.02448, "gap7_copy_fg_mse": 0.06662}
    assert collapsed(collapsed_run) and not collapsed(embedded)
