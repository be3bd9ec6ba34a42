"""End-to-end properties of the training loop: GRPO learns, multi-process equals single-process,
kill-and-resume equals uninterrupted, and bad input fails clearly."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from rlvr_sim.config import load_config
from rlvr_sim.rl.trainer import RewardError, Trainer, run_training
from rlvr_sim.tasks.addition import AdditionTask

REPO = Path(__file__).resolve().parents[2]


def grpo_args(sft_dir, out, *extra):
    return ["--task", "addition", "task_args.digits=1", f"model.name_or_path={sft_dir}", f"output_dir={out}",
            "progress=false", "eval_examples=0", "batch_size=8", "micro_batch_size=2", "group_size=4",
            "lr=1e-3", *extra]


def run_script(script, args, env_extra=None, launcher=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    cmd = (launcher or [sys.executable]) + [str(REPO / "training" / script), *args]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def final_state(out):
    ckpts = sorted((Path(out) / "checkpoints").glob("step-*"))
    return load_file(str(ckpts[-1] / "model_state.safetensors"))


def max_abs_diff(a, b):
    assert a.keys() == b.keys()
    return max(float((a[k] - b[k]).abs().max()) for k in a)


def test_grpo_raises_reward_of_tiny_model(addition_sft, tmp_path):
    sft_dir, sft_summary = addition_sft
    config = load_config(None, [], task="addition", task_args={"digits": 1}, model={"name_or_path": str(sft_dir)},
                         steps=120, lr=1e-3, batch_size=64, micro_batch_size=64, group_size=8, eval_examples=100,
                         output_dir=str(tmp_path), progress=False)
    summary = run_training("grpo", config)
    first = sum(h["reward"] for h in summary["history"][:10]) / 10
    last = sum(h["reward"] for h in summary["history"][-10:]) / 10
    assert summary["initial_eval_reward"] < 0.3, summary["initial_eval_reward"]
    assert summary["final_eval_reward"] > 0.6, summary["final_eval_reward"]
    assert first < 0.3 and last > 2 * first, (first, last)
    assert summary["reward_errors"] == 0


def test_two_processes_match_one_process(addition_sft, tmp_path):
    """Same global batch split over 2 gloo processes: parameters agree to 1e-5 after 3 GRPO steps
    (float summation order differs between one and two processes; nothing else may)."""
    sft_dir, _ = addition_sft
    one = run_script("grpo.py", grpo_args(sft_dir, tmp_path / "one", "steps=3"))
    assert one.returncode == 0, one.stderr[-2000:]
    two = run_script("grpo.py", grpo_args(sft_dir, tmp_path / "two", "steps=3"),
                     launcher=[sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                               "--master_port", "29517"])
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = final_state(tmp_path / "one"), final_state(tmp_path / "two")
    start = load_file(str(Path(sft_dir) / "model.safetensors"))
    moved = max(float((a[k] - start[k]).abs().max()) for k in start)
    assert moved > 1e-4  # the runs really trained
    assert max_abs_diff(a, b) < 1e-5


def test_kill_and_resume_matches_uninterrupted(addition_sft, tmp_path):
    sft_dir, _ = addition_sft
    full = run_script("grpo.py", grpo_args(sft_dir, tmp_path / "full", "steps=6"))
    assert full.returncode == 0, full.stderr[-2000:]
    out = tmp_path / "killed"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, str(REPO / "training" / "grpo.py"),
                             *grpo_args(sft_dir, out, "steps=6", "save_every=1")], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not (out / "checkpoints" / "step-000002").exists():
        assert proc.poll() is None, "run ended before it could be killed"
        assert time.time() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = sorted((out / "checkpoints").glob("step-*"))
    assert done and "step-000006" not in {p.name for p in done}
    resumed = run_script("grpo.py", grpo_args(sft_dir, out, "steps=6", "save_every=1", "resume=auto"))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert max_abs_diff(final_state(tmp_path / "full"), final_state(out)) == 0.0


class RaisingRewardTask(AdditionTask):
    worst_reward = 0.0

    def reward(self, prompts, completions, metadata):
        raise KeyError("scorer broke")


class NegativeRaisingRewardTask(RaisingRewardTask):
    worst_reward = -2.0  # as the video task's -(MAE + LPIPS), whose best value is 0.0


class NaNRewardTask(AdditionTask):
    def reward(self, prompts, completions, metadata):
        return [float("nan")] * len(completions)


def test_raising_reward_falls_back_with_warning_and_counter(addition_sft, tmp_path):
    sft_dir, _ = addition_sft
    config = load_config(None, [], task=f"{__name__}:RaisingRewardTask", task_args={"digits": 1},
                         model={"name_or_path": str(sft_dir)}, steps=2, batch_size=4, micro_batch_size=4,
                         group_size=2, eval_examples=0, output_dir=str(tmp_path), progress=False)
    with pytest.warns(UserWarning, match="scorer broke"):
        summary = run_training("grpo", config)
    assert summary["reward_errors"] == 2
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["reward_errors"] for r in rows if "reward_errors" in r][:2] == [1, 2]


def test_raising_reward_scores_the_task_worst_reward_not_zero(tmp_path):
    """A failing reward must never be rewarded: for a negative-error reward 0.0 would be the best score."""
    config = load_config(None, [], task=f"{__name__}:NegativeRaisingRewardTask", task_args={"digits": 1},
                         model={"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64,
                                "num_hidden_layers": 1, "num_attention_heads": 2, "max_positions": 16},
                         steps=1, batch_size=2, micro_batch_size=2, group_size=2, eval_examples=0,
                         output_dir=str(tmp_path), progress=False)
    trainer = Trainer(config, "grpo")
    with pytest.warns(UserWarning, match="worst reward -2.0"):
        assert trainer.safe_reward([[1]] * 3, [[2]] * 3, [{}] * 3) == [-2.0] * 3
    assert trainer.reward_errors == 1


def test_nan_reward_is_a_clear_error(addition_sft, tmp_path):
    sft_dir, _ = addition_sft
    config = load_config(None, [], task=f"{__name__}:NaNRewardTask", task_args={"digits": 1},
                         model={"name_or_path": str(sft_dir)}, steps=1, batch_size=2, micro_batch_size=2,
                         group_size=2, eval_examples=0, output_dir=str(tmp_path), progress=False)
    with pytest.raises(RewardError, match="non-finite rewards"):
        run_training("grpo", config)


def test_lora_reference_is_the_adapter_disabled_base(addition_sft, tmp_path):
    sft_dir, _ = addition_sft
    config = load_config(None, [], task="addition", task_args={"digits": 1}, model={"name_or_path": str(sft_dir)},
                         lora={"rank": 4, "alpha": 8}, steps=2, lr=1e-2, batch_size=4, micro_batch_size=2,
                         group_size=4, eval_examples=0, output_dir=str(tmp_path), progress=False)
    trainer = Trainer(config, "grpo")
    assert trainer.reference is None  # no second copy of the model
    base_before = {k: v.clone() for k, v in trainer.model.state_dict().items() if "lora_" not in k}
    summary = trainer.run()
    assert summary["history"][-1]["kl"] > 0  # the adapter moved away from the base
    after = trainer.model.state_dict()
    assert all(torch.equal(base_before[k], after[k]) for k in base_before)
    assert (tmp_path / "final" / "model.safetensors").exists()  # merged checkpoint loads as a plain LM


def test_train_split_picks_the_prompts_and_an_unknown_one_is_named(addition_sft, tmp_path):
    sft_dir, _ = addition_sft
    common = dict(task="addition", task_args={"digits": 1}, model={"name_or_path": str(sft_dir)}, steps=1,
                  batch_size=2, micro_batch_size=2, group_size=2, eval_examples=0, output_dir=str(tmp_path),
                  progress=False)
    trainer = Trainer(load_config(None, [], train_split="test", **common), "grpo")
    expected = AdditionTask(digits=1).examples("test")
    assert [e.prompt_ids for e in trainer.train_examples] == [e.prompt_ids for e in expected]
    with pytest.raises(ValueError, match="unknown split 'train_rl'"):
        Trainer(load_config(None, [], train_split="train_rl", **common), "grpo")
