"""Steps per second of RLVRWorld-TextGame-v0 with today's code: side by side in one run, at equal work.

Two comparisons, each on the same checkpoint, sampler and machine, greedy, with the same games, seeds
and actions (NEXT_STEP autoreset of a vector env emulated for single envs); each run checks that both
sides predict identical text. Rounds alternate which side goes first so that load from other processes
hits both; the ratios are medians of per-round ratios.

- batch N (`cases`): N worlds for `--vec-steps` steps, N single envs stepped in a loop (what a
  SyncVectorEnv does: batch 1, N times) vs `gym.make_vec(..., num_envs=N)` (one batched generation
  per step);
- batch 1 (`lean_decode_batch1`): one env for `--steps` steps, the sampler's decode steps through
  transformers' forward (`lean_decode(False)`) vs the lean decode step (`rlvr_sim.models.lean_decode`).

    python benchmarks/textgame_env.py --steps 12 --num-envs 4 16 --vec-steps 3 --rounds 3 --out benchmarks/results/textgame_env.json
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
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

# one side of a comparison: its name in the JSON and a run returning (seconds, predicted texts per env)
Side = tuple[str, Callable[[], tuple[float, list[list[str | None]]]]]


def sampler_state() -> dict[str, Any]:
    """The code both sides ran: HEAD, and whether the working tree changes the sampler."""
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


def side_by_side(reference: Side, candidate: Side, rounds: int) -> dict[str, Any]:
    """Run both sides `rounds` times, alternating which goes first: each side's seconds per round and
    steps/s (over the median round), the median per-round ratio of the candidate's speed to the
    reference's, and whether every round predicted identical text."""
    names = (reference[0], candidate[0])
    seconds: dict[str, list[float]] = {name: [] for name in names}
    identical, work = True, 0
    for r in range(rounds):
        outputs = {}
        for name, run in ((reference, candidate) if r % 2 == 0 else (candidate, reference)):
            elapsed, outputs[name] = run()
            seconds[name].append(elapsed)
        identical &= outputs[names[0]] == outputs[names[1]]
        work = count_predictions(outputs[names[1]])
    result: dict[str, Any] = {"predicted_steps_per_round": work}
    for name in names:
        result[f"{name}_seconds"] = [round(s, 3) for s in seconds[name]]
        result[f"{name}_steps_per_s"] = round(work / statistics.median(seconds[name]), 3)
    ratios = [ref / cand for ref, cand in zip(seconds[names[0]], seconds[names[1]])]
    result[f"speedup_{names[1]}_vs_{names[0]}"] = round(statistics.median(ratios), 2)
    result["identical_predictions"] = identical
    return result


def headline_figures(cases: dict[str, Any], lean: dict[str, Any], sizes: list[int]) -> dict[str, float]:
    """The figures worth a table, flat: the env's batch-1 rate, and each vector size's rate with its ratio to
    the same worlds stepped as single envs in a loop; the largest size also under the names
    `evaluations/report.py` reads (`batched_speedup`: batch N over batch 1 at equal work)."""
    figures = {"world_model_env_steps_per_s_batch1": lean["lean_steps_per_s"],
               "lean_decode_speedup_batch1": lean["speedup_lean_vs_transformers_forward"]}
    for n in sizes:
        figures[f"vector_env_steps_per_s_batch{n}"] = cases[f"batch{n}"]["vector_steps_per_s"]
        figures[f"vector_env_batch{n}_vs_loop_of_{n}"] = cases[f"batch{n}"]["speedup_vector_vs_loop"]
    largest = cases[f"batch{max(sizes)}"]
    figures[f"world_model_steps_per_s_batch{max(sizes)}"] = largest["vector_steps_per_s"]
    figures["batched_speedup"] = largest["speedup_vector_vs_loop"]
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


def env_cases(env_id: str, single_env: Callable[[], Any], world_model: Any, actions: list[list[str]],
              args: argparse.Namespace, field: str) -> dict[str, tuple[Side, Side]]:
    """The batch-N comparisons at equal work: for each N, N single envs stepped in a loop ("loop") vs the
    vector env of N worlds sharing `world_model` ("vector")."""
    cases = {}
    for n in args.num_envs:
        vec = gym.make_vec(env_id, num_envs=n, world_model=world_model)
        cases[f"batch{n}"] = (
            ("loop", lambda n=n: run_single_envs([single_env() for _ in range(n)], args.seed, actions[:n],
                                                 args.vec_steps, field)),
            ("vector", lambda n=n, vec=vec: run_vector_env(vec, args.seed, actions[:n], args.vec_steps, field)),
        )
    return cases


def env_benchmark(name: str, env_id: str, world_model: Any, single_env: Callable[[], Any], actions: list[list[str]],
                  args: argparse.Namespace, argv: Sequence[str] | None, field: str, decoding: str) -> dict[str, Any]:
    """Run side by side, for each N in `--num-envs`, N single envs in a loop vs the vector env of N (`cases`),
    and one env with its decode steps through transformers' forward vs the lean step (`lean_decode_batch1`);
    describe the run: headline figures, the prompt-lookup bound, settings."""
    cases = env_cases(env_id, single_env, world_model, actions, args, field)
    results = {case: side_by_side(*sides, args.rounds) for case, sides in cases.items()}

    def one_env() -> tuple[float, list[list[str | None]]]:
        return run_single_envs([single_env()], args.seed, actions, args.steps, field)

    lean = side_by_side(("transformers_forward", lean_decode(False)(one_env)), ("lean", lean_decode(True)(one_env)),
                        args.rounds)
    return {
        "benchmark": name,
        "command": f"python benchmarks/{name}.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "checkpoint": display_path(world_model.checkpoint),
        "parameters": sum(p.numel() for p in world_model.model.parameters()),
        "sampler": sampler_state(),
        "torch_threads": args.threads,
        **headline_figures(results, lean, args.num_envs),
        "decoding": decoding,
        "prompt_lookup_bound": prompt_lookup_bound(cases[f"batch{max(args.num_envs)}"][1][1]),
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
    """The command line of an LM world-model env benchmark (this one's and benchmarks/web_env.py's), with their defaults."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=checkpoint, help=checkpoint_help)
    parser.add_argument("--steps", type=int, default=steps, help="env steps at batch 1 per round")
    parser.add_argument("--num-envs", type=int, nargs="+", default=num_envs, help="vector env sizes")
    parser.add_argument("--vec-steps", type=int, default=vec_steps, help="vector env steps per round")
    parser.add_argument("--rounds", type=int, default=rounds, help="alternating rounds per comparison")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the JSON here")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = env_benchmark_parser(__doc__, None, "default: the embedded RLVR task-specific checkpoint", steps=12,
                                  num_envs=[4, 16], vec_steps=3, rounds=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    world_model = TextGameWorldModel(args.checkpoint)

    def single_env() -> Any:
        return TextGameWorldModelEnv(world_model=world_model)

    actions = start_actions(single_env, args.seed, max(args.num_envs))
    result = env_benchmark("textgame_env", "RLVRWorld-TextGame-v0", world_model, single_env, actions, args, argv,
                           "raw_output", "greedy (temperature 0), the env default")
    result["ground_truth_env_steps_per_s"] = round(ground_truth_steps_per_second(2000, args.seed), 1)
    emit_json(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
