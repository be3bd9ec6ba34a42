"""Collect web transitions on the local site: `python training/collect.py --task web --out DIR ...`.

Agents: a scripted explorer that prefers elements whose names share words with the task objective
(and types values taken from the objective into text fields), mixed with uniformly random actions
(click, type, hover, scroll, go_back, goto a site page) and, with `--policy-prob`, samples of the MPC
agent's own proposal policy (`--policy`, default `HeuristicWebPolicy`, at `--policy-temperature`), so that
the world model also sees the pages and actions it will be asked about when it serves as the agent's
lookahead; with `--candidates K`, every state's K most frequent policy candidates, each with the page the real
browser shows after it (the queries the agent's lookahead makes). The collector imports no policy: `collect` takes one, and the command line loads the class
named by `--policy` (module:Class, `rlvr_sim.envs.collecting.load_class`), as `--task` does for tasks. Each
step writes one WMA-style record (objective, action, tree before/after, URL path, previous actions,
the gold item changes in the three-section format) to `train.jsonl` or `test.jsonl`.

The split is decided by the transition's key, the page (the tree's node lines, tab header dropped) and the
action, whatever the objective, URL or history (`transition_key`; `key_split`, shared by the collectors in
`rlvr_sim.envs.collecting`): a hash of the key puts it in test when it falls below `test_fraction`. Every task's episodes start from the same page, so an episode split
(`--split episode`, the old default and the split the embedded `assets/web_sft` / `assets/web_rlvr` were
trained on) leaves test transitions whose page and action, and so whose answer, are also in training
("twins"); the key split has none, and because the hash takes no seed the same page and action land on the
same side in every data set collected with it (`data/web` and `data/web_onpolicy` share their test keys).
Both splits draw the same random numbers, so a seed gives the same transitions under either; only their
files differ. `count_twins` counts the test transitions with a training twin.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from rlvr_sim.envs.collecting import (
    collector_parser,
    count_key_twins,
    key_digest,
    key_split,
    load_class,
    split_transitions,
)
from rlvr_sim.envs.web.browser_env import BrowserEnv
from rlvr_sim.envs.web.tasks import WEB_TASKS
from rlvr_sim.envs.web.tree import format_changes, item_changes, split_header
from tqdm import tqdm

from rlvr_sim.data.wma import WebTransition, load_web_transitions, to_wma_record
from rlvr_sim.tasks.web import tree_body

SITE_PATHS = ("/", "/products", "/products?page=2", "/products?page=3", "/orders", "/orders?status=pending",
              "/customers", "/products/new", "/account/settings")
TYPED_VALUES = ("9.00", "5.00", "0", "100", "tea", "mug", "Black Pen", "alan@turing.org", "25.00", "10", "abc")
_CLICKABLE = ("link", "button", "checkbox", "searchbox", "textbox", "combobox")
_TYPEABLE = ("textbox", "searchbox", "combobox")
DEFAULT_POLICY = "rlvr_sim.policies.web_mpc:HeuristicWebPolicy"
SPLITS = ("key", "episode")


def transition_key(tree: str, action: str) -> str:
    """The key two transitions share when their answers must be the same: the page (the tree's node lines,
    indentation kept, tab header dropped) and the action text (whitespace collapsed); a hex digest."""
    return key_digest("\n".join(tree_body(tree)) + "\n\x00" + " ".join(action.split()))


def web_key(transition: WebTransition) -> str:
    """`transition_key` of a loaded transition."""
    return transition_key(transition.tree, transition.action)


def training_keys(train: list[str | Path]) -> set[str]:
    """The `transition_key`s of the training files / directories' train splits."""
    return set(map(web_key, split_transitions(train, "train", load_web_transitions, "web")))


def count_twins(train: list[str | Path], test: str | Path) -> dict[str, int]:
    """How many transitions of `test` (a file, or a directory's test split) have a twin, a transition with
    the same `transition_key`, in any of the `train` files (or directories' train splits); also how many
    share the whole prompt (objective, URL, action, tree)."""
    trains = split_transitions(train, "train", load_web_transitions, "web")
    tests = split_transitions([test], "test", load_web_transitions, "web")
    prompts = {(t.objective, t.url, t.action, t.tree) for t in trains}
    same_prompt = sum((t.objective, t.url, t.action, t.tree) in prompts for t in tests)
    return {**count_key_twins(trains, tests, web_key), "prompt_twins": same_prompt}


class ActionProposer(Protocol):
    """What on-policy collection needs of an agent's policy (`policies.web_mpc.WebPolicy` has it)."""

    def propose(self, objective: str, tree: str, url: str, history: list[str], n_samples: int,
                rng: np.random.Generator) -> list[str]: ...


def load_policy(spec: str, temperature: float) -> Any:
    """The policy class named "package.module:Class", built with `temperature=`."""
    return load_class(spec, "policy")(temperature=temperature)


