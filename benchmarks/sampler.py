"""Generated tokens per second of our group sampler (`rlvr_sim.rl.sampler.sample`) against Hugging Face
`model.generate` on the same tiny Llama, the same prompts and the same number of new tokens.

Both sample at temperature 1 with no top-k/top-p and no stop token, so both produce exactly
prompts x group x new_tokens tokens. `generate` gets every prompt repeated `group` times (what TRL's
GRPOTrainer does); ours prefills each prompt once and shares the cache across its group. The two are timed
alternately in one process (after a warm-up), and the medians are reported.

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


def ours_runner(model: torch.nn.Module, prompts: list[list[int]], group: int, new_tokens: int) -> Callable[[], int]:
    """A closure sampling with our sampler; returns the number of generated tokens."""

    def run() -> int:
        out = sample(model, prompts, group_size=group, max_new_tokens=new_tokens, temperature=1.0,
                     stop_token_ids=(), pad_token_id=0, seed=0)
        return int(out.loss_mask.sum())

    return run


def generate_runner(model: torch.nn.Module, prompts: list[list[int]], group: int,
                    new_tokens: int) -> Callable[[], int]:
    """A closure sampling with `model.generate`, prompts repeated `group` times; returns generated tokens."""
    ids = torch.tensor(prompts, dtype=torch.long).repeat_interleave(group, 0)
    mask = torch.ones_like(ids)

    def run() -> int:
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, temperature=1.0, top_k=0,
                                 top_p=1.0, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                 eos_token_id=None, pad_token_id=0)
        return int(out[:, ids.shape[1]:].numel())

    return run


def time_pair(runners: dict[str, Callable[[], int]], expected_tokens: int, warmup: int,
              repeats: int) -> dict[str, Any]:
    """Time the runners alternately (order flipped every repeat); medians of tokens/s."""
    for _ in range(warmup):
        for run in runners.values():
            run()
    seconds: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            produced = runners[name]()
            seconds[name].append(time.perf_counter() - start)
            if produced != expected_tokens:
                raise RuntimeError(f"{name} generated {produced} tokens, expected {expected_tokens}")
    result: dict[str, Any] = {}
    for name, values in seconds.items():
        median = statistics.median(values)
        result[name] = {"median_seconds": median, "tokens_per_second": expected_tokens / median,
                        "seconds": values}
    result["speedup_ours_over_generate"] = result["generate"]["median_seconds"] / result["ours"]["median_seconds"]
    return result


def run_benchmark(shapes: list[tuple[str, int, int, int, int]], preset: str, vocab_size: int, warmup: int,
                  repeats: int, seed: int, model_overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build one model and time both samplers at every shape."""
    torch.manual_seed(seed)
    max_len = max(p + n for _, _, _, p, n in shapes)
    model = build_model(preset, vocab_size=vocab_size, max_positions=max(max_len, 64), **(model_overrides or {}))
    model.eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    results = []
    for name, n_prompts, group, prompt_tokens, new_tokens in shapes:
        prompts = random_prompts(n_prompts, prompt_tokens, vocab_size, seed)
        runners = {"ours": ours_runner(model, prompts, group, new_tokens),
                   "generate": generate_runner(model, prompts, group, new_tokens)}
        timing = time_pair(runners, n_prompts * group * new_tokens, warmup, repeats)
        results.append({"shape": name, "prompts": n_prompts, "group_size": group, "prompt_tokens": prompt_tokens,
                        "new_tokens": new_tokens, "generated_tokens": n_prompts * group * new_tokens, **timing})
    return {
        "model": {"preset": preset, "vocab_size": vocab_size, "parameters": sum(p.numel() for p in model.parameters()),
                  **(model_overrides or {})},
        "sampling": "temperature 1.0, no top-k/top-p, no stop token, fp32, batch of all prompt x group rows",
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
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    shapes = QUICK_SHAPES if args.quick else FULL_SHAPES
    if args.prompts:
        shapes = [(name, args.prompts, g, p, n) for name, _, g, p, n in shapes]
    overrides = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2} \
        if args.quick else None
    report = {"command": "python " + shlex.join(["benchmarks/sampler.py", *(sys.argv[1:] if argv is None else argv)])}
    report.update(run_benchmark(shapes, args.preset, 256 if args.quick else args.vocab_size,
                                1 if args.quick else args.warmup, 2 if args.quick else args.repeats, args.seed,
                                overrides))
    emit_json(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
