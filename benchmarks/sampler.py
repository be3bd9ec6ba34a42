"""Generated tokens per second of our group sampler (`rlvr_sim.rl.sampler.sample`) against Hugging Face
`model.generate` on the same tiny Llama, the same prompts and the same token budget, in two variants:

- `fixed_length`: no stop token on either side (`generate` with `min_new_tokens` = `max_new_tokens`), so
  both produce exactly prompts x group x new_tokens tokens: equal work, seconds and tokens/s both compare;
- `natural_stop`: the same stop-token set on both sides (ids 1..k, k sized so that a near-uniform model
  stops after about half the budget); each side's tokens are counted through each row's stop token and
  tokens/s is compared (the two draw different samples, so their lengths differ a little).

Both sample at temperature 1 with no top-k/top-p. `generate` gets every prompt repeated `group` times
(what TRL's GRPOTrainer does); ours prefills each prompt once and copies its cache to its group. The two
are timed alternately in one process (after a warm-up) and the medians are reported, beside a third
runner, ours with its decode steps through transformers' own forward (`ours_transformers_forward`, the
lean decode step turned off): the same samples, so that ratio is the lean step's saving. `--profile` also
runs ours once per shape under `torch.profiler` and reports the share of its op self-time spent in
matrix multiplies and attention (the model's own work) and the top ops.

    python benchmarks/sampler.py --out benchmarks/results/sampler.json
    python benchmarks/sampler.py --quick
"""

from __future__ import annotations

import argparse
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from rlvr_sim.models.lean_decode import lean_decode
from rlvr_sim.models.lm import build_model
from rlvr_sim.reporting import emit_json
from rlvr_sim.rl.sampler import sample

# (name, prompts, group size, prompt tokens, new tokens)
FULL_SHAPES: list[tuple[str, int, int, int, int]] = [
    ("trl_default_like", 8, 5, 12, 64),
    ("world_model_like_g16", 8, 16, 300, 100),
    ("world_model_like_g5", 8, 5, 300, 100),
]
QUICK_SHAPES: list[tuple[str, int, int, int, int]] = [
    ("trl_default_like", 2, 3, 12, 8),
    ("world_model_like", 2, 4, 40, 8),
]


def random_prompts(n_prompts: int, prompt_tokens: int, vocab_size: int, seed: int) -> list[list[int]]:
    """Prompts of uniform random ids, avoiding id 0 (the pad id)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(1, vocab_size, (n_prompts, prompt_tokens), generator=generator).tolist()


VARIANTS = ("fixed_length", "natural_stop")
MATMUL_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
              "aten::_addmm_activation", "aten::dot", "aten::mv"}


def is_attention_op(name: str) -> bool:
    return "scaled_dot_product" in name or "flash_attention" in name or "efficient_attention" in name


def stop_ids(vocab_size: int, new_tokens: int) -> list[int]:
    """Ids 1..k with k / vocab ~ 2 / new_tokens: a near-uniform model stops after about half the budget."""
    return list(range(1, 1 + max(1, round(2 * vocab_size / new_tokens))))


def ours_runner(model: torch.nn.Module, prompts: list[list[int]], group: int, new_tokens: int,
                stop: list[int] | tuple[int, ...] = ()) -> Callable[[], int]:
    """A closure sampling with our sampler; returns the number of generated tokens (through each stop)."""

    def run() -> int:
        out = sample(model, prompts, group_size=group, max_new_tokens=new_tokens, temperature=1.0,
                     stop_token_ids=stop, pad_token_id=0, seed=0)
        return int(out.loss_mask.sum())

    return run


def generate_runner(model: torch.nn.Module, prompts: list[list[int]], group: int, new_tokens: int,
                    stop: list[int] | tuple[int, ...] = ()) -> Callable[[], int]:
    """A closure sampling with `model.generate`, prompts repeated `group` times; returns the generated
    tokens (all of them without stop ids, else each row's tokens through its first stop id)."""
    ids = torch.tensor(prompts, dtype=torch.long).repeat_interleave(group, 0)
    mask = torch.ones_like(ids)
    stops = torch.tensor(list(stop), dtype=torch.long)

    def run() -> int:
        torch.manual_seed(0)
        length = {"min_new_tokens": new_tokens, "eos_token_id": None} if not stop else {"eos_token_id": list(stop)}
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, temperature=1.0, top_k=0,
                                 top_p=1.0, max_new_tokens=new_tokens, pad_token_id=0, **length)
        new = out[:, ids.shape[1]:]
        if not stop:
            return int(new.numel())
        hit = torch.isin(new, stops)
        first = torch.where(hit.any(1), hit.long().argmax(1) + 1, torch.full((len(new),), new.shape[1]))
        return int(first.sum())

    return run


