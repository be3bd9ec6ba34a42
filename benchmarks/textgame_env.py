"""Steps per second of RLVRWorld-TextGame-v0, new env path vs the old one, side by side in one run.

The old path is the env module as committed at `--baseline-rev` (before the shared LM env base), loaded
from git and run on the same checkpoint, sampler and machine. Both sides do equal work: the same games,
seeds and actions, greedy, with the NEXT_STEP autoreset of a vector env emulated for single envs, and
the run checks that they predict identical text. Rounds alternate old and new so that load from other
processes hits both; the ratios are medians of per-round ratios.

- batch 1: one env, `--steps` steps (old env vs new env);
- batch N: N worlds for `--vec-steps` steps, old = N single old envs in a loop (what a SyncVectorEnv
  does), new = `gym.make_vec(..., num_envs=N)` (one batched generation per step).

    python benchmarks/textgame_env.py --out benchmarks/results/textgame_env.json
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import torch
from rlvr_sim.envs.textgame.env import TextGameEnv
from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModel, TextGameWorldModelEnv
from rlvr_sim.policies.textgame_agents import RandomTextGameAgent

import rlvr_sim  # noqa: F401  (registers the env ids)
from rlvr_sim.models.lean_decode import lean_decode
from rlvr_sim.reporting import emit_json, machine_record
from rlvr_sim.resources import display_path

REPO = Path(__file__).resolve().parents[1]
BASELINE_REV = "a5bb902"  # the last commit before envs/lm_env.py


def baseline_module(relative_path: str, rev: str) -> ModuleType:
    """The module at `relative_path` as committed at `rev`, imported under a private name."""
    source = subprocess.run(["git", "show", f"{rev}:{relative_path}"], cwd=REPO, check=True, capture_output=True,
                            text=True).stdout
    name = f"baseline_{Path(relative_path).stem}_{rev}"
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader=None))
    sys.modules[name] = module  # dataclasses look their module up while the class body runs
    exec(compile(source, f"{rev}:{relative_path}", "exec"), module.__dict__)
    return module


def sampler_state() -> dict[str, Any]:
    """Which sampler both sides ran on: HEAD, and whether the working tree changes the sampler."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "rlvr_sim/rl/sampler.py"], cwd=REPO).returncode
    return {"head": head.strip(), "sampler_uncommitted_changes": bool(dirty)}


def run_single_envs(envs: list[Any], seed: int, actions: list[list[str]], steps: int,
                    text_key: str) -> tuple[float, list[list[str | None]]]:
    """N single envs stepped in a loop with NEXT_STEP autoreset; (seconds, predicted texts per env)."""
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    done = [False] * len(envs)
    texts: list[list[str | None]] = [[] for _ in envs]
    start = time.perf_counter()
    for t in range(steps):
        for i, env in enumerate(envs):
            if done[i]:
                env.reset()
                done[i] = False
                texts[i].append(None)
                continue
            _, _, terminated, truncated, info = env.step(actions[i][t % len(actions[i])])
            texts[i].append(info.get(text_key))
            done[i] = terminated or truncated
    return time.perf_counter() - start, texts


def run_vector_env(vec: Any, seed: int, actions: list[list[str]], steps: int,
                   text_key: str) -> tuple[float, list[list[str | None]]]:
    """The vector env over the same seeds and actions; (seconds, predicted texts per env)."""
    vec.reset(seed=seed)
    texts: list[list[str | None]] = [[] for _ in range(vec.num_envs)]
    start = time.perf_counter()
    for t in range(steps):
        _, _, _, _, infos = vec.step([a[t % len(a)] for a in actions])
        for i in range(vec.num_envs):
            present = text_key in infos and infos[f"_{text_key}"][i]
            texts[i].append(infos[text_key][i] if present else None)
    return time.perf_counter() - start, texts


def count_predictions(texts: list[list[str | None]]) -> int:
    return sum(t is not None for row in texts for t in row)


def side_by_side(cases: dict[str, tuple[Callable[[], tuple[float, Any]], Callable[[], tuple[float, Any]]]],
                 rounds: int) -> dict[str, Any]:
    """Run every case's (old, new) pair `rounds` times, alternating which goes first; per case the
    seconds of each round, the medians, the median per-round ratio old/new, and output identity."""
    results: dict[str, Any] = {}
    for name, (old, new) in cases.items():
        seconds: dict[str, list[float]] = {"old": [], "new": []}
        identical, work = True, 0
        for r in range(rounds):
            outputs = {}
            for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
                elapsed, outputs[side] = (old if side == "old" else new)()
                seconds[side].append(elapsed)
            identical &= outputs["old"] == outputs["new"]
            work = count_predictions(outputs["new"])
        old_s, new_s = seconds["old"], seconds["new"]
        results[name] = {
            "predicted_steps_per_round": work,
            "old_seconds": [round(s, 3) for s in old_s], "new_seconds": [round(s, 3) for s in new_s],
            "old_steps_per_s": round(work / statistics.median(old_s), 3),
            "new_steps_per_s": round(work / statistics.median(new_s), 3),
            "speedup_new_vs_old": round(statistics.median([o / n for o, n in zip(old_s, new_s)]), 2),
            "identical_predictions": identical,
        }
    return results


