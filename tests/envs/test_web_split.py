"""The web collector's split: by page + action (no test transition has a training twin), and the twin count."""

import json
from collections import Counter

import pytest
from rlvr_sim.envs.web.collect import collect, count_twins, key_split, transition_key

from rlvr_sim.data.wma import WebTransition, load_wma, to_wma_record

TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'"
GOLD = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"


def record(objective: str, action: str, tree: str = TREE, url: str = "/") -> str:
    return json.dumps(to_wma_record(WebTransition(objective=objective, action=action, tree=tree, gold=GOLD, url=url)))


def test_key_ignores_objective_url_and_header_not_page_or_action():
    key = transition_key(TREE, "click [2]")
    assert key == transition_key(TREE.replace("Tab 0 (current): Shop", "Tab 0 (current): Other"), " click  [2] ")
    assert key != transition_key(TREE, "click [1]")
    assert key != transition_key(TREE.replace("'Orders'", "'Products'"), "click [2]")
    assert key != transition_key(TREE.replace("\t[2]", "[2]"), "click [2]")  # indentation is part of the page


def test_key_split_is_a_function_of_the_key_with_the_asked_fraction():
    keys = [transition_key(TREE, f"type [2] [{i}] [0]") for i in range(4000)]
    assert all(key_split(k, 0.0) == "train" for k in keys) and all(key_split(k, 1.0) == "test" for k in keys)
    share = sum(key_split(k, 0.2) == "test" for k in keys) / len(keys)
    assert 0.17 < share < 0.23
    assert [key_split(k, 0.2) for k in keys] == [key_split(k, 0.2) for k in keys]


def test_count_twins_counts_same_page_and_action_whatever_the_objective(tmp_path):
    train, test = tmp_path / "train", tmp_path / "test"
    train.mkdir(), test.mkdir()
    (train / "train.jsonl").write_text(record("Open orders", "click [2]") + "\n")
    (test / "test.jsonl").write_text("\n".join([
        record("Open orders", "click [2]"),            # same prompt
        record("Ship order 3", "click [2]", url="/x"),  # same page and action, other objective/URL: a twin
        record("Open orders", "click [1]"),             # other action
    ]) + "\n")
    assert count_twins([train], test) == {"test": 3, "key_twins": 2, "prompt_twins": 1}
    assert count_twins([], test)["key_twins"] == 0


@pytest.mark.browser
def test_key_split_has_no_twins_and_the_same_transitions_as_the_episode_split(tmp_path):
    """A small real collection: the key split files the episode split's transitions so that no test
    transition's page + action is in train."""
    kwargs = {"episodes": 6, "seed": 5, "test_fraction": 0.4, "max_steps": 3}
    by_key = collect(tmp_path / "key", **kwargs)
    by_episode = collect(tmp_path / "episode", split="episode", **kwargs)
    assert by_key["test"] > 0 and by_key["train"] > 0
    assert sum(by_key.values()) == sum(by_episode.values())

    def transitions(directory):
        return Counter((t.objective, t.action, t.tree, t.gold) for split in ("train", "test")
                       for t in load_wma(directory / f"{split}.jsonl"))

    assert transitions(tmp_path / "key") == transitions(tmp_path / "episode")
    assert count_twins([tmp_path / "key" / "train.jsonl"], tmp_path / "key" / "test.jsonl")["key_twins"] == 0
    for split in ("train", "test"):
        assert all(key_split(transition_key(t.tree, t.action), 0.4) == split
                   for t in load_wma(tmp_path / "key" / f"{split}.jsonl"))
    with pytest.raises(ValueError, match="split"):
        collect(tmp_path / "bad", 1, split="random")
