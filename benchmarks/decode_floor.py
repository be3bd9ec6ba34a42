"""How far a decode step is from its arithmetic on this CPU, and what batching can buy: JSON out.

Two measurements on the embedded models, both through the sampler's `DecodeSession` (what the envs,
the evaluations and GRPO's sampling run), side by side in one run:

- batch 1 (the text-game world model, one row, a cache of `--cache` positions): milliseconds per decode
  step with transformers' `LlamaForCausalLM.forward`, with the lean step (`rlvr_sim.models.lean_decode`),
  with the lean step under `torch.compile` (dynamic shapes; its compile time and its largest logit
  difference reported), and the step's matrix multiplies alone (the same weights and shapes: q|k|v, o,
  gate|up, down per layer and the LM head, timed on their own). The last is the floor of a step run op
  by op: what is left above it is per-operation overhead. Also the cost of feeding a chunk of 2, 4 and 8
  tokens in one step relative to one token: what a speculative (draft-and-verify) decoder would pay per
  verification, against the answer tokens it could accept per step (the env benchmarks'
  `prompt_lookup_bound`).
- batch N (the video world model, a cache of `--video-cache` positions): the lean step at 1 and N rows, and
  its matrix multiplies alone at 1 and N rows. The frames per second of N worlds over one world is at
  most N x (step at 1 row) / (step at N rows); with the matrix multiplies compute-bound at N rows, the
  bound `N x step(1) / matmuls(N)` holds however lean the rest gets, and it falls as the 1-row step
  gets faster.

    python benchmarks/decode_floor.py --out benchmarks/results/decode_floor.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from rlvr_sim.models.lean_decode import LeanDecoder, lean_decode
from rlvr_sim.models.lm import load_model
from rlvr_sim.reporting import emit_json, machine_record
from rlvr_sim.resources import asset_path, display_path
from rlvr_sim.rl.sampler import DecodeSession


def session(model: torch.nn.Module, rows: int, cache: int, steps: int) -> DecodeSession:
    """A decoding session of `rows` rows whose cache holds `cache` positions, with room for `steps` more."""
    vocab = model.config.vocab_size
    prompts = [[3 + (7 * i + 11 * r) % (vocab - 3) for i in range(cache)] for r in range(rows)]
    return DecodeSession(model, prompts, seeds=list(range(rows)), reserve_tokens=steps + 8)


def ms_per_step(model: torch.nn.Module, rows: int, cache: int, steps: int, warmup: int = 5,
                wrap: Callable[[Any], Any] | None = None, width: int = 1) -> tuple[float, torch.Tensor]:
    """Milliseconds per decode step feeding `width` tokens per row, and the last logits (`wrap` replaces the
    session's lean step)."""
    decoding = session(model, rows, cache, (steps + warmup) * width)
    if wrap is not None:
        decoding._lean = wrap(decoding._lean)
    ids = torch.full((rows, width), 5)
    for _ in range(warmup):
        decoding.feed(ids)
    start = time.perf_counter()
    for _ in range(steps):
        decoding.feed(ids)
    return (time.perf_counter() - start) / steps * 1e3, decoding.logits


def matmul_ms(model: torch.nn.Module, rows: int, steps: int) -> float:
    """Milliseconds per step of a decode step's matrix multiplies alone (the lean step's fused weights)."""
    decoder = LeanDecoder(model)
    weights = [w for layer in decoder.layers for w in (layer[1], layer[3], layer[6], layer[8])] + [decoder.lm_head]
    inputs = {w.shape[1]: torch.randn(rows, w.shape[1]) for w in weights}
    for _ in range(5):
        for w in weights:
            F.linear(inputs[w.shape[1]], w)
    start = time.perf_counter()
    for _ in range(steps):
        for w in weights:
            F.linear(inputs[w.shape[1]], w)
    return (time.perf_counter() - start) / steps * 1e3


def median_of(rounds: int, measure: Callable[[], float]) -> float:
    return round(statistics.median(measure() for _ in range(rounds)), 4)


def compiled(lean: LeanDecoder) -> Callable[..., torch.Tensor]:
    """The lean step under torch.compile (dynamo caches the graphs by code, so every session shares them)."""
    step = torch.compile(LeanDecoder.__call__, dynamic=True)
    return lambda *args, **kwargs: step(lean, *args, **kwargs)


def compile_measurement(model: torch.nn.Module, cache: int, steps: int, rounds: int) -> dict[str, Any]:
    """The lean step under torch.compile against the eager lean step, alternating rounds; where compiling
    fails (no C++ compiler, an unsupported platform) the error, not a number."""
    try:
        start = time.perf_counter()
        ms_per_step(model, 1, cache, 1, warmup=2, wrap=compiled)  # compiles
        compile_seconds = time.perf_counter() - start
        compiled_ms, eager_ms = [], []
        for _ in range(rounds):
            ms, compiled_logits = ms_per_step(model, 1, cache, steps, wrap=compiled)
            compiled_ms.append(ms)
            ms, eager_logits = ms_per_step(model, 1, cache, steps)
            eager_ms.append(ms)
        return {
            "ms_per_step": round(statistics.median(compiled_ms), 4),
            "lean_eager_ms_per_step_same_rounds": round(statistics.median(eager_ms), 4),
            "speedup_vs_lean": round(statistics.median(e / c for e, c in zip(eager_ms, compiled_ms)), 2),
            "compile_seconds": round(compile_seconds, 1),
            "max_abs_logit_difference": float((compiled_logits - eager_logits).abs().max()),
            "note": "one graph per shape class (1 row / N rows, one token / a forced chunk with a mask): each "
                    "new class compiles again",
        }
    except Exception as exc:  # noqa: BLE001 - any compiler failure is reported, the other figures stand
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}