def _elements(tree: str) -> list[tuple[str, str, str]]:
    """(id, role, name) of each tree line."""
    out = []
    for line in split_header(tree)[1]:
        match = re.match(r"\[(\d+)\] (\S+) (?:'(.*?)'|\"(.*?)\")", line.text)
        if match:
            out.append((match.group(1), match.group(2), match.group(3) or match.group(4) or ""))
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9@.#]+", text.lower()))


def _objective_values(objective: str) -> list[str]:
    """Values an objective asks to enter: amounts, emails, the phrase after 'to'/'named'/'for'."""
    values = re.findall(r"\b\d+\.\d+\b|\b\d+\b|\S+@\S+", objective)
    for pattern in (r"\bto ([A-Z][\w ]+)$", r"named ([A-Z][\w ]+?) with", r"\bfor (\w+)$"):
        values += re.findall(pattern, objective)
    return values


def random_action(tree: str, rng: np.random.Generator) -> str:
    """A uniformly random action over the page's elements and the site's pages."""
    elements = _elements(tree)
    clickable = [e for e in elements if e[1] in _CLICKABLE]
    typeable = [e for e in elements if e[1] in _TYPEABLE]
    roll = rng.random()
    if roll < 0.55 and clickable:
        return f"click [{clickable[rng.integers(len(clickable))][0]}]"
    if roll < 0.70 and typeable:
        element = typeable[rng.integers(len(typeable))]
        return f"type [{element[0]}] [{TYPED_VALUES[rng.integers(len(TYPED_VALUES))]}] [{int(rng.random() < 0.3)}]"
    if roll < 0.78 and elements:
        return f"hover [{elements[rng.integers(len(elements))][0]}]"
    if roll < 0.83:
        return f"scroll [{'down' if rng.random() < 0.5 else 'up'}]"
    if roll < 0.90:
        return "go_back"
    return f"goto [{SITE_PATHS[rng.integers(len(SITE_PATHS))]}]"


def scripted_action(objective: str, tree: str, rng: np.random.Generator) -> str:
    """Objective-guided exploration: type an objective value into a matching field, else click the
    element sharing most words with the objective (ties broken at random)."""
    elements = _elements(tree)
    goal = _words(objective)
    values = _objective_values(objective)
    typeable = [e for e in elements if e[1] in _TYPEABLE]
    if values and typeable and rng.random() < 0.35:
        element = typeable[rng.integers(len(typeable))]
        return f"type [{element[0]}] [{values[rng.integers(len(values))]}] [0]"
    scored = [(len(goal & _words(name)) + rng.random() * 0.5, eid) for eid, role, name in elements
              if role in _CLICKABLE]
    if not scored:
        return random_action(tree, rng)
    return f"click [{max(scored)[1]}]"


def ranked_candidates(policy: ActionProposer, objective: str, tree: str, url: str, history: list[str],
                      top_k: int, n_samples: int, rng: np.random.Generator) -> list[str]:
    """The MPC agent's candidates: the `top_k` most frequent of `n_samples` policy samples, most frequent first
    (as `policies.web_mpc.MPCWebAgent.ranked_proposals` keeps them)."""
    samples = policy.propose(objective, tree, url, history, n_samples, rng)
    return [action for action, _ in Counter(samples).most_common(top_k)]


