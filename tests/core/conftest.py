"""Shared fixtures for the training-core tests: a briefly SFT-trained tiny model on the addition task."""

import pytest

from rlvr_sim.config import load_config
from rlvr_sim.rl.trainer import run_training

TINY_MODEL = {"preset": "tiny-5m", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 2, "max_positions": 32}


@pytest.fixture(scope="session")
def addition_sft(tmp_path_factory):
    """20 SFT steps on 1-digit addition: greedy accuracy well under 0.3, a warm start for GRPO."""
    out = tmp_path_factory.mktemp("addition_sft")
    config = load_config(None, [], task="addition", task_args={"digits": 1}, model=TINY_MODEL, steps=20, lr=3e-3,
                         batch_size=32, micro_batch_size=32, eval_examples=100, output_dir=str(out), progress=False)
    summary = run_training("sft", config)
    return out / "final", summary
