"""Play the text games with scripted and random agents; write transitions in the ByteSized32 jsonl schema.

    python training/collect.py --task textgame --out data/textgame --episodes-per-game 300 --seed 0

Writes train.jsonl / test.jsonl (split by held-out current states: no test state occurs in train),
heldout_games.jsonl (every transition of the held-out games, for the held-out-game split) and
stats.json. Duplicate (state, action) transitions are kept once.

The split unit, the current state (objects and score), is coarser than a transition's key (game, state,
action: everything the answer is a function of), so no test transition has a training twin with its key.
`count_twins` counts them (0 by construction) and the near twins, whose objects and action are in train
with another score; stats.json records both under "test_twins".

With --rl-states F (0 < F < 1) the train states are also split in two: train_rl.jsonl holds a share F of
each game's train states (every transition from them) and train_sft.jsonl the rest, for RL on prompts the
SFT model never saw (`training/sft.py ... train_split=train_sft`, `training/grpo.py ... train_split=train_rl`).
train.jsonl (their union), test.jsonl and the other files are the same with or without the option.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from rlvr_sim.envs.collecting import collector_parser, count_key_twins, key_digest, split_transitions
from rlvr_sim.envs.textgame.engine import TextGame
from rlvr_sim.envs.textgame.games import GAMES, make_game

from rlvr_sim.data.bytesized32 import (
    TextGameTransition,
    load_bytesized32_jsonl,
    record_to_transition,
    write_bytesized32_jsonl,
)
from rlvr_sim.metrics.textgame import is_changed_transition, make_diff

EPSILONS = (0.0, 0.3, 0.6, 1.0)  # share of random actions per episode: expert play through pure exploration


def explore_action(game: TextGame, epsilon: float, explore: random.Random, choose: random.Random) -> str:
    """The collector's behaviour policy: the game's expert action with probability 1 - epsilon, else a
    uniformly random valid one (as `policies.textgame_agents.EpsilonTextGameAgent`, which the collector does
    not import: collectors and policies stay independent)."""
    return choose.choice(game.all_actions()) if explore.random() < epsilon else game.expert_action()


def play_episodes(game_id: str, episodes: int, max_steps: int, seed: int) -> list[dict]:
    """All transitions of `episodes` episodes of one game, in the ByteSized32 schema (state_id = order)."""
    records = []
    for episode in range(episodes):
        episode_seed = seed * 1_000_003 + episode
        game = make_game(game_id, seed=episode_seed)
        epsilon = EPSILONS[episode % len(EPSILONS)]
        explore, choose = random.Random(episode_seed), random.Random(episode_seed + 1)
        for _ in range(max_steps):
            if game.game_over:
                break
            current_state, current_score = game.snapshot(), game.score_state()
            action_state, tick_state = game.step(explore_action(game, epsilon, explore, choose))
            records.append(
                {
                    "game": game_id,
                    "state_id": len(records),
                    "current_state": current_state,
                    "action_state": action_state,
                    "tick_state": tick_state,
                    "current_score_state": current_score,
                    "next_score_state": game.score_state(),
                }
            )
    return records


def _state_key(record: dict) -> str:
    """Identity of a transition's current state (objects and score), for dedup and the state split."""
    blob = json.dumps([record["game"], record["current_state"]["objects"], record["current_score_state"]], sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()


def transition_key(transition: TextGameTransition, with_score: bool = True) -> str:
    """A transition's key: a digest of its game, current objects, current score record (unless `with_score`
    is False) and action. Two transitions with one key have one answer (the games are deterministic)."""
    state = transition.current_state["game_state"]
    objects = [entry for entry in state if isinstance(entry, dict) and "uuid" in entry]
    score = [entry for entry in state if not (isinstance(entry, dict) and "uuid" in entry)] if with_score else None
    return key_digest(json.dumps([transition.game, objects, score, " ".join(transition.action.split())], sort_keys=True))


def _answer(transition: TextGameTransition) -> str:
    return json.dumps(make_diff(transition.current_state, transition.gold_state), sort_keys=True)


def twin_counts(train: list[TextGameTransition], test: list[TextGameTransition]) -> dict[str, int]:
    """How many `test` transitions have a training twin (same `transition_key`), and how many a near twin:
    the same game, objects and action in train with another score ("object_twins"), of which how many
    with the same answer (the object changes and score change one of those train transitions has)."""
    answers: dict[str, set[str]] = {}
    for t in train:
        answers.setdefault(transition_key(t, with_score=False), set()).add(_answer(t))
    counts = count_key_twins(train, test, transition_key)
    keys = {transition_key(t) for t in train}
    near = [t for t in test if transition_key(t) not in keys and transition_key(t, with_score=False) in answers]
    return {**counts, "object_twins": len(near),
            "object_twins_same_answer": sum(_answer(t) in answers[transition_key(t, with_score=False)] for t in near)}


def count_twins(train: list[str | Path], test: str | Path) -> dict[str, int]:
    """`twin_counts` of ByteSized32 jsonl files: `test` (a file, or a directory's test.jsonl) against every
    file of `train` (or directory's train.jsonl)."""
    return twin_counts(split_transitions(train, "train", load_bytesized32_jsonl, "textgame"),
                       split_transitions([test], "test", load_bytesized32_jsonl, "textgame"))


def collect(out_dir: str | Path, episodes_per_game: int = 300, max_steps: int = 20, seed: int = 0,
            test_fraction: float = 0.2, heldout_games: tuple[str, ...] = ("refrigerate-milk",),
            rl_states: float = 0.0) -> dict:
    """Collect, dedup, split and write the data set; returns the stats that are also written to stats.json."""
    unknown = set(heldout_games) - set(GAMES)
    if unknown:
        raise ValueError(f"unknown held-out games {sorted(unknown)}; known: {sorted(GAMES)}")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if not 0.0 <= rl_states < 1.0:
        raise ValueError(f"rl_states must be in [0, 1), got {rl_states}")
    rng = random.Random(seed)
    rl_rng = random.Random(f"rl-states-{seed}")  # its own stream: train/test do not depend on rl_states
    splits: dict[str, list[dict]] = {"train": [], "test": [], "heldout_games": []}
    if rl_states > 0:
        splits.update(train_sft=[], train_rl=[])
    for game_id in sorted(GAMES):
        seen: set[tuple[str, str]] = set()
        unique: list[tuple[str, dict]] = []  # (state key, record), first occurrence of each (state, action)
        for record in play_episodes(game_id, episodes_per_game, max_steps, seed):
            state = _state_key(record)
            if (state, record["tick_state"]["lastAction"]) not in seen:
                seen.add((state, record["tick_state"]["lastAction"]))
                unique.append((state, record))
        if game_id in heldout_games:
            splits["heldout_games"] += [record for _, record in unique]
            continue
        states = sorted({state for state, _ in unique})
        rng.shuffle(states)
        n_test = max(1, round(test_fraction * len(states)))
        test_states = set(states[:n_test])
        rl_keys: set[str] = set()
        if rl_states > 0:
            train_states = states[n_test:]
            rl_rng.shuffle(train_states)
            rl_keys = set(train_states[: round(rl_states * len(train_states))])
        for state, record in unique:
            if state in test_states:
                splits["test"].append(record)
                continue
            splits["train"].append(record)
            if rl_states > 0:
                splits["train_rl" if state in rl_keys else "train_sft"].append(record)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stats: dict = {"seed": seed, "episodes_per_game": episodes_per_game, "heldout_game_ids": list(heldout_games)}
    for split, records in splits.items():
        records = [dict(record, state_id=i) for i, record in enumerate(records)]
        write_bytesized32_jsonl(records, out / f"{split}.jsonl")
        changed = sum(
            is_changed_transition(
                {"game_state": r["current_state"]["objects"]}, {"game_state": r["tick_state"]["objects"]}
            )
            for r in records
        )
        stats[split] = {"transitions": len(records), "changed": changed, "unchanged": len(records) - changed}
    stats["test_twins"] = twin_counts([record_to_transition(r) for r in splits["train"]],
                                      [record_to_transition(r) for r in splits["test"]])
    (out / "stats.json").write_text(json.dumps(stats, indent=2))
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = collector_parser(__doc__, out_default="data/textgame")
    parser.add_argument("--episodes-per-game", type=int, default=300)
    parser.add_argument("--max-steps", type=int, default=20, help="step limit per episode")
    parser.add_argument("--test-fraction", type=float, default=0.2, help="share of held-out current states")
    parser.add_argument("--heldout-games", default="refrigerate-milk", help="comma-separated game ids kept out of train/test")
    parser.add_argument("--rl-states", type=float, default=0.0,
                        help="also write train_sft.jsonl / train_rl.jsonl: this share of train states for RL only")
    args = parser.parse_args(argv)
    heldout = tuple(g for g in args.heldout_games.split(",") if g)
    stats = collect(args.out, args.episodes_per_game, args.max_steps, args.seed, args.test_fraction, heldout,
                    args.rl_states)
    print(json.dumps(stats, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
