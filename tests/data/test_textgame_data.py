"""ByteSized32 jsonl and RLVR-World parquet loaders, and the text-game codec/task."""

import json
from pathlib import Path

import pytest
from rlvr_sim.envs.textgame.collect import collect

from rlvr_sim.data.bytesized32 import (
    TextGameDataError,
    load_bytesized32_jsonl,
    load_rlvr_world_parquet,
    load_transitions,
    write_rlvr_world_parquet,
)
from rlvr_sim.metrics.textgame import make_diff, text_game_reward
from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.bpe import train_tokenizer
from rlvr_sim.tasks.textgame import encode_answer_text, encode_prompt_text

# ByteSized32-format files: the project's own (tests/fixtures/bytesized32, written by the text-game collector;
# tests/fixtures/README.md) always, and the real sample too where this machine has it (a parameter, not a skip)
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bytesized32" / "sample.jsonl"
REAL_SAMPLE = Path(__file__).resolve().parents[3].joinpath("shared", "samples", "bytesized32_format_sample.jsonl")
SAMPLES = [FIXTURE] + ([REAL_SAMPLE] if REAL_SAMPLE.exists() else [])


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("textgame")
    collect(out, episodes_per_game=8, max_steps=8, seed=2, test_fraction=0.25)
    return out


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.parent.name)
def test_bytesized32_sample_loads_unchanged(sample):
    transitions = load_bytesized32_jsonl(sample)
    rows = [json.loads(line) for line in sample.read_text().splitlines() if line.strip()]
    assert len(transitions) == len(rows) > 0
    for t, row in zip(transitions, rows):
        assert t.action == row["tick_state"]["lastAction"] and t.uuid_base == row["current_state"]["max_UUID"]
        assert t.gold_state["game_state"][-1] == row["next_score_state"]
        gold = encode_answer_text(t)
        assert text_game_reward(gold, t.current_state, t.gold_state) == 1.0


def test_jsonl_transition_kinds(data_dir):
    full = load_bytesized32_jsonl(data_dir / "train.jsonl")
    action = load_bytesized32_jsonl(data_dir / "train.jsonl", kind="action")
    tick = load_bytesized32_jsonl(data_dir / "train.jsonl", kind="tick")
    assert "score" in full[0].gold_state["game_state"][-1]
    assert all("uuid" in o for o in action[0].gold_state["game_state"] + tick[0].current_state["game_state"])
    with pytest.raises(ValueError):
        load_bytesized32_jsonl(data_dir / "train.jsonl", kind="both")


def test_malformed_jsonl_names_the_problem(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"game": "x"}\n')
    with pytest.raises(TextGameDataError, match="missing field"):
        load_bytesized32_jsonl(bad)
    bad.write_text("not json\n")
    with pytest.raises(TextGameDataError, match=":1: not valid JSON"):
        load_bytesized32_jsonl(bad)
    with pytest.raises(FileNotFoundError):
        load_transitions(tmp_path / "missing.jsonl")


def test_rlvr_world_parquet_roundtrip_and_errors(data_dir, tmp_path):
    pytest.importorskip("pyarrow")
    transitions = load_bytesized32_jsonl(data_dir / "test.jsonl")
    official_like = [
        "You are a simulator of a text game...\nThe current game UUID base is 99\n"
        "Here is the game that you need to simulate:\nTask Description:\n"
        f"{t.task_description}\nHere is the game state:\n...\nThe current game UUID base is {t.uuid_base}\n"
        f"The action to take is:\n{t.action}\n"
        for t in transitions
    ]
    path = tmp_path / "test_state_difference.parquet"
    write_rlvr_world_parquet(transitions, path, official_like)
    loaded = load_rlvr_world_parquet(path)
    assert len(loaded) == len(transitions)
    for a, b in zip(loaded, transitions):
        assert a.current_state == b.current_state and a.gold_state == b.gold_state and a.action == b.action
        assert a.uuid_base == b.uuid_base and a.task_description == b.task_description  # last UUID base wins
    import pyarrow as pa
    import pyarrow.parquet as pq

    sft_row = {"prompt": [{"role": "user", "content": "q"}], "reward_model": {"ground_truth": "<think>...</think>"},
               "extra_info": {"data_state": json.dumps(transitions[0].current_state), "data_action": "look"}}
    pq.write_table(pa.Table.from_pylist([sft_row]), tmp_path / "sft.parquet")
    with pytest.raises(TextGameDataError, match="ground_truth"):
        load_rlvr_world_parquet(tmp_path / "sft.parquet")
    (tmp_path / "corrupt.parquet").write_bytes(b"not parquet")
    with pytest.raises(TextGameDataError, match="not a readable parquet"):
        load_rlvr_world_parquet(tmp_path / "corrupt.parquet")