@torch.no_grad()
def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=str(asset_path("textgame_rlvr_task_specific")))
    parser.add_argument("--video-checkpoint", default=str(asset_path("pusht_pose_base")))
    parser.add_argument("--cache", type=int, default=300, help="cache positions at batch 1 (a text-game prompt)")
    parser.add_argument("--video-cache", type=int, default=40, help="cache positions of the video model's rows")
    parser.add_argument("--rows", type=int, default=16, help="rows of the batched measurement")
    parser.add_argument("--steps", type=int, default=200, help="decode steps per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians reported")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile measurement")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    model = load_model(args.checkpoint)[0].eval()
    steps, cache = args.steps, args.cache
    runs: dict[str, list[float]] = {"transformers_forward": [], "lean": [], "matmuls_only": []}
    for _ in range(args.rounds):  # alternating, so load from other processes hits every variant
        with lean_decode(False):
            runs["transformers_forward"].append(ms_per_step(model, 1, cache, steps)[0])
        runs["lean"].append(ms_per_step(model, 1, cache, steps)[0])
        runs["matmuls_only"].append(matmul_ms(model, 1, steps))
        for width in (2, 4, 8):
            runs.setdefault(f"lean_chunk_of_{width}", []).append(ms_per_step(model, 1, cache, steps, width=width)[0])
    batch1 = {name: round(statistics.median(values), 4) for name, values in runs.items()}
    batch1["chunk_cost_vs_one_token"] = {width: round(batch1[f"lean_chunk_of_{width}"] / batch1["lean"], 2)
                                         for width in (2, 4, 8)}
    batch1["matmul_share_of_lean_step"] = round(batch1["matmuls_only"] / batch1["lean"], 3)
    batch1["lean_vs_transformers_forward"] = round(batch1["transformers_forward"] / batch1["lean"], 2)
    if not args.no_compile:
        batch1["torch_compile"] = compile_measurement(model, cache, steps, args.rounds)

    video = load_model(args.video_checkpoint)[0].eval()
    n = args.rows
    scaling_runs: dict[str, list[float]] = {"lean_1": [], f"lean_{n}": [], "matmuls_1": [], f"matmuls_{n}": []}
    for _ in range(args.rounds):
        scaling_runs["lean_1"].append(ms_per_step(video, 1, args.video_cache, steps)[0])
        scaling_runs[f"lean_{n}"].append(ms_per_step(video, n, args.video_cache, steps)[0])
        scaling_runs["matmuls_1"].append(matmul_ms(video, 1, steps))
        scaling_runs[f"matmuls_{n}"].append(matmul_ms(video, n, steps))
    scaling: dict[str, Any] = {k: round(statistics.median(v), 4) for k, v in scaling_runs.items()}
    scaling[f"rows_per_second_{n}_over_1"] = round(n * scaling["lean_1"] / scaling[f"lean_{n}"], 2)
    scaling[f"bound_{n}_over_1_if_only_matmuls_remained_at_{n}"] = round(
        n * scaling["lean_1"] / scaling[f"matmuls_{n}"], 2)
    scaling[f"matmul_flops_rate_gflops_at_{n}"] = round(
        2 * sum(p.numel() for p in video.parameters() if p.dim() == 2) * n / scaling[f"matmuls_{n}"] / 1e6, 1)

    result = {
        "benchmark": "decode_floor",
        "command": "python benchmarks/decode_floor.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "checkpoint": display_path(args.checkpoint),
        "video_checkpoint": display_path(args.video_checkpoint),
        "torch_threads": args.threads,
        "batch1_decode_step_ms": {"cache_positions": cache, **batch1},
        "batch_scaling_decode_step_ms": {"cache_positions": args.video_cache, "rows": n, **scaling},
        "machine": machine_record("2 shared cores: ratios are meaningful, absolute times are not"),
    }
    emit_json(result, args.out)
    return result


if __name__ == "__main__":
    main()
