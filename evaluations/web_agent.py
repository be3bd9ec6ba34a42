"""MPC web-agent success rates on the local site's task suite, in the real browser.

    python evaluations/web_agent.py                       # all tasks, the four agents below
    python evaluations/web_agent.py --tasks 0 5 12 --agents policy mpc-browser
    python evaluations/web_agent.py --demo                # one MPC episode with the embedded RLVR world model
    python evaluations/web_agent.py --decisions           # the world models' lookahead on the agent's own states

Agents (same policy and value function everywhere; only the world model differs):
- `policy`: the policy alone (the most frequent of `--samples` sampled actions);
- `mpc-sft` / `mpc-rlvr`: MPC with the embedded SFT / RLVR world model (assets/web_sft, assets/web_rlvr);
- `mpc-browser`: MPC with the real browser as the "world model" (`BrowserEnv.simulate`): the upper bound;
- `mpc-sft-gated` / `mpc-rlvr-gated`: MPC with the SFT / RLVR model whose lookahead overrules the policy only
  where the model is confident in its predictions (mean log-prob per predicted token >= `--min-confidence`,
  `MPCWebAgent.min_confidence`).
The policy and value are the local CPU ones (`HeuristicWebPolicy` at `--policy-temperature`,
`HeuristicValueFunction`); the learned world models decode greedily (`--wm-temperature` to sample). Writes
evaluations/results/web_agent.json and web_agent.md.

`--decisions` asks what the success rates hide: along episodes of the browser-MPC agent, for each top-k
candidate action, the real next page (`BrowserEnv.simulate`) against each learned world model's prediction.
It reports the item-change F1 of the predictions on these on-policy transitions, how often MPC with the
model picks the candidate that MPC with the real browser picks, and the true value of the picked candidates
(web_decisions.json / .md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from rlvr_sim.reporting import add_out_argument
from rlvr_sim.resources import asset_path, display_path, results_dir

AGENTS = ("policy", "mpc-sft", "mpc-rlvr", "mpc-browser", "mpc-sft-gated", "mpc-rlvr-gated")
# The confidence gate's threshold: chosen on the decision states of `--decisions --repeats 2 --seed 20000`
# (seeds apart from the success-rate runs'), where -0.02 gave both models' picks the highest true value.
MIN_CONFIDENCE = -0.02


def build_agent(name: str, env: Any, args: argparse.Namespace) -> Any:
    """The agent `name` over `env` (a BrowserEnv)."""
    from rlvr_sim.envs.web.world_model_env import LMWebWorldModel
    from rlvr_sim.policies.web_mpc import (
        BrowserLookahead,
        HeuristicValueFunction,
        HeuristicWebPolicy,
        LearnedWorldModel,
        MPCWebAgent,
    )

    world_model: Any = None
    if name == "mpc-browser":
        world_model = BrowserLookahead(env)
    elif name in ("mpc-sft", "mpc-rlvr", "mpc-sft-gated", "mpc-rlvr-gated"):
        checkpoint = args.sft if name.startswith("mpc-sft") else args.rlvr
        world_model = LearnedWorldModel(LMWebWorldModel.from_checkpoint(checkpoint, temperature=args.wm_temperature))
    elif name != "policy":
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    return MPCWebAgent(HeuristicWebPolicy(temperature=args.policy_temperature), HeuristicValueFunction(), world_model,
                       n_samples=args.samples, top_k=args.top_k, depth=args.depth,
                       min_confidence=args.min_confidence if name.endswith("-gated") else None)


def episode_with_restart(env: Any, agent: Any, task_id: int, seed: int, max_steps: int,
                         restarts: list[dict[str, Any]]) -> dict[str, Any]:
    """`run_episode`, run once more from its start if Chromium dies during it (`reset` starts a new one; the
    episode is seeded, so the rerun is the episode it would have been); a second crash raises. Each
    restart is appended to `restarts` and reported with the table."""
    from rlvr_sim.envs.web.driver import BrowserCrashedError
    from rlvr_sim.policies.web_mpc import run_episode

    try:
        return run_episode(env, agent, task_id, seed=seed, max_steps=max_steps)
    except BrowserCrashedError as exc:
        restarts.append({"task_id": task_id, "seed": seed, "error": str(exc)})
        print(f"Chromium died in task {task_id} (seed {seed}); rerunning the episode in a new one", file=sys.stderr)
        return run_episode(env, agent, task_id, seed=seed, max_steps=max_steps)


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from rlvr_sim.envs.web.browser_env import BrowserEnv
    from rlvr_sim.envs.web.tasks import WEB_TASKS
    from tqdm import tqdm

    task_ids = args.tasks if args.tasks else [t.task_id for t in WEB_TASKS]
    env = BrowserEnv(max_steps=args.max_steps)
    results: dict[str, Any] = {}
    try:
        for name in args.agents:
            agent = build_agent(name, env, args)
            start = time.time()
            restarts: list[dict[str, Any]] = []
            runs = [(repeat, task_id) for repeat in range(args.repeats) for task_id in task_ids]
            episodes = [episode_with_restart(env, agent, task_id, args.seed + 1000 * repeat + task_id, args.max_steps,
                                             restarts)
                        for repeat, task_id in tqdm(runs, desc=name, unit="episode", leave=False)]
            successes = [e["success"] for e in episodes]
            results[name] = {"success_rate": 100.0 * sum(successes) / len(successes), "episodes": len(episodes),
                             "mean_steps": sum(e["steps"] for e in episodes) / len(episodes),
                             "seconds": round(time.time() - start, 1),
                             "per_task": {str(e["task_id"]): e["success"] for e in episodes},
                             "browser_restarts": restarts, "traces": episodes}
            print(json.dumps({"agent": name, **{k: v for k, v in results[name].items()
                                                if k not in ("traces", "per_task", "browser_restarts")},
                              "browser_restarts": len(restarts)}), flush=True)
    finally:
        env.close()
    return results


def decisions(args: argparse.Namespace) -> dict[str, Any]:
    """On-policy lookahead quality of the learned world models (see the module docstring)."""
    import numpy as np
    from rlvr_sim.envs.web.browser_env import BrowserEnv
    from rlvr_sim.envs.web.tasks import WEB_TASKS
    from rlvr_sim.envs.web.tree import format_changes, item_changes
    from rlvr_sim.envs.web.world_model_env import LMWebWorldModel, next_tree_from_prediction
    from rlvr_sim.policies.web_mpc import HeuristicValueFunction, HeuristicWebPolicy, MPCWebAgent
    from tqdm import tqdm

    from rlvr_sim.metrics.web import item_change_f1

    train_keys = None
    if args.twins_of:
        from rlvr_sim.envs.web.collect import training_keys, transition_key

        train_keys = training_keys(args.twins_of)
    models = {"SFT": args.sft, "RLVR": args.rlvr}
    world_models = {name: LMWebWorldModel.from_checkpoint(path, temperature=args.wm_temperature)
                    for name, path in models.items()}
    agent = MPCWebAgent(HeuristicWebPolicy(temperature=args.policy_temperature), HeuristicValueFunction(),
                        n_samples=args.samples, top_k=args.top_k)
    task_ids = args.tasks if args.tasks else [t.task_id for t in WEB_TASKS]
    env = BrowserEnv(max_steps=args.max_steps)
    states: list[dict[str, Any]] = []
    runs = [(repeat, task_id) for repeat in range(args.repeats) for task_id in task_ids]
    try:
        for repeat, task_id in tqdm(runs, desc="decisions", unit="episode", leave=False):
            seed = args.seed + 1000 * repeat + task_id
            rng = np.random.default_rng(seed)
            tree, info = env.reset(seed=seed, options={"task_id": task_id})
            history: list[str] = []
            for _ in range(args.max_steps):
                objective, url = info["objective"], info["url"]
                counts = agent.proposal_counts(objective, tree, url, history, rng)
                candidates = list(counts)[: agent.top_k]
                imagined = [a for a in candidates if not a.startswith("stop")]
                real = {a: env.simulate(a) for a in imagined}
                real_scores = agent.values(objective, tree, history, candidates, real)
                real_pick = agent.best(candidates, real_scores)
                state = {"task_id": task_id, "repeat": repeat, "candidates": candidates, "real_pick": real_pick,
                         "real_scores": real_scores, "policy_pick": candidates[0], "models": {},
                         "counts": {a: counts[a] for a in candidates}}
                if train_keys is not None:
                    state["twin"] = {a: transition_key(tree, a) in train_keys for a in imagined}
                for name, model in world_models.items():
                    scored = dict(zip(imagined, model.predict_batch_scored(objective, url, imagined, tree, seed=seed)))
                    predictions = {a: text for a, (text, _) in scored.items()}
                    predicted = {a: next_tree_from_prediction(tree, p)[0] for a, p in predictions.items()}
                    f1 = {a: item_change_f1(predictions[a], format_changes(item_changes(tree, real[a]))).f1
                          for a in imagined}
                    scores = agent.values(objective, tree, history, candidates, predicted)
                    confidence = {a: c for a, (_, c) in scored.items()}
                    state["models"][name] = {"pick": agent.best(candidates, scores), "f1": f1, "scores": scores,
                                             "confidence": confidence,
                                             "gated_pick": agent.gated_best(candidates, scores, confidence,
                                                                            args.min_confidence)}
                states.append(state)
                tree, _, terminated, truncated, info = env.step(real_pick)
                history.append(real_pick)
                if terminated or truncated:
                    break
    finally:
        env.close()
    decisive = [s for s in states if len(set(s["real_scores"].values())) > 1]
    summary: dict[str, Any] = {
        "states": len(states), "decisive_states": len(decisive),
        "policy": {"agreement": 100.0 * float(np.mean([s["policy_pick"] == s["real_pick"] for s in states])),
                   "true_value": float(np.mean([s["real_scores"][s["policy_pick"]] for s in states]))},
        "browser": {"agreement": 100.0, "true_value": float(np.mean([s["real_scores"][s["real_pick"]] for s in states]))},
    }
    for name in models:
        picks = [s["models"][name]["pick"] for s in states]
        f1s = [f for s in states for f in s["models"][name]["f1"].values()]
        summary[name] = {"checkpoint": display_path(models[name]), "f1": 100.0 * float(np.mean(f1s)), "transitions": len(f1s),
                         "agreement": 100.0 * float(np.mean([p == s["real_pick"] for p, s in zip(picks, states)])),
                         "true_value": float(np.mean([s["real_scores"][p] for p, s in zip(picks, states)]))}
        gated = [s["models"][name]["gated_pick"] for s in states]
        summary[name]["gated"] = {
            "min_confidence": args.min_confidence,
            "agreement": 100.0 * float(np.mean([p == s["real_pick"] for p, s in zip(gated, states)])),
            "true_value": float(np.mean([s["real_scores"][p] for p, s in zip(gated, states)])),
            "overrules_policy": 100.0 * float(np.mean([p != s["policy_pick"] for p, s in zip(gated, states)]))}
        if train_keys is not None:  # F1 apart on candidates whose page + action is / is not in the training data
            for label, wanted in (("f1_twin", True), ("f1_no_twin", False)):
                part = [f for s in states for a, f in s["models"][name]["f1"].items() if s["twin"][a] is wanted]
                summary[name][label] = 100.0 * float(np.mean(part)) if part else None
                summary[name][label.replace("f1", "transitions")] = len(part)
    return {"summary": summary, "states": states}


def decisions_markdown(summary: dict[str, Any], note: str) -> str:
    lines = ["| Lookahead | On-policy item-change F1 | Picks the browser's choice (%) | True value of the pick (1-5) |",
             "|---|---|---|---|",
             f"| none (policy's most frequent) | - | {summary['policy']['agreement']:.1f} | {summary['policy']['true_value']:.2f} |"]
    for name in ("SFT", "RLVR"):
        row = summary[name]
        lines.append(f"| {name} world model | {row['f1']:.2f} | {row['agreement']:.1f} | {row['true_value']:.2f} |")
        if "gated" in row:
            gated = row["gated"]
            lines.append(f"| {name}, confidence-gated (>= {gated['min_confidence']}) | {row['f1']:.2f} | "
                         f"{gated['agreement']:.1f} | {gated['true_value']:.2f} |")
    lines.append(f"| real browser | 100 | 100.0 | {summary['browser']['true_value']:.2f} |")
    if "f1_twin" in summary["SFT"]:
        lines += ["", "Item-change F1 apart on candidate transitions whose page + action is in the models' training "
                      "data (twin) or is not:", "",
                  "| Lookahead | F1, twin in training | F1, no twin | transitions (twin / no twin) |", "|---|---|---|---|"]
        for name in ("SFT", "RLVR"):
            row = summary[name]
            cells = [f"{row[k]:.2f}" if row[k] is not None else "-" for k in ("f1_twin", "f1_no_twin")]
            lines.append(f"| {name} world model | {cells[0]} | {cells[1]} | {row['transitions_twin']} / "
                         f"{row['transitions_no_twin']} |")
    return "\n".join(lines) + f"\n\n{note}\n"


def markdown(results: dict[str, Any], note: str) -> str:
    """The success table: each agent's rate with a bootstrap 95% interval over its episodes and, when the
    policy-alone agent ran the same episodes (same tasks and seeds, in order), the paired difference to it."""
    import numpy as np

    from rlvr_sim.metrics.stats import bootstrap_ci, paired_gain

    labels = {"policy": "Policy alone", "mpc-sft": "MPC + SFT world model", "mpc-rlvr": "MPC + RLVR world model",
              "mpc-browser": "MPC + real browser (upper bound)",
              "mpc-sft-gated": "MPC + SFT world model, confidence-gated",
              "mpc-rlvr-gated": "MPC + RLVR world model, confidence-gated"}

    def outcomes(row: dict[str, Any]) -> tuple[np.ndarray, list[int]]:
        traces = row.get("traces") or []
        return 100.0 * np.array([float(e["success"]) for e in traces]), [e["task_id"] for e in traces]

    baseline, baseline_tasks = outcomes(results["policy"]) if "policy" in results else (np.array([]), [])
    lines = ["| Agent | Success rate (%) [95% CI] | vs policy alone, paired (points) [95% CI] | Episodes | Mean steps |",
             "|---|---|---|---|---|"]
    for name, row in results.items():
        success, tasks = outcomes(row)
        rate = f"{row['success_rate']:.1f}"
        if len(success) > 1:
            low, high = bootstrap_ci(success)
            rate += f" [{low:.1f}, {high:.1f}]"
        versus = "-"
        if name != "policy" and len(success) > 1 and tasks == baseline_tasks:
            gain = paired_gain(success, baseline)  # success - policy: positive when the agent succeeds more
            versus = f"{gain['gain']:+.1f} [{gain['low']:+.1f}, {gain['high']:+.1f}]"
        lines.append(f"| {labels.get(name, name)} | {rate} | {versus} | {row['episodes']} | {row['mean_steps']:.1f} |")
    return "\n".join(lines) + f"\n\n{note}\n"


def demo(checkpoint: str | Path | None = None, task_id: int = 0, seed: int = 0) -> dict[str, Any]:
    """Start the local site, run one MPC episode in the real browser with a learned world model, print it."""
    from rlvr_sim.envs.web.demo import run_episode_text

    text, result = run_episode_text(checkpoint, task_id=task_id, seed=seed)
    print(text)
    return result


def pool(folders: list[str]) -> dict[str, Any]:
    """The agents that every folder's web_agent.json holds, their episodes concatenated in folder order (each
    folder's own rows paired by episode, so the pooled rows are too); rates and mean steps recomputed."""
    runs = []
    for folder in folders:
        path = Path(folder) / "web_agent.json"
        if not path.is_file():
            raise SystemExit(f"--pool: {path} does not exist (a folder written by evaluations/web_agent.py)")
        runs.append(json.loads(path.read_text())["results"])
    shared = [name for name in AGENTS if all(name in run for run in runs)]
    if not shared:
        raise SystemExit(f"--pool: no agent is in every one of {folders}")
    pooled: dict[str, Any] = {}
    for name in shared:
        traces = [{key: episode[key] for key in ("task_id", "success", "steps")}  # the step traces stay in their draws
                  for run in runs for episode in run[name]["traces"]]
        pooled[name] = {"success_rate": 100.0 * sum(e["success"] for e in traces) / len(traces),
                        "episodes": len(traces), "mean_steps": sum(e["steps"] for e in traces) / len(traces),
                        "traces": traces, "settings": "; ".join(run[name]["settings"] for run in runs),
                        "pooled_commands": [run[name]["command"] for run in runs]}
    return pooled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Success rates of the MPC web agent on the local site.")
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=AGENTS)
    parser.add_argument("--tasks", nargs="*", type=int, help="task ids (default: all)")
    parser.add_argument("--repeats", type=int, default=1, help="episodes per task (different seeds)")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--samples", type=int, default=20, help="policy samples per step (paper: 20)")
    parser.add_argument("--top-k", type=int, default=3, help="most frequent candidates kept (paper: 3)")
    parser.add_argument("--depth", type=int, default=1, help="lookahead depth (paper: 1)")
    parser.add_argument("--policy-temperature", type=float, default=1.0)
    parser.add_argument("--wm-temperature", type=float, default=0.0, help="learned world models' decoding temperature")
    parser.add_argument("--min-confidence", type=float, default=MIN_CONFIDENCE,
                        help="the -gated agents' (and --decisions' gated picks') threshold on the world model's mean "
                             "log-prob per predicted token")
    parser.add_argument("--sft", default=str(asset_path("web_sft")))
    parser.add_argument("--rlvr", default=str(asset_path("web_rlvr")))
    parser.add_argument("--seed", type=int, default=0)
    add_out_argument(parser, help="output folder; default: runs/eval; the committed tables: evaluations/results")
    parser.add_argument("--demo", action="store_true", help="run one MPC episode with the RLVR world model and exit")
    parser.add_argument("--decisions", action="store_true",
                        help="score the world models' lookahead on the browser-MPC agent's states (web_decisions.*)")
    parser.add_argument("--twins-of", nargs="+", metavar="DATA",
                        help="with --decisions: also score the candidates whose page + action is in these training "
                             "data folders (train splits) apart from the rest")
    parser.add_argument("--pool", nargs="+", metavar="FOLDER",
                        help="write one table of the agents every FOLDER's web_agent.json holds, their episodes "
                             "pooled (e.g. two draws of seeds), instead of running episodes")
    parser.add_argument("--append", action="store_true",
                        help="keep the other agents' rows already in <out>/web_agent.json (each row keeps its command)")
    args = parser.parse_args(argv)
    if args.demo:
        demo(args.rlvr, task_id=(args.tasks or [0])[0], seed=args.seed)
        return 0
    try:
        out = results_dir(args.out)
    except RuntimeError as err:
        parser.error(str(err))
    command = ("python evaluations/web_agent.py " + " ".join(sys.argv[1:] if argv is None else argv)).strip()
    if args.pool:
        pooled = pool(args.pool)
        for row in pooled.values():
            row["command"] = command
        note = (f"Local shop site. The episodes of {', '.join(args.pool)} pooled, each agent's in that order, by "
                f"`{command}`. " + " ".join(f"{name}: " + " + ".join(f"`{c}`" for c in row["pooled_commands"]) + "."
                                            for name, row in pooled.items()))
        out.mkdir(parents=True, exist_ok=True)
        (out / "web_agent.json").write_text(json.dumps({"results": pooled, "note": note}, indent=1) + "\n")
        (out / "web_agent.md").write_text(markdown(pooled, note))
        print(markdown(pooled, note))
        return 0
    if args.decisions:
        report = decisions(args)
        summary = report["summary"]
        note = (f"{summary['states']} states of the browser-MPC agent ({summary['decisive_states']} where the real "
                f"pages separate the candidates), {summary['SFT']['transitions']} candidate transitions; "
                f"{args.samples} policy samples, top {args.top_k}, policy temperature {args.policy_temperature}, "
                f"world-model temperature {args.wm_temperature}; `{command}`.")
        out.mkdir(parents=True, exist_ok=True)
        (out / "web_decisions.json").write_text(json.dumps({**report, "note": note}, indent=1) + "\n")
        table = decisions_markdown(summary, note)
        (out / "web_decisions.md").write_text(table)
        print(table)
        return 0
    results = evaluate(args)
    settings = (f"{len(next(iter(results.values()))['per_task'])} tasks x {args.repeats} episodes, max {args.max_steps} "
                f"steps, {args.samples} policy samples, top {args.top_k}, depth {args.depth}, policy temperature "
                f"{args.policy_temperature}, world-model temperature {args.wm_temperature}")
    for name, row in results.items():
        row.update(command=command, settings=settings + (f", min confidence {args.min_confidence}"
                                                         if name.endswith("-gated") else ""))
    out.mkdir(parents=True, exist_ok=True)
    previous = out / "web_agent.json"
    if args.append and previous.exists():
        kept = json.loads(previous.read_text())["results"]
        results = {name: results.get(name, kept.get(name)) for name in AGENTS if name in results or name in kept}
    note = "Local shop site. " + " ".join(f"{name}: {row['settings']}; `{row['command']}`." for name, row in results.items())
    restarted = sum(len(row.get("browser_restarts", [])) for row in results.values())
    if restarted:
        note += f" {restarted} episode(s) were rerun from their start after Chromium died (see browser_restarts)."
    (out / "web_agent.json").write_text(json.dumps({"results": results, "note": note}, indent=1) + "\n")
    (out / "web_agent.md").write_text(markdown(results, note))
    print(markdown(results, note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
