"""WebTask: prompt codec (trimming), examples, F1 reward with its documented fallback."""

import json

import pytest

from rlvr_sim.tasks import make_task
from rlvr_sim.tasks.bpe import train_tokenizer
from rlvr_sim.tasks.web import WebTask, format_prompt, tree_body, url_path

TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n" + "\n".join(
    f"\t[{i}] link 'Product number {i}'" for i in range(2, 80))
GOLD = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"


@pytest.fixture()
def data_dir(tmp_path):
    record = {"objective": "Open orders", "current_action": "click [2]", "observation": TREE, "url": "http://127.0.0.1:5555/x?y=1",
              "next_state_tao": GOLD}
    for split in ("train", "test"):
        (tmp_path / f"{split}.jsonl").write_text("\n".join(json.dumps(record) for _ in range(3)) + "\n")
    return tmp_path


def test_prompt_drops_origin_and_header_and_trims_long_trees(data_dir):
    assert url_path("http://127.0.0.1:5555/x?y=1") == "/x?y=1" and url_path("/a") == "/a"
    assert tree_body(TREE)[0] == "[1] RootWebArea 'Shop' focused: True"
    tokenizer = train_tokenizer([format_prompt("Open orders", "/", "click [2]", tree_body(TREE)) + GOLD], 400)
    task = WebTask(tokenizer=tokenizer, data_dir=str(data_dir), max_prompt_tokens=120, max_new_tokens=64)
    (example, *_) = task.examples("train")
    assert len(example.prompt_ids) <= 120
    text = tokenizer.decode(example.prompt_ids)
    assert "URL: /x?y=1" in text and text.rstrip().endswith("CHANGES:") and "...\nCHANGES:" in text
    assert "Tab 0" not in text
    assert example.answer_ids[-1] == task.eos_token_id


def test_reward_is_item_change_f1_with_zero_for_garbage(data_dir):
    task = make_task("web", data_dir=str(data_dir))
    (example, *_) = task.examples("test")
    gold_ids = example.answer_ids
    garbage = task.tokenizer.encode("I have no idea", add_special_tokens=False)
    partial = task.tokenizer.encode("New items:\n[9] link 'x'\nDeleted items:\nNone\nUpdated items:\n"
                                    "[1] RootWebArea 'Orders' focused: True", add_special_tokens=False)
    rewards = task.reward([example.prompt_ids] * 3, [gold_ids, garbage, partial], [example.metadata] * 3)
    assert rewards[0] == 1.0 and rewards[1] == 0.0 and rewards[2] == pytest.approx(2 / 3)
    assert task.generation_spec().stop_token_ids == [task.eos_token_id]
    with pytest.raises(KeyError, match="gold"):
        task.reward([[1]], [[1]], [{}])


def test_missing_data_dir_names_the_collect_command(tmp_path):
    task = WebTask(tokenizer=train_tokenizer(["a b c"], 300), data_dir=str(tmp_path / "none"))
    with pytest.raises(FileNotFoundError, match="training/collect.py --task web"):
        task.examples("train")


def test_several_data_dirs_are_read_as_one_data_set(data_dir, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    record = {"objective": "Open customers", "current_action": "click [3]", "observation": TREE, "url": "/",
              "next_state_tao": GOLD}
    for split in ("train", "test"):
        (other / f"{split}.jsonl").write_text(json.dumps(record) + "\n")
    task = WebTask(tokenizer=train_tokenizer(["a b c"], 300), data_dir=[str(data_dir), str(other)])
    train = task.transitions("train")
    assert len(train) == 4 and train[-1].objective == "Open customers" and train[0].objective == "Open orders"
    with pytest.raises(ValueError, match="empty list"):
        WebTask(tokenizer=train_tokenizer(["a b c"], 300), data_dir=[])


def start_page_transitions(out):
    """Train/test jsonl of transitions between the recorded start pages of the real site (no browser)."""
    from rlvr_sim.envs.web.tree import format_changes, item_changes

    from rlvr_sim.resources import asset_path

    pages = json.loads(asset_path("web_start_pages.json").read_text())
    keys = sorted(pages, key=int)
    records = []
    for i, key in enumerate(keys):
        before, after = pages[key], pages[keys[(i + 1) % len(keys)]]
        records.append(json.dumps({"objective": f"objective {key}", "current_action": f"click [{i + 2}]",
                                   "observation": before["tree"], "url": "http://127.0.0.1:5000" + before["url"],
                                   "next_state_tao": format_changes(item_changes(before["tree"], after["tree"]))}))
    for split, part in (("train", records[:16]), ("test", records[16:])):
        (out / f"{split}.jsonl").write_text("\n".join(part) + "\n")


@pytest.mark.parametrize("args, expected", [
    ({}, [(12, "805dd207daf424a4"), (8, "ed1a398f3bb5e763")]),
    ({"max_prompt_tokens": 300, "max_new_tokens": 120}, [(6, "ec8220c41388c3a0"), (4, "b1df58799722c569")]),
])
def test_examples_and_rewards_are_pinned(tmp_path, args, expected, examples_digest):
    """Examples (trimmed prompts, answers, metadata) and rewards with the embedded tokenizer equal those of
    the task before it shared `TextTransitionTask` with the text-game task (hashes taken then)."""
    start_page_transitions(tmp_path)
    task = make_task("web", data_dir=str(tmp_path), **args)
    assert [examples_digest(task, "train"), examples_digest(task, "test")] == expected
