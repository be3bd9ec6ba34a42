#!/usr/bin/env bash
# The GPU path in a few minutes: SFT and GRPO steps of the `paper-138m` preset in bf16 on the first CUDA
# device, our sampler on that device at the sampler benchmark's shapes (beside `model.generate`), a
# 2-step FSDP run through `accelerate launch` with training/configs/accelerate/fsdp.yaml, and
# benchmarks/sampler.py; writes benchmarks/results/gpu.json (device, dtype, seconds/step, tokens/s, peak
# memory). Run it from anywhere on a machine with a GPU:
#
#   bash scripts/gpu_check.sh                       # -> benchmarks/results/gpu.json
#   bash scripts/gpu_check.sh --cpu                 # tiny preset, fp32, CUDA hidden: the same code paths on CPU
#   GPU_CHECK_CPU=1 bash scripts/gpu_check.sh --out /tmp/check.json
#
# --cpu (or GPU_CHECK_CPU=1) runs the tiny settings on the CPU in well under a minute and writes
# benchmarks/results/gpu_check_cpu.json unless --out is given; the test suite runs it this way
# (tests/rl/test_gpu_check.py). Without --cpu and without a CUDA device it stops with status 3
# rather than write CPU figures into gpu.json. Any failed stage makes the exit status 1; the JSON is
# written either way, with the error of each failed stage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=gpu
[[ "${GPU_CHECK_CPU:-0}" == "1" ]] && MODE=cpu
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu) MODE=cpu; shift ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "unknown argument: $1 (use --cpu, --out FILE)" >&2; exit 2 ;;
  esac
done
if [[ -z "$OUT" ]]; then
  if [[ "$MODE" == cpu ]]; then OUT="$REPO/benchmarks/results/gpu_check_cpu.json"; else OUT="$REPO/benchmarks/results/gpu.json"; fi
fi
if [[ "$MODE" == cpu ]]; then
  export CUDA_VISIBLE_DEVICES=""  # the CPU path, even on a GPU machine
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$REPO"

GPU_CHECK_MODE="$MODE" GPU_CHECK_OUT="$OUT" GPU_CHECK_WORK="$WORK" python - <<'PY'
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import traceback

import torch

from rlvr_sim.config import load_config
from rlvr_sim.models.lean_decode import lean_decode
from rlvr_sim.models.lm import build_model
from rlvr_sim.rl.sampler import sample
from rlvr_sim.rl.trainer import Trainer, batch_indices

mode, out_path, work = os.environ["GPU_CHECK_MODE"], os.environ["GPU_CHECK_OUT"], os.environ["GPU_CHECK_WORK"]
cpu = mode == "cpu"
if not cpu and not torch.cuda.is_available():
    print("gpu_check: no CUDA device visible; run with --cpu for the CPU path (nothing written)", file=sys.stderr)
    sys.exit(3)
device = torch.device("cpu" if cpu else "cuda")
if cpu:
    torch.set_num_threads(1)  # shared CI cores: one thread avoids OpenMP spinning against other jobs

# --- settings of each mode ------------------------------------------------------------------------------
if cpu:
    MODEL = {"preset": "tiny-5m", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 2, "max_positions": 64}
    PRECISION = "no"  # bf16 autocast is ~30x slower on these CPUs; the bf16 path is exercised by the tests
    TASK_ARGS = {"digits": 2, "train_size": 200, "test_size": 20}
    SFT = dict(steps=3, batch_size=8, micro_batch_size=8)
    GRPO = dict(steps=3, batch_size=4, micro_batch_size=4, group_size=4)
    SAMPLER_SHAPES = [("trl_default_like", 2, 3, 12, 8), ("world_model_like", 2, 4, 40, 8)]
    SAMPLER_REPEATS = 2
else:
    MODEL = {"preset": "paper-138m", "max_positions": 512}
    PRECISION = "bf16"
    TASK_ARGS = {"digits": 8, "train_size": 20000, "test_size": 200}
    SFT = dict(steps=30, batch_size=256, micro_batch_size=256)
    GRPO = dict(steps=10, batch_size=64, micro_batch_size=64, group_size=8)
    SAMPLER_SHAPES = None  # benchmarks/sampler.py's FULL_SHAPES
    SAMPLER_REPEATS = 5
DTYPE = {"no": torch.float32, "bf16": torch.bfloat16}[PRECISION]