def headline_figures(results: dict[str, Any], sizes: list[int]) -> dict[str, float]:
    """The figures worth a table, flat: batch-1 rates old and new, and each vector size's rate with its
    ratios to the old batch-1 env and to the old loop of single envs; the largest size also under the
    names `evaluations/report.py` reads (new vector env over new batch 1)."""
    batch1 = results["batch1"]
    figures = {"world_model_env_steps_per_s_batch1_old": batch1["old_steps_per_s"],
               "world_model_env_steps_per_s_batch1": batch1["new_steps_per_s"],
               "batch1_speedup_new_vs_old": batch1["speedup_new_vs_old"]}
    for n in sizes:
        case = results[f"batch{n}"]
        case["new_vs_old_batch1"] = round(case["new_steps_per_s"] / batch1["old_steps_per_s"], 2)
        figures[f"vector_env_steps_per_s_batch{n}"] = case["new_steps_per_s"]
        figures[f"vector_env_batch{n}_vs_old_batch1"] = case["new_vs_old_batch1"]
        figures[f"vector_env_batch{n}_vs_old_loop_of_{n}"] = case["speedup_new_vs_old"]
    largest = max(sizes)
    figures[f"world_model_steps_per_s_batch{largest}"] = results[f"batch{largest}"]["new_steps_per_s"]
    figures["batched_speedup"] = round(results[f"batch{largest}"]["new_steps_per_s"] / batch1["new_steps_per_s"], 2)
    return figures


def lookup_forwards(prompt: list[int], answer: list[int], draft_tokens: int, ngram: int) -> int:
    """Sequential forwards that prompt-lookup speculative decoding with exact greedy verification would
    need for a greedy `answer`: each forward accepts the draft's prefix that equals the answer, plus the
    one token the forward yields itself. The draft continues the latest earlier occurrence of the longest
    (up to `ngram`) suffix of the text so far."""
    seq, forwards, i = list(prompt), 0, 0
    while i < len(answer):
        draft: list[int] = []
        for g in range(min(ngram, len(seq) - 1), 0, -1):
            tail = seq[-g:]
            match = next((j for j in range(len(seq) - g - 1, -1, -1) if seq[j:j + g] == tail), None)
            if match is not None:
                draft = seq[match + g:match + g + draft_tokens]
                break
        accepted = 0
        while accepted < len(draft) and i + accepted < len(answer) and draft[accepted] == answer[i + accepted]:
            accepted += 1
        step = min(accepted + 1, len(answer) - i)
        seq += answer[i:i + step]
        i += step
        forwards += 1
    return forwards


def prompt_lookup_bound(run: Callable[[], Any], draft_tokens: int = 8, ngram: int = 3) -> dict[str, Any]:
    """Run once (untimed) recording every (prompt, greedy answer) the sampler returns; how many answer
    tokens one sequential forward would yield with prompt-lookup speculative decoding (an upper bound
    on its batch-1 speedup, ignoring that a verify forward costs more than a one-token one)."""
    import rlvr_sim.rl.sampler as sampler

    records, real_sample = [], sampler.sample

    def recording_sample(model: Any, prompts: Any, **kwargs: Any) -> Any:
        out = real_sample(model, prompts, **kwargs)
        records.extend(zip((list(p) for p in prompts), out.completions()))
        return out

    sampler.sample = recording_sample
    try:
        run()
    finally:
        sampler.sample = real_sample
    tokens = sum(len(answer) for _, answer in records)
    forwards = sum(lookup_forwards(p, a, draft_tokens, ngram) for p, a in records)
    return {"answers": len(records), "answer_tokens": tokens, "forwards_with_lookup": forwards,
            "tokens_per_forward": round(tokens / max(forwards, 1), 2), "draft_tokens": draft_tokens, "ngram": ngram}


