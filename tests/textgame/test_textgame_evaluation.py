"""evaluations/textgame.py: Table-1 rows for any checkpoint on any data file, JSON + markdown out."""

import json

import pytest
import torch
from rlvr_sim.envs.textgame.collect import collect
from rlvr_sim.evaluations.textgame import evaluate_predictions, main, render_markdown
from transformers import PreTrainedTokenizerFast

from rlvr_sim.data.bytesized32 import load_transitions
from rlvr_sim.models.lm import build_model, save_checkpoint
from rlvr_sim.tasks.textgame import EMBEDDED_TOKENIZER, encode_answer_text


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval")
    collect(root / "data", episodes_per_game=4, max_steps=6, seed=3)
    torch.manual_seed(0)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER))
    model = build_model("tiny-5m", vocab_size=len(tokenizer), max_positions=512, hidden_size=32,
                        intermediate_size=64, num_attention_heads=2, num_hidden_layers=1)
    save_checkpoint(root / "ckpt", model, tokenizer, {"task_args": {"with_rules": False, "max_new_tokens": 8}})
    return root


def test_gold_responses_score_100_and_wrong_ones_0(setup):
    transitions = load_transitions(setup / "data" / "test.jsonl")
    gold = evaluate_predictions(transitions, [encode_answer_text(t) for t in transitions])
    assert gold["overall"] == 100.0 and gold["mean_binary_reward"] == 1.0 and gold["n"] == len(transitions)
    empty = evaluate_predictions(transitions, ["The final answer is: {\"modified\": [], \"removed\": []}"] * len(transitions))
    assert empty["changed"] == 0.0 and empty["overall"] < 100.0
    with pytest.raises(ValueError):
        evaluate_predictions(transitions, [])


def test_script_writes_json_and_markdown(setup):
    out = setup / "results" / "tg"
    assert main(["--checkpoint", f"random={setup / 'ckpt'}", "--data", f"test={setup / 'data' / 'test.jsonl'}",
                 "--out", str(out), "--limit", "5", "--max-new-tokens", "8"]) == 0
    results = json.loads(out.with_suffix(".json").read_text())
    row = results["datasets"]["test"]["rows"]["random"]
    assert row["n"] == 5 and row["overall"] == 0.0 and {"unchanged", "changed", "mean_task_specific_reward"} <= set(row)
    assert out.with_suffix(".md").read_text() == render_markdown(results)
    assert "| random |" in out.with_suffix(".md").read_text()