report = {
    "mode": "gpu" if not cpu else "cpu-tiny (not GPU figures: the code path only)",
    "device": torch.cuda.get_device_name(0) if not cpu else f"cpu ({platform.processor() or platform.machine()}, "
                                                            f"{torch.get_num_threads()} threads)",
    "dtype": {"no": "fp32", "bf16": "bf16 autocast (fp32 weights and optimizer)"}[PRECISION],
    "torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
    "model": MODEL, "task": "addition", "task_args": TASK_ARGS,
    "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "command": "bash scripts/gpu_check.sh" + (" --cpu" if cpu else ""),
    "errors": {},
}


def peak_reset() -> None:
    if not cpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak() -> dict:
    if cpu:  # Linux reports kilobytes; the whole process's high-water mark, not one stage's
        return {"peak_process_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    torch.cuda.synchronize()
    return {"peak_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_memory_reserved_bytes": torch.cuda.max_memory_reserved()}


def stage(name):
    def wrap(fn):
        start = time.perf_counter()
        try:
            report[name] = fn()
        except Exception as err:  # noqa: BLE001 - record and go on to the next stage
            report["errors"][name] = f"{type(err).__name__}: {err}"
            traceback.print_exc()
        print(f"gpu_check: {name} {'failed' if name in report['errors'] else 'done'} "
              f"in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        return fn
    return wrap


def train(mode_name: str, settings: dict, model: dict, out: str | None = None) -> tuple[Trainer, list[dict]]:
    config = load_config(None, [], task="addition", task_args=TASK_ARGS, model=model, lr=1e-4,
                         mixed_precision=PRECISION, eval_examples=0, progress=False,
                         output_dir=os.path.join(work, out or mode_name), **settings)
    trainer = Trainer(config, mode_name, command=report["command"])
    if trainer.device.type != device.type:
        raise RuntimeError(f"trainer picked {trainer.device}, expected {device}")
    peak_reset()
    history = trainer.run()["history"]
    return trainer, history


def step_tokens(trainer: Trainer, step: int, batch_size: int) -> int:
    """Prompt + answer tokens of one SFT step's batch (what the forward and backward process)."""
    examples = trainer.train_examples
    return sum(len(examples[i].prompt_ids) + len(examples[i].answer_ids)
               for i in batch_indices(len(examples), batch_size, step, trainer.config.seed))


def timing(history: list[dict]) -> list[float]:
    times = [h["seconds"] for h in history]
    return times[1:] if len(times) > 1 else times  # the first step pays one-time set-up (kernels, caches)


@stage("sft")
def _sft():
    trainer, history = train("sft", SFT, dict(MODEL))
    times = timing(history)
    per_step = statistics.median(times)
    tokens = statistics.mean(step_tokens(trainer, h["step"] - 1, SFT["batch_size"]) for h in history[-len(times):])
    loss_tokens = statistics.mean(h["tokens"] for h in history[-len(times):])
    return {"steps": len(history), "timed_steps": len(times), **SFT,
            "parameters": sum(p.numel() for p in trainer.model.parameters()),
            "seconds_per_step": per_step, "tokens_per_second": tokens / per_step,
            "loss_tokens_per_second": loss_tokens / per_step,
            "loss_first": history[0]["loss"], "loss_last": history[-1]["loss"],
            "losses": [h["loss"] for h in history], **peak()}


@stage("grpo")
def _grpo():
    start = os.path.join(work, "sft", "final")
    model = {"name_or_path": start} if os.path.isdir(start) else dict(MODEL)
    trainer, history = train("grpo", GRPO, model)
    times = timing(history)
    per_step = statistics.median(times)
    rows = GRPO["batch_size"] * GRPO["group_size"]
    generated = statistics.mean(h["response_tokens"] * rows for h in history[-len(times):])
    return {"steps": len(history), "timed_steps": len(times), **GRPO, "initial_model": model,
            "seconds_per_step": per_step, "generated_tokens_per_second": generated / per_step,
            "mean_response_tokens": statistics.mean(h["response_tokens"] for h in history),
            "reward_mean": statistics.mean(h["reward"] for h in history), **peak()}


@stage("sft_gradient_checkpointing")
def _sft_checkpointing():
    """The SFT stage again with gradient checkpointing, fewer steps: the memory it saves, the time it costs,
    and the same losses (same seed, same batches)."""
    settings = dict(SFT, steps=min(SFT["steps"], 10), gradient_checkpointing=True)
    trainer, history = train("sft", settings, dict(MODEL), out="sft_checkpointing")
    times = timing(history)
    plain = report.get("sft", {}).get("losses", [])
    losses = [h["loss"] for h in history]
    return {"steps": len(history), "seconds_per_step": statistics.median(times),
            "losses": losses, "max_abs_loss_difference_vs_sft": max(
                (abs(a - b) for a, b in zip(losses, plain)), default=None), **peak()}


@stage("sampler_exactness_on_device")
def _sampler_exactness():
    """On the device, fp32 and in the run's precision: the sampler's log-probs of what it sampled (rows of
    different lengths: stop tokens, left-padded prompts of unequal length, groups) against a plain
    teacher-forced forward without a cache. The sampler's guarantee is exact log-probs."""
    from rlvr_sim.rl.losses import completion_logprobs
    from rlvr_sim.rl.sampler import left_pad
    from rlvr_sim.rl.grpo import uncached_completion_logprobs

    vocab = 256 if cpu else 2048
    settings = {k: v for k, v in MODEL.items() if k not in ("preset", "max_positions")}
    torch.manual_seed(0)
    model = build_model(MODEL["preset"], vocab_size=vocab, max_positions=256, **settings).to(device).eval()
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, vocab, (int(n),), generator=gen).tolist() for n in (17, 5, 40, 23)]
    stops = tuple(range(3, 3 + vocab // 16))  # ~6% of the vocabulary stops a row: unequal lengths
    rows = {}
    for label, autocast in [("fp32", None)] + ([(PRECISION, DTYPE)] if PRECISION != "no" else []):
        context = torch.autocast(device.type, dtype=autocast) if autocast is not None else \
            torch.autocast(device.type, enabled=False)
        with torch.no_grad(), context:
            out = sample(model, prompts, group_size=4, max_new_tokens=48, temperature=1.0, stop_token_ids=stops,
                         pad_token_id=0, seed=7)
            pid, pmask = left_pad(prompts, 0)
            pid, pmask = pid.to(device), pmask.to(device)
            tokens, attention = out.tokens.to(device), out.attention_mask.to(device)
            plain = uncached_completion_logprobs(model, pid, pmask, tokens, attention, 4)
            cached = completion_logprobs(model, pid, pmask, tokens, attention, 4)
        mask = out.loss_mask.to(device)
        ours = out.logprobs.to(device)
        rows[label] = {"rows": int(mask.shape[0]), "sampled_tokens": int(mask.sum()),
                       "distinct_lengths": len(set(out.lengths.tolist())),
                       "max_abs_diff_sampler_vs_uncached": float(((ours.float() - plain.float()).abs() * mask).max()),
                       "max_abs_diff_shared_prefill_vs_uncached":
                           float(((cached.float() - plain.float()).abs() * mask).max())}
    if rows["fp32"]["max_abs_diff_sampler_vs_uncached"] > 1e-3:
        raise RuntimeError(f"sampler log-probs differ from a plain forward in fp32: {rows['fp32']}")
    return rows


@stage("sampler_on_device")
def _sampler():
    """Our sampler and `model.generate` on the check's device, at benchmarks/sampler.py's shapes: equal
    work (temperature 1, no stop token, every row generates new_tokens), medians of alternating repeats."""
    sys.path.insert(0, os.getcwd())
    from benchmarks import sampler as bench

    shapes = SAMPLER_SHAPES or bench.FULL_SHAPES
    vocab = 256 if cpu else 2048
    max_len = max(p + n for *_, p, n in shapes)
    settings = {k: v for k, v in MODEL.items() if k not in ("preset", "max_positions")}
    torch.manual_seed(0)
    model = build_model(MODEL["preset"], vocab_size=vocab, max_positions=max(max_len, 64), **settings)
    model = model.to(device).eval()
    autocast = torch.autocast(device.type, dtype=DTYPE) if PRECISION != "no" else None
    results = []
    peak_reset()
    for name, n_prompts, group, prompt_tokens, new_tokens in shapes:
        prompts = bench.random_prompts(n_prompts, prompt_tokens, vocab, 0)
        ids = torch.tensor(prompts, device=device).repeat_interleave(group, 0)
        expected = n_prompts * group * new_tokens

        def ours():
            out = sample(model, prompts, group_size=group, max_new_tokens=new_tokens, temperature=1.0,
                         stop_token_ids=(), pad_token_id=0, seed=0)
            return int(out.loss_mask.sum())

        def generate():
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=True, temperature=1.0,
                                 top_k=0, top_p=1.0, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                 eos_token_id=None, pad_token_id=0)
            return int(out[:, ids.shape[1]:].numel())

        def ours_transformers_forward():  # ours with the lean decode step off: the same samples
            with lean_decode(False):
                return ours()

        runners = [("ours", ours), ("generate", generate), ("ours_transformers_forward", ours_transformers_forward)]
        seconds = {label: [] for label, _ in runners}
        with torch.no_grad(), (autocast or torch.autocast(device.type, enabled=False)):
            for _, run in runners:  # warm-up
                run()
            for r in range(SAMPLER_REPEATS):
                for label, run in (runners if r % 2 == 0 else runners[::-1]):
                    if not cpu:
                        torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    produced = run()
                    if not cpu:
                        torch.cuda.synchronize()
                    seconds[label].append(time.perf_counter() - t0)
                    if produced != expected:
                        raise RuntimeError(f"{label} generated {produced} tokens, expected {expected}")
        row = {"shape": name, "prompts": n_prompts, "group_size": group, "prompt_tokens": prompt_tokens,
               "new_tokens": new_tokens, "generated_tokens": expected}
        for label, values in seconds.items():
            row[label] = {"median_seconds": statistics.median(values),
                          "tokens_per_second": expected / statistics.median(values), "seconds": values}
        row["speedup_ours_over_generate"] = row["generate"]["median_seconds"] / row["ours"]["median_seconds"]
        row["speedup_lean_decode"] = row["ours_transformers_forward"]["median_seconds"] / row["ours"]["median_seconds"]
        results.append(row)
    return {"device": str(next(model.parameters()).device), "vocab_size": vocab,
            "parameters": sum(p.numel() for p in model.parameters()), "results": results, **peak()}


@stage("sampler_benchmark")
def _sampler_benchmark():
    """benchmarks/sampler.py as its owner ships it (on a device only if it offers --device)."""
    path = os.path.join(work, "sampler_benchmark.json")
    help_text = subprocess.run([sys.executable, "benchmarks/sampler.py", "--help"], capture_output=True,
                               text=True, check=True).stdout
    if cpu:
        args = ["--quick"]
    elif "--device" in help_text:
        args = ["--device", "cuda", "--preset", MODEL["preset"]]
    else:
        return {"skipped": "benchmarks/sampler.py has no --device option, so it would time the CPU; "
                           "see sampler_on_device for the same shapes on the GPU"}
    command = [sys.executable, "benchmarks/sampler.py", *args, "--out", path]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=900)
    with open(path) as f:
        return {"command": " ".join(["python", *command[1:-2]]), "result": json.load(f)}