def test_codec_and_task_reward(data_dir):
    task = make_task("textgame", data_dir=str(data_dir))
    train = task.examples("train")
    assert train and task.vocab_size == len(task.tokenizer)
    t = task.transitions("train")[0]
    assert encode_prompt_text(t).startswith("Task: ") and f"Action: {t.action}" in encode_prompt_text(t)
    assert "Objects:" in encode_prompt_text(t) and "Objects:" not in encode_prompt_text(t, with_rules=False)
    answer = encode_answer_text(t)
    assert answer.startswith("The final answer is: ") and json.loads(answer.split(": ", 1)[1]) == make_diff(
        t.current_state, t.gold_state)
    example = train[0]
    assert example.answer_ids[-1] == task.eos_token_id
    completions = [example.answer_ids, task.tokenizer.encode("garbage", add_special_tokens=False)]
    rewards = task.reward([example.prompt_ids] * 2, completions, [example.metadata] * 2)
    assert rewards[0] == pytest.approx(1.3 if example.metadata["changed"] else 0.3) and rewards[1] == 0.0
    binary = make_task("textgame", data_dir=str(data_dir), reward_type="binary", tokenizer=task.tokenizer)
    assert binary.reward([example.prompt_ids], [example.answer_ids], [example.metadata]) == [1.0]
    assert max(len(e.prompt_ids) for e in train) <= task.max_prompt_tokens
    with pytest.raises(ValueError, match="reward_type"):
        make_task("textgame", data_dir=str(data_dir), reward_type="dense", tokenizer=task.tokenizer)
    with pytest.raises(FileNotFoundError, match="collect"):
        task.examples("nonexistent")


def test_trained_tokenizer_roundtrips_text():
    tokenizer = train_tokenizer(["The final answer is: {\"modified\":[]}"] * 20 + ["Task: boil water"] * 20, 300)
    text = 'The final answer is: {"modified":[],"removed":[7],"score":{}}'
    assert tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text
    assert tokenizer.eos_token == "<eos>" and tokenizer.pad_token_id is not None
    digits = train_tokenizer(['"temperature":75}', '"level":110}'] * 20, 300, individual_digits=True)
    plain = train_tokenizer(['"temperature":75}', '"level":110}'] * 20, 300)
    assert "75" in plain.tokenize('"temperature":75}')  # plain BPE merges a frequent number
    assert digits.tokenize('"temperature":75}')[-3:] == ["7", "5", "}"]
    assert digits.decode(digits.encode('"level":110}', add_special_tokens=False)) == '"level":110}'


def test_train_rebalancing_keeps_changed_and_a_seeded_share_of_unchanged(data_dir):
    full = make_task("textgame", data_dir=str(data_dir))
    rebalanced = make_task("textgame", data_dir=str(data_dir), tokenizer=full.tokenizer, train_unchanged_fraction=0.25)
    all_train, train = full.examples("train"), rebalanced.examples("train")
    n_changed = sum(e.metadata["changed"] for e in all_train)
    assert sum(e.metadata["changed"] for e in train) == n_changed
    n_unchanged = len(train) - n_changed
    assert n_unchanged == min(sum(not e.metadata["changed"] for e in all_train), round(n_changed / 3))
    assert len(rebalanced.examples("test")) == len(full.examples("test"))  # only train is rebalanced
    with pytest.raises(ValueError, match="train_unchanged_fraction"):
        make_task("textgame", data_dir=str(data_dir), tokenizer=full.tokenizer, train_unchanged_fraction=1.0)


def test_rl_states_split_train_states_in_two_without_touching_train_or_test(tmp_path):
    plain, split = tmp_path / "plain", tmp_path / "split"
    collect(plain, episodes_per_game=8, max_steps=8, seed=2, test_fraction=0.25)
    stats = collect(split, episodes_per_game=8, max_steps=8, seed=2, test_fraction=0.25, rl_states=0.5)
    for name in ("train.jsonl", "test.jsonl", "heldout_games.jsonl"):
        assert (plain / name).read_bytes() == (split / name).read_bytes()

    def rows(name):
        return [json.loads(line) for line in (split / name).read_text().splitlines()]

    def key(row):
        return json.dumps([row["game"], row["current_state"]["objects"], row["current_score_state"]], sort_keys=True)

    def strip(row):
        return json.dumps({k: v for k, v in row.items() if k != "state_id"}, sort_keys=True)

    train, sft, rl = rows("train.jsonl"), rows("train_sft.jsonl"), rows("train_rl.jsonl")
    assert sorted(map(strip, sft + rl)) == sorted(map(strip, train))  # a partition of train, nothing lost
    assert sft and rl and not {key(r) for r in sft} & {key(r) for r in rl}  # no state on both sides
    assert [r["state_id"] for r in rl] == list(range(len(rl)))
    assert stats["train_sft"]["transitions"] + stats["train_rl"]["transitions"] == stats["train"]["transitions"]
    task = make_task("textgame", data_dir=str(split), tokenizer=train_tokenizer(["The final answer is: {}"], 300))
    assert len(task.transitions("train_rl")) == len(rl)
    with pytest.raises(ValueError, match="rl_states"):
        collect(tmp_path / "bad", episodes_per_game=2, max_steps=2, rl_states=1.0)


@pytest.mark.parametrize("args, expected", [
    ({}, [(33, "84b7cdab9e021ce3"), (12, "e14b0e93c50b4f87")]),
    ({"reward_type": "binary", "max_prompt_tokens": 330, "max_new_tokens": 60, "train_unchanged_fraction": 0.2},
     [(20, "773ee00dfe8a777d"), (7, "b4e88d389353369d")]),
])
def test_examples_and_rewards_are_pinned(tmp_path, args, expected, examples_digest):
    """Examples (ids, metadata) and rewards on a small collected data set, with the embedded tokenizer, equal
    those of the task before it shared `TextTransitionTask` with the web task (hashes taken then)."""
    collect(tmp_path, episodes_per_game=2, max_steps=5, seed=3, test_fraction=0.25)
    task = make_task("textgame", data_dir=str(tmp_path), **args)
    assert [examples_digest(task, "train"), examples_digest(task, "test")] == expected