def ground_truth_steps_per_second(steps: int, seed: int) -> float:
    env = TextGameEnv()
    env.reset(seed=seed)
    agent = RandomTextGameAgent(seed)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(agent.act(env.game))
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def env_cases(env_id: str, old_env: Callable[[], Any], new_env: Callable[[], Any], world_model: Any,
              actions: list[list[str]], args: argparse.Namespace, field: str) -> dict[str, tuple]:
    """The side-by-side cases at equal work: batch 1 (old env vs new env) and, for each N, N old single
    envs in a loop vs the new vector env of N worlds sharing `world_model`."""
    cases = {"batch1": (lambda: run_single_envs([old_env()], args.seed, actions, args.steps, field),
                        lambda: run_single_envs([new_env()], args.seed, actions, args.steps, field))}
    for n in args.num_envs:
        vec = gym.make_vec(env_id, num_envs=n, world_model=world_model)
        cases[f"batch{n}"] = (
            lambda n=n: run_single_envs([old_env() for _ in range(n)], args.seed, actions[:n], args.vec_steps, field),
            lambda n=n, vec=vec: run_vector_env(vec, args.seed, actions[:n], args.vec_steps, field),
        )
    return cases


def env_benchmark(name: str, cases: dict[str, tuple], args: argparse.Namespace, argv: Sequence[str] | None,
                  checkpoint: str, model: torch.nn.Module, decoding: str) -> dict[str, Any]:
    """Run `cases` side by side and describe the run: headline ratios, the prompt-lookup bound, settings;
    plus the new env at batch 1 with the lean decode step against transformers' forward (`lean_decode_batch1`,
    "old" = transformers' forward, "new" = the lean step; same env, same predictions)."""
    results = side_by_side(cases, args.rounds)
    new_single = cases["batch1"][1]
    lean = side_by_side({"batch1": (lean_decode(False)(new_single), new_single)}, args.rounds)["batch1"]
    return {
        "benchmark": name,
        "command": f"python benchmarks/{name}.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "checkpoint": display_path(checkpoint),
        "parameters": sum(p.numel() for p in model.parameters()),
        "baseline_rev": args.baseline_rev,
        "sampler": sampler_state(),
        "torch_threads": args.threads,
        **headline_figures(results, args.num_envs),
        "decoding": decoding,
        "prompt_lookup_bound": prompt_lookup_bound(cases[f"batch{max(args.num_envs)}"][1]),
        "cases": results,
        "lean_decode_batch1": lean,
        "machine": machine_record("2 shared cores under other load: ratios are meaningful, absolute rates are not"),
    }


def start_actions(env_factory: Callable[[], Any], seed: int, count: int) -> list[list[str]]:
    """Each world's action cycle: the valid actions of its start state (world i reset with seed + i)."""
    env = env_factory()
    return [env.reset(seed=seed + i)[1]["valid_actions"] for i in range(count)]


def env_benchmark_parser(description: str | None, checkpoint: str | None, checkpoint_help: str | None, steps: int,
                         num_envs: list[int], vec_steps: int, rounds: int) -> argparse.ArgumentParser:
    """The command line of an old-vs-new env benchmark (this one's and benchmarks/web_env.py's), with their defaults."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=checkpoint, help=checkpoint_help)
    parser.add_argument("--steps", type=int, default=steps, help="env steps at batch 1 per round")
    parser.add_argument("--num-envs", type=int, nargs="+", default=num_envs, help="vector env sizes")
    parser.add_argument("--vec-steps", type=int, default=vec_steps, help="vector env steps per round")
    parser.add_argument("--rounds", type=int, default=rounds, help="alternating old/new rounds per case")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline-rev", default=BASELINE_REV, help="git revision of the old env module")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = env_benchmark_parser(__doc__, None, "default: the embedded RLVR task-specific checkpoint", steps=12,
                                  num_envs=[4, 16], vec_steps=3, rounds=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    old = baseline_module("envs/textgame/world_model_env.py", args.baseline_rev)
    old_model, new_model = old.TextGameWorldModel(args.checkpoint), TextGameWorldModel(args.checkpoint)

    def old_env() -> Any:
        return old.TextGameWorldModelEnv(world_model=old_model)

    def new_env() -> Any:
        return TextGameWorldModelEnv(world_model=new_model)

    actions = start_actions(new_env, args.seed, max(args.num_envs))
    cases = env_cases("RLVRWorld-TextGame-v0", old_env, new_env, new_model, actions, args, "raw_output")
    result = env_benchmark("textgame_env", cases, args, argv, new_model.checkpoint, new_model.model,
                           "greedy (temperature 0), the env default")
    result["ground_truth_env_steps_per_s"] = round(ground_truth_steps_per_second(2000, args.seed), 1)
    emit_json(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