@stage("fsdp_launch")
def _fsdp():
    """Two SFT steps through `accelerate launch` with the shipped FSDP config (2 gloo processes on CPU,
    every visible GPU otherwise), in the run's precision."""
    n_proc = 2 if cpu else max(1, torch.cuda.device_count())
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if cpu:
        env["ACCELERATE_USE_CPU"] = "1"  # `--cpu` would start one process (see README)
    model_args = [f"model.{k}={v}" for k, v in MODEL.items()]
    command = ["accelerate", "launch", "--config_file", "training/configs/accelerate/fsdp.yaml",
               "--num_processes", str(n_proc), "--mixed_precision", "bf16" if PRECISION == "bf16" else "no",
               "--main_process_port", "29533", "training/sft.py", "--task", "addition",
               f"task_args.digits={TASK_ARGS['digits']}", *model_args, "steps=2",
               f"batch_size={2 * n_proc}", f"micro_batch_size=2", "eval_examples=0", "progress=false",
               f"output_dir={os.path.join(work, 'fsdp')}"]
    t0 = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr[-1500:]}")
    metrics = [json.loads(line) for line in open(os.path.join(work, "fsdp", "metrics.jsonl"))]
    steps = [m for m in metrics if "step" in m]
    return {"command": " ".join(command), "processes": n_proc, "wall_seconds": time.perf_counter() - t0,
            "seconds_per_step": [m["seconds"] for m in steps], "loss": [m["loss"] for m in steps],
            "final_checkpoint": os.path.isfile(os.path.join(work, "fsdp", "final", "model.safetensors"))}


report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
with open(out_path, "w") as f:
    json.dump(report, f, indent=2, sort_keys=False)
    f.write("\n")
print(f"gpu_check: wrote {out_path}" + (f" with failed stages {sorted(report['errors'])}" if report["errors"] else ""),
      file=sys.stderr)
sys.exit(1 if report["errors"] else 0)
PY