def time_pair(runners: dict[str, Callable[[], int]], expected_tokens: int | None, warmup: int,
              repeats: int) -> dict[str, Any]:
    """Time the runners alternately (order flipped every repeat); medians of seconds, tokens/s.

    `expected_tokens`: every run must produce exactly this many (fixed length); None: each side's count
    must only repeat from run to run (natural stop, seeded)."""
    for _ in range(warmup):
        for run in runners.values():
            run()
    seconds: dict[str, list[float]] = {name: [] for name in runners}
    produced: dict[str, list[int]] = {name: [] for name in runners}
    names = list(runners)
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            produced[name].append(runners[name]())
            seconds[name].append(time.perf_counter() - start)
            if expected_tokens is not None and produced[name][-1] != expected_tokens:
                raise RuntimeError(f"{name} generated {produced[name][-1]} tokens, expected {expected_tokens}")
    result: dict[str, Any] = {}
    for name, values in seconds.items():
        if len(set(produced[name])) != 1:
            raise RuntimeError(f"{name} generated different token counts across seeded repeats: {produced[name]}")
        median = statistics.median(values)
        result[name] = {"generated_tokens": produced[name][0], "median_seconds": median,
                        "tokens_per_second": produced[name][0] / median, "seconds": values}
    result["speedup_ours_over_generate"] = result["ours"]["tokens_per_second"] / result["generate"]["tokens_per_second"]
    result["seconds_ratio_generate_over_ours"] = result["generate"]["median_seconds"] / result["ours"]["median_seconds"]
    if "ours_transformers_forward" in result:
        result["speedup_lean_decode"] = (result["ours"]["tokens_per_second"]
                                         / result["ours_transformers_forward"]["tokens_per_second"])
    return result


def profile_ours(run: Callable[[], int], top: int = 8, runs: int = 2) -> dict[str, Any]:
    """Op self-time of a run of ours under torch.profiler: shares of matrix multiplies and attention.

    The profiler's self-times are wall-clock, so on a shared machine a run descheduled mid-op charges the
    wait to that op: of `runs` profiled runs the one with the least total op time is reported."""
    from torch.profiler import ProfilerActivity, profile

    best: list[tuple[str, float]] | None = None
    for _ in range(runs):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            run()
        events = [(e.key, e.self_cpu_time_total) for e in prof.key_averages()]
        if best is None or sum(t for _, t in events) < sum(t for _, t in best):
            best = events
    events = best
    total = sum(t for _, t in events) or 1.0
    matmul = sum(t for k, t in events if k in MATMUL_OPS)
    attention = sum(t for k, t in events if is_attention_op(k))
    ranked = sorted(events, key=lambda e: -e[1])[:top]
    return {"op_self_seconds": total / 1e6, "matmul_share": matmul / total, "attention_share": attention / total,
            "matmul_plus_attention_share": (matmul + attention) / total,
            "top_ops": {k: round(t / total, 4) for k, t in ranked}}


