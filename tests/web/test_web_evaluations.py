"""Smoke run of evaluations/web.py on a tiny checkpoint (honest: the real script, a tiny budget)."""

import json

from rlvr_sim.envs.web.world_model_env import EMBEDDED_TOKENIZER_DIR
from rlvr_sim.evaluations import web as web_eval
from transformers import PreTrainedTokenizerFast

from rlvr_sim.models.lm import build_model, save_checkpoint

GOLD = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"
TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'"


def test_web_evaluation_writes_table(tmp_path):
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER_DIR))
    model = build_model("tiny-5m", len(tokenizer), max_positions=768, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2)
    save_checkpoint(tmp_path / "ckpt", model, tokenizer, {"task_args": {"max_new_tokens": 40}})
    data = tmp_path / "data"
    data.mkdir()
    record = {"objective": "o", "current_action": "click [2]", "observation": TREE, "next_state_tao": GOLD}
    (data / "test.jsonl").write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    out = tmp_path / "out"
    assert web_eval.main(["--model", f"Tiny={tmp_path / 'ckpt'}", "--data", str(data), "--out-dir", str(out)]) == 0
    rows = json.loads((out / "web.json").read_text())["rows"]
    assert [r["model"] for r in rows] == ["No-change baseline", "Tiny"]
    assert rows[0]["f1"] == 0.0 and rows[1]["n"] == 2 and 0.0 <= rows[1]["f1"] <= 100.0
    assert "| Tiny |" in (out / "web.md").read_text()
    assert "Web world model" in web_eval.results_tables(out)
