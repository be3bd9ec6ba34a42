"""Smoke run of evaluations/web.py on a tiny checkpoint (honest: the real script, a tiny budget)."""

import json

from rlvr_sim.envs.web.world_model_env import EMBEDDED_TOKENIZER_DIR
from rlvr_sim.evaluations import web as web_eval
from transformers import PreTrainedTokenizerFast

from rlvr_sim.models.lm import build_model, save_checkpoint

GOLD = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"
TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'"


def tiny_checkpoint_and_data(tmp_path):
    """An untrained tiny checkpoint at tmp_path/ckpt (the embedded web tokenizer) and an empty data folder."""
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER_DIR))
    model = build_model("tiny-5m", len(tokenizer), max_positions=768, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2)
    save_checkpoint(tmp_path / "ckpt", model, tokenizer, {"task_args": {"max_new_tokens": 40}})
    data = tmp_path / "data"
    data.mkdir()
    return data


def test_web_evaluation_writes_table(tmp_path):
    data = tiny_checkpoint_and_data(tmp_path)
    record = {"objective": "o", "current_action": "click [2]", "observation": TREE, "next_state_tao": GOLD}
    (data / "test.jsonl").write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    out = tmp_path / "out"
    assert web_eval.main(["--model", f"Tiny={tmp_path / 'ckpt'}", "--data", str(data), "--out", str(out)]) == 0
    rows = json.loads((out / "web.json").read_text())["rows"]
    assert [r["model"] for r in rows] == ["No-change baseline", "Tiny"]
    assert rows[0]["f1"] == 0.0 and rows[1]["n"] == 2 and 0.0 <= rows[1]["f1"] <= 100.0
    assert "| Tiny |" in (out / "web.md").read_text()
    assert "Web world model" in web_eval.results_tables(out)


def test_web_evaluation_scores_transitions_without_a_training_twin_apart(tmp_path):
    """--twins-of: test transitions whose page + action are in the training data are counted and scored apart."""
    data = tiny_checkpoint_and_data(tmp_path)
    twin = {"objective": "o", "current_action": "click [2]", "observation": TREE, "next_state_tao": GOLD}
    other = {**twin, "current_action": "hover [2]"}
    (data / "test.jsonl").write_text("\n".join(json.dumps(r) for r in (twin, other, other)) + "\n")
    (data / "train.jsonl").write_text(json.dumps({**twin, "objective": "another objective"}) + "\n")
    out = tmp_path / "out"
    args = ["--data", str(data), "--twins-of", str(data), "--out", str(out)]
    assert web_eval.main(["--model", f"A={tmp_path / 'ckpt'}", "--model", f"B={tmp_path / 'ckpt'}", *args]) == 0
    report = json.loads((out / "web.json").read_text())
    assert report["twins"] == [True, False, False]
    baseline, a, b = report["rows"]
    assert baseline["no_twin"]["n"] == 2 and baseline["twin"]["n"] == 1 and baseline["no_twin"]["f1_ci"] == [0.0, 0.0]
    assert a["no_twin"]["f1"] == b["no_twin"]["f1"] and len(a["f1_per_transition"]) == 3
    table = (out / "web.md").read_text()
    assert "| A |" in table and "2 / 1 |" in table and "1 of the 3 test transitions have a training twin" in table
    assert "B - A: +0.00 F1" in table and "A - No-change baseline: " in table


def test_models_with_different_answer_budgets_are_scored_on_the_same_transitions(tmp_path):
    """One transition set for every row: chosen by the largest budget (or --max-new-tokens), and every model
    generates up to it, so a short-budget model is scored (and fails) on the long answers too."""
    from rlvr_sim.models.lm import load_model

    data = tiny_checkpoint_and_data(tmp_path)
    model, tokenizer, _ = load_model(str(tmp_path / "ckpt"))
    save_checkpoint(tmp_path / "long", model, tokenizer, {"task_args": {"max_new_tokens": 200}})
    long_gold = "New items:\n" + "\n".join(f"[{i}] link 'Product number {i}'" for i in range(3, 12)) + \
        "\n\nDeleted items:\nNone\n\nUpdated items:\nNone"
    assert 40 < len(tokenizer(long_gold)["input_ids"]) < 199
    records = [{"objective": "o", "current_action": "click [2]", "observation": TREE, "next_state_tao": GOLD},
               {"objective": "o", "current_action": "click [1]", "observation": TREE, "next_state_tao": long_gold}]
    (data / "test.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert web_eval.answer_budget(tmp_path / "ckpt") == 40 and web_eval.answer_budget(tmp_path / "long") == 200
    out = tmp_path / "out"
    models = ["--model", f"Short={tmp_path / 'ckpt'}", "--model", f"Long={tmp_path / 'long'}"]
    assert web_eval.main([*models, "--data", str(data), "--out", str(out)]) == 0
    report = json.loads((out / "web.json").read_text())
    assert [row["n"] for row in report["rows"]] == [2, 2, 2] and len(report["keys"]) == 2
    assert "answers within 200 tokens" in report["note"]
    assert web_eval.main([*models, "--data", str(data), "--out", str(out), "--max-new-tokens", "40"]) == 0
    assert [row["n"] for row in json.loads((out / "web.json").read_text())["rows"]] == [1, 1, 1]