def collect(out_dir: str | Path, episodes: int, seed: int = 0, test_fraction: float = 0.2, max_steps: int = 8,
            scripted_prob: float = 0.5, policy_prob: float = 0.0,
            policy: ActionProposer | None = None, split: str = "key", candidates: int = 0,
            candidate_samples: int = 20) -> dict[str, int]:
    """Run `episodes` episodes and write train.jsonl/test.jsonl under `out_dir`; returns counts.

    Each step is `policy`'s sample with probability `policy_prob`; otherwise scripted with probability
    `scripted_prob`, else random (with `policy_prob=0` the random stream, and so the data, is the same as
    without the option). `split="key"` files each transition by `key_split(transition_key(...))`;
    `split="episode"` files whole episodes (test with probability `test_fraction`), as before.

    `candidates=K` (> 0) collects what an MPC agent's lookahead is asked about: at every step the policy's
    `K` most frequent of `candidate_samples` samples are each run in the real browser (`BrowserEnv.simulate`,
    which leaves the episode as it was) and recorded, then one of them, drawn uniformly, is taken, so the
    episodes branch the way MPC picks do (`policy_prob` and `scripted_prob` are then unused; a `stop`
    candidate is taken but not recorded: the agent never imagines it)."""
    if not 0.0 <= policy_prob <= 1.0 or not 0.0 <= scripted_prob <= 1.0:
        raise ValueError(f"policy_prob and scripted_prob must be in [0, 1], got {policy_prob}, {scripted_prob}")
    if (policy_prob > 0 or candidates > 0) and policy is None:
        raise ValueError("policy_prob > 0 or candidates > 0 needs a policy to sample from "
                         "(e.g. load_policy(DEFAULT_POLICY, 2.0))")
    if candidates < 0 or candidate_samples < 1:
        raise ValueError(f"candidates must be >= 0 and candidate_samples >= 1, got {candidates}, {candidate_samples}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    counts = {"train": 0, "test": 0}
    env = BrowserEnv(max_steps=max_steps)
    files = {split: (out / f"{split}.jsonl").open("w", encoding="utf-8") for split in counts}
    try:
        for episode in tqdm(range(episodes), desc="collect web", unit="episode", leave=False):
            episode_split = "test" if rng.random() < test_fraction else "train"  # drawn in both modes: same data
            task = WEB_TASKS[int(rng.integers(len(WEB_TASKS)))]
            tree, info = env.reset(seed=seed + episode, options={"task_id": task.task_id})
            previous: list[str] = []
            for step in range(max_steps):
                url = info["url"]
                if candidates > 0:
                    ranked = ranked_candidates(policy, task.objective, tree, url, previous, candidates,
                                               candidate_samples, rng)
                    action = ranked[int(rng.integers(len(ranked)))]
                    outcomes = {a: env.simulate(a) for a in ranked if a != action and not a.startswith("stop")}
                else:
                    roll = rng.random()
                    if roll < policy_prob:
                        action = policy.propose(task.objective, tree, url, previous, 1, rng)[0]
                    elif (roll - policy_prob) / (1.0 - policy_prob) < scripted_prob:
                        action = scripted_action(task.objective, tree, rng)
                    else:
                        action = random_action(tree, rng)
                    outcomes = {}
                next_tree, _, terminated, truncated, info = env.step(action)
                if not (candidates > 0 and action.startswith("stop")):
                    outcomes[action] = next_tree
                for taken, after in outcomes.items():
                    record = WebTransition(
                        objective=task.objective, action=taken, tree=tree,
                        gold=format_changes(item_changes(tree, after)), url=url, next_tree=after,
                        previous_actions=list(previous), task_id=task.task_id, step_idx=step,
                    )
                    side = episode_split if split == "episode" else key_split(transition_key(tree, taken), test_fraction)
                    files[side].write(json.dumps(to_wma_record(record)) + "\n")
                    counts[side] += 1
                previous.append(action)
                tree = next_tree
                if terminated or truncated:
                    break
    finally:
        for handle in files.values():
            handle.close()
        env.close()
    return counts


def record_start_pages(path: str | Path) -> int:
    """Write {task_id: {"tree", "url"}} of every task's start page, as the real browser shows it (the
    starting states of `RLVRWorld-Web-v0`); returns the number of tasks."""
    env = BrowserEnv()
    pages = {}
    try:
        for task in WEB_TASKS:
            tree, info = env.reset(seed=0, options={"task_id": task.task_id})
            pages[str(task.task_id)] = {"tree": tree, "url": info["url"]}
    finally:
        env.close()
    Path(path).write_text(json.dumps(pages, indent=1) + "\n", encoding="utf-8")
    return len(pages)


def main(argv: list[str] | None = None) -> int:
    """Command line: --out DIR --episodes N --seed S [--split key|episode --test-fraction F --max-steps K
    --start-pages FILE]."""
    parser = collector_parser("Collect web transitions on the local shop site (train.jsonl, test.jsonl).")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--scripted-prob", type=float, default=0.5, help="share of objective-guided actions")
    parser.add_argument("--policy-prob", type=float, default=0.0,
                        help="share of actions sampled from the MPC agent's proposal policy (on-policy data)")
    parser.add_argument("--policy-temperature", type=float, default=2.0, help="that policy's sampling temperature")
    parser.add_argument("--policy", default=DEFAULT_POLICY, help="that policy's class, package.module:Class")
    parser.add_argument("--candidates", type=int, default=0,
                        help="K > 0: at each step record each of the policy's K most frequent candidates (run in the "
                             "real browser), then take one at random: the MPC agent's lookahead queries")
    parser.add_argument("--split", choices=SPLITS, default="key",
                        help="key: by page + action, no test transition has a training twin (default); episode: "
                             "whole episodes, the split the embedded web models were trained on")
    parser.add_argument("--start-pages", help="also write every task's start page to this JSON file")
    args = parser.parse_args(argv)
    start = time.time()
    if args.start_pages:
        record_start_pages(args.start_pages)
    wants_policy = args.policy_prob > 0 or args.candidates > 0
    policy = load_policy(args.policy, args.policy_temperature) if wants_policy else None
    counts = collect(args.out, args.episodes, args.seed, args.test_fraction, args.max_steps, args.scripted_prob,
                     args.policy_prob, policy, args.split, args.candidates)
    twins = count_twins([Path(args.out) / "train.jsonl"], Path(args.out) / "test.jsonl")["key_twins"]
    print(json.dumps({"out": str(args.out), "split": args.split, **counts, "test_with_train_twin": twins,
                      "seconds": round(time.time() - start, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
