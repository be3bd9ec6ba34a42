"""Web data: WMA json/jsonl (the real sample loads unchanged), RLVR-World parquet rows, bad files."""

import json
from pathlib import Path

import pytest

from rlvr_sim.data.wma import (
    WebDataError,
    compose_gold,
    load_rlvr_world_parquet,
    load_web_transitions,
    load_wma,
    parse_official_prompt,
    to_wma_record,
)
from rlvr_sim.metrics.web import item_change_f1

# WMA-format files: the project's own (tests/fixtures/wma, written by the web collector; tests/fixtures/README.md)
# always, and the real WebArena sample too where this machine has it (a parameter, not a skip)
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "wma" / "sample.json"
REAL = Path(__file__).resolve().parents[3].joinpath("shared", "samples", "wma_webarena_sample_tao_annotated.json")
SAMPLES = [FIXTURE] + ([REAL] if REAL.exists() else [])
TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'"
GOLD = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"
RECORD = {"objective": "Open orders", "current_action": "click [2] where [2] is link 'Orders'", "observation": TREE,
          "next_state_acctree": TREE, "url": "http://127.0.0.1:5000/", "previous_actions": ["None"], "step_idx": 0,
          "task_id": 3, "new_items": "None", "deleted_items": "None",
          "updated_items": "[1] RootWebArea 'Orders' focused: True", "next_state_tao": GOLD}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.parent.name)
def test_wma_sample_loads_unchanged(sample):
    raw = json.loads(sample.read_text())
    transitions = load_wma(sample)
    assert len(transitions) == len(raw) == 10
    for record, transition in zip(raw, transitions):
        assert transition.gold == record["next_state_tao"]
        assert transition.tree == record["observation"] and transition.action == record["current_action"]
        assert transition.objective == record["objective"] and transition.url == record["url"]
        assert compose_gold(record["new_items"], record["deleted_items"], record["updated_items"]).startswith("New items:")


def test_wma_json_and_jsonl_round_trip(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps([RECORD]))
    (tmp_path / "b.jsonl").write_text(json.dumps(RECORD) + "\n\n")
    for name in ("a.json", "b.jsonl"):
        (transition,) = load_web_transitions(tmp_path / name)
        assert transition.gold == GOLD and transition.task_id == 3
        assert to_wma_record(transition)["updated_items"] == RECORD["updated_items"]
    without_tao = {k: v for k, v in RECORD.items() if k != "next_state_tao"}
    (tmp_path / "c.json").write_text(json.dumps([without_tao]))
    assert item_change_f1(load_wma(tmp_path / "c.json")[0].gold, GOLD).f1 == 1.0


def test_bad_wma_files_name_the_problem(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(WebDataError, match="not valid JSON"):
        load_wma(tmp_path / "broken.json")
    (tmp_path / "missing.json").write_text(json.dumps([{k: v for k, v in RECORD.items() if k != "observation"}]))
    with pytest.raises(WebDataError, match="observation"):
        load_wma(tmp_path / "missing.json")
    nogold = {k: v for k, v in RECORD.items() if k not in ("next_state_tao", "new_items")}
    (tmp_path / "nogold.json").write_text(json.dumps([nogold]))
    with pytest.raises(WebDataError, match="gold"):
        load_wma(tmp_path / "nogold.json")
    with pytest.raises(WebDataError, match="format"):
        load_web_transitions(tmp_path / "data.csv")


def official_prompt(url: str, objective: str, tree: str, action: str) -> str:
    return ("You are an intelligent agent that predict next state ... Format Description: New items: ...\n"
            f"Now, let's start the task. Here's the task for you:\nURL: {url}\n OBJECTIVE: {objective}\n "
            f"PREVIOUS ACTION: None\n CURRENT OBSERVATION: {tree}\n CURRENT ACTION: {action}\n \n "
            "Please give the result directly in the format of the next state prediction.")


def test_rlvr_world_parquet_rows(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    prompt = official_prompt("http://host:7780/admin", "Open orders", TREE, "click [2] where [2] is link 'Orders'")
    row = {"task_id": 3, "step_idx": 1, "previous_actions": ["None"], "next_state_acctree": TREE,
           "new_items": "None", "updated_items": RECORD["updated_items"], "deleted_items": "None",
           "question": prompt, "answer": "[Rationale] ...\n" + GOLD, "data_source": "web_agent",
           "prompt": [{"role": "user", "content": prompt}], "ability": "web",
           "reward_model": {"style": "rule", "ground_truth": GOLD}, "extra_info": {"split": "train", "index": 0}}
    pq.write_table(pa.Table.from_pylist([row]), tmp_path / "train.parquet")
    (transition,) = load_rlvr_world_parquet(tmp_path / "train.parquet")
    assert transition.objective == "Open orders" and transition.url == "http://host:7780/admin"
    assert transition.tree == TREE and transition.action.startswith("click [2]")
    assert transition.gold == GOLD and transition.source_prompt == prompt
    fields = parse_official_prompt(prompt)
    assert fields["PREVIOUS ACTION"] == "None"
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 garbage")
    with pytest.raises(WebDataError, match="parquet"):
        load_rlvr_world_parquet(tmp_path / "bad.parquet")
    del row["question"], row["prompt"]
    pq.write_table(pa.Table.from_pylist([row]), tmp_path / "noprompt.parquet")
    with pytest.raises(WebDataError, match="objective"):
        load_rlvr_world_parquet(tmp_path / "noprompt.parquet")