def run_benchmark(shapes: list[tuple[str, int, int, int, int]], preset: str, vocab_size: int, warmup: int,
                  repeats: int, seed: int, model_overrides: dict[str, Any] | None = None,
                  variants: tuple[str, ...] = VARIANTS, profile: bool = False) -> dict[str, Any]:
    """Build one model and time both samplers at every shape and variant."""
    torch.manual_seed(seed)
    max_len = max(p + n for _, _, _, p, n in shapes)
    model = build_model(preset, vocab_size=vocab_size, max_positions=max(max_len, 64), **(model_overrides or {}))
    model.eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    results = []
    for name, n_prompts, group, prompt_tokens, new_tokens in shapes:
        prompts = random_prompts(n_prompts, prompt_tokens, vocab_size, seed)
        for variant in variants:
            stop = stop_ids(vocab_size, new_tokens) if variant == "natural_stop" else []
            runners = {"ours": ours_runner(model, prompts, group, new_tokens, stop),
                       "generate": generate_runner(model, prompts, group, new_tokens, stop),
                       # the same samples with the decode steps through transformers' forward (lean step off)
                       "ours_transformers_forward": lean_decode(False)(ours_runner(model, prompts, group, new_tokens,
                                                                                   stop))}
            budget = n_prompts * group * new_tokens
            timing = time_pair(runners, budget if variant == "fixed_length" else None, warmup, repeats)
            row = {"shape": name, "variant": variant, "prompts": n_prompts, "group_size": group,
                   "prompt_tokens": prompt_tokens, "new_tokens": new_tokens, "token_budget": budget,
                   "stop_ids": len(stop), **timing}
            if profile and variant == "fixed_length":
                row["profile_ours"] = profile_ours(runners["ours"])
            results.append(row)
    return {
        "model": {"preset": preset, "vocab_size": vocab_size, "parameters": sum(p.numel() for p in model.parameters()),
                  **(model_overrides or {})},
        "sampling": "temperature 1.0, no top-k/top-p, fp32, batch of all prompt x group rows; fixed_length: no stop "
                    "token on either side; natural_stop: stop ids 1..k on both sides",
        "notes": [
            "speedup_ours_over_generate: tokens/s ours / tokens/s generate (equal tokens in fixed_length)",
            "speedup_lean_decode: tokens/s ours / tokens/s ours_transformers_forward (ours with its decode steps "
            "through transformers' Llama forward instead of rlvr_sim.models.lean_decode; the same samples)",
            "profile_ours: op self-time shares of a fixed-length run of ours under torch.profiler (least "
            "disturbed of 2) "
            "(matrix multiplies: aten::mm/addmm/bmm/linear/matmul self time; attention: scaled_dot_product ops)",
        ],
        "warmup": warmup, "repeats": repeats, "seed": seed,
        "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "platform": platform.platform(),
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="tiny-5m")
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument("--prompts", type=int, help="override the number of prompts of every shape")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the machine is shared)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny model and shapes: a few seconds (smoke test)")
    parser.add_argument("--variant", choices=VARIANTS, help="run one variant (default both)")
    parser.add_argument("--only", help="run only the shape of this name")
    parser.add_argument("--no-profile", action="store_true", help="skip the torch.profiler run of ours")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    shapes = QUICK_SHAPES if args.quick else FULL_SHAPES
    if args.prompts:
        shapes = [(name, args.prompts, g, p, n) for name, _, g, p, n in shapes]
    if args.only:
        shapes = [s for s in shapes if s[0] == args.only]
    overrides = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2} \
        if args.quick else None
    report = {"command": "python " + shlex.join(["benchmarks/sampler.py", *(sys.argv[1:] if argv is None else argv)])}
    report.update(run_benchmark(shapes, args.preset, 256 if args.quick else args.vocab_size,
                                1 if args.quick else args.warmup, 2 if args.quick else args.repeats, args.seed,
                                overrides, (args.variant,) if args.variant else VARIANTS, not args.no_profile))
    emit_json(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
