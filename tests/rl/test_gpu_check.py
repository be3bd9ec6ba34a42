"""The GPU path, proven on the CPU: scripts/gpu_check.sh in its CPU mode, and the settings it relies on
(mixed precision, gradient checkpointing, FSDP) against the plain fp32 run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from rlvr_sim.config import load_config
from rlvr_sim.models.lm import build_model
from rlvr_sim.rl.grpo import uncached_completion_logprobs
from rlvr_sim.rl.losses import completion_logprobs
from rlvr_sim.rl.sampler import left_pad, sample
from rlvr_sim.rl.trainer import Trainer, run_training

REPO = Path(__file__).resolve().parents[2]
TINY = {"preset": "tiny-5m", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 2, "max_positions": 32}


def tiny_config(tmp_path, *overrides, **settings):
    base = dict(task="addition", task_args={"digits": 1}, model=dict(TINY), steps=2, lr=1e-3, batch_size=8,
                micro_batch_size=4, group_size=4, eval_examples=0, output_dir=str(tmp_path), progress=False)
    base.update(settings)
    return load_config(None, list(overrides), **base)


def last_state(out):
    return load_file(str(sorted((Path(out) / "checkpoints").glob("step-*"))[-1] / "model_state.safetensors"))


def test_gpu_check_runs_on_cpu_with_the_tiny_preset(tmp_path):
    out = tmp_path / "gpu_check_cpu.json"
    env = dict(os.environ, GPU_CHECK_CPU="1")
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--out", str(out)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["errors"] == {}
    assert report["mode"].startswith("cpu-tiny") and report["device"].startswith("cpu")
    for stage in ("sft", "grpo"):
        assert report[stage]["seconds_per_step"] > 0, report[stage]
        assert report[stage]["peak_process_rss_bytes"] > 0
    assert report["sft"]["tokens_per_second"] > 0 and report["grpo"]["generated_tokens_per_second"] > 0
    assert all(r["ours"]["tokens_per_second"] > 0 and r["speedup_lean_decode"] > 0
               for r in report["sampler_on_device"]["results"])
    assert report["sampler_benchmark"]["result"]["results"]  # benchmarks/sampler.py --quick ran
    assert report["sft_gradient_checkpointing"]["max_abs_loss_difference_vs_sft"] < 1e-5  # same update, fp32
    exact = report["sampler_exactness_on_device"]["fp32"]
    assert exact["distinct_lengths"] > 1 and exact["max_abs_diff_sampler_vs_uncached"] < 1e-4
    assert report["fsdp_launch"]["processes"] == 2 and report["fsdp_launch"]["final_checkpoint"]
    assert not (REPO / "benchmarks" / "results" / "gpu.json").exists() or "cpu" not in \
        json.loads((REPO / "benchmarks" / "results" / "gpu.json").read_text())["device"]


def test_gpu_check_without_cuda_refuses_to_write_gpu_json(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible")
    out = tmp_path / "gpu.json"
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--out", str(out)],
                          env=dict(os.environ, GPU_CHECK_CPU="0"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 3 and "no CUDA device" in done.stderr
    assert not out.exists()


def test_uncached_logprobs_equal_the_cached_ones():
    """Gradient checkpointing scores completions without a KV cache: same log-probs as the shared-prefill
    path and as the sampler, with and without checkpointing active."""
    torch.manual_seed(0)
    model = build_model("tiny-5m", vocab_size=40, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=2).eval()
    prompts = [[1, 2, 3, 4, 5], [6, 7, 8]]
    out = sample(model, prompts, group_size=3, max_new_tokens=6, temperature=1.0, stop_token_ids=(9, 10, 11, 12),
                 seed=3)
    assert len(set(out.lengths.tolist())) > 1  # rows of different lengths: right padding is exercised
    pid, pmask = left_pad(prompts, 0)
    with torch.no_grad():
        cached = completion_logprobs(model, pid, pmask, out.tokens, out.attention_mask, 3)
        plain = uncached_completion_logprobs(model, pid, pmask, out.tokens, out.attention_mask, 3)
    mask = out.loss_mask
    assert float(((cached - plain).abs() * mask).max()) < 1e-5
    assert float(((out.logprobs - plain).abs() * mask).max()) < 1e-5
    if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.2x
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    checkpointed = uncached_completion_logprobs(model, pid, pmask, out.tokens, out.attention_mask, 3)
    checkpointed.sum().backward()
    assert float(((cached - checkpointed.detach()).abs() * mask).max()) < 1e-5


def test_gradient_checkpointing_sft_is_the_same_update(tmp_path):
    plain = run_training("sft", tiny_config(tmp_path / "plain"))
    ckpt = run_training("sft", tiny_config(tmp_path / "ckpt", "gradient_checkpointing=true"))
    assert [h["loss"] for h in plain["history"]] == pytest.approx([h["loss"] for h in ckpt["history"]], abs=1e-6)
    a, b = last_state(tmp_path / "plain"), last_state(tmp_path / "ckpt")
    assert max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-6


def test_gradient_checkpointing_grpo_scores_the_same(addition_sft, tmp_path):
    """First GRPO step with and without checkpointing: same samples, same loss and KL (the update itself
    goes through Adam, which turns float-level gradient differences on near-zero gradients into sign flips)."""
    sft_dir, _ = addition_sft
    runs = [run_training("grpo", tiny_config(tmp_path / name, *extra, model={"name_or_path": str(sft_dir)}, steps=1))
            for name, extra in (("plain", ()), ("ckpt", ("gradient_checkpointing=true",)))]
    first = [r["history"][0] for r in runs]
    assert first[0]["reward"] == first[1]["reward"] and first[0]["response_tokens"] == first[1]["response_tokens"]
    assert first[0]["loss"] == pytest.approx(first[1]["loss"], abs=1e-6)
    assert first[0]["grad_norm"] == pytest.approx(first[1]["grad_norm"], rel=1e-4)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision_trains_with_fp32_weights(tmp_path, precision):
    trainer = Trainer(tiny_config(tmp_path, f"mixed_precision={precision}", steps=3), "sft")
    assert trainer.processes.autocast_dtype == {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    assert (trainer.scaler is not None) == (precision == "fp16")
    summary = trainer.run()
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
    losses = [h["loss"] for h in summary["history"]]
    assert all(map(torch.isfinite, torch.tensor(losses)))
    state = torch.load(sorted((tmp_path / "checkpoints").glob("step-*"))[-1] / "trainer_state.pt", weights_only=True)
    assert ("grad_scaler" in state) == (precision == "fp16")


def test_mixed_precision_follows_accelerate_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    assert Trainer(tiny_config(tmp_path / "a"), "sft").processes.precision == "bf16"
    assert Trainer(tiny_config(tmp_path / "b", "mixed_precision=no"), "sft").processes.precision == "no"  # the setting wins
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION")
    assert Trainer(tiny_config(tmp_path / "c"), "sft").processes.precision == "no"  # today's default: fp32


def test_fsdp_two_processes_match_one_process(addition_sft, tmp_path):
    """GRPO under the shipped FSDP accelerate config, 2 gloo processes, against the plain 1-process run:
    same parameters after 2 steps, a loadable final checkpoint, and resume from the sharded state."""
    sft_dir, _ = addition_sft
    args = ["--task", "addition", "task_args.digits=1", f"model.name_or_path={sft_dir}", "progress=false",
            "eval_examples=8", "batch_size=8", "micro_batch_size=2", "group_size=4", "lr=1e-3", "steps=2"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    one = subprocess.run([sys.executable, "training/grpo.py", *args, f"output_dir={tmp_path / 'one'}"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=600)
    assert one.returncode == 0, one.stderr[-2000:]
    launch = ["accelerate", "launch", "--config_file", "training/configs/accelerate/fsdp.yaml", "--num_processes",
              "2", "--mixed_precision", "no", "--main_process_port", "29541", "training/grpo.py"]
    two = subprocess.run([*launch, *args, f"output_dir={tmp_path / 'two'}"], cwd=REPO,
                         env=dict(env, ACCELERATE_USE_CPU="1"), capture_output=True, text=True, timeout=600)
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = last_state(tmp_path / "one"), last_state(tmp_path / "two")
    start = load_file(str(Path(sft_dir) / "model.safetensors"))
    assert max(float((a[k] - start[k]).abs().max()) for k in start) > 1e-4  # the runs really trained
    assert a.keys() == b.keys() and max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-5
    final = load_file(str(tmp_path / "two" / "final" / "model.safetensors"))
    assert max(float((final[k] - b[k]).abs().max()) for k in final) == 0
    resumed = subprocess.run([*launch, *args[:-1], "steps=3", "resume=auto", f"output_dir={tmp_path / 'two'}"],
                             cwd=REPO, env=dict(env, ACCELERATE_USE_CPU="1"), capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    steps = [json.loads(line) for line in (tmp_path / "two" / "metrics.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps if "step" in s] == [1, 2, 3]
