"""evaluations/textgame.py: Table-1 rows for any checkpoint on any data file, JSON + markdown out."""

import json

import pytest
import torch
from rlvr_sim.envs.textgame.collect import collect
from rlvr_sim.evaluations.textgame import evaluate_predictions, main, pass_at_k, render_markdown
from transformers import PreTrainedTokenizerFast

from rlvr_sim.data.bytesized32 import load_transitions
from rlvr_sim.metrics.textgame import make_diff
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


class EveryThirdSeedIsRight:
    """A stand-in world model: the gold answer when the sample's seed is a multiple of 3, else no change."""

    def predict(self, transitions, temperature=0.0, seeds=None):
        from rlvr_sim.envs.textgame.world_model_env import Prediction

        seeds = seeds or [1] * len(transitions)
        return [Prediction(encode_answer_text(t) if s % 3 == 0 else "The final answer is: {\"modified\": []}", None,
                           None) for t, s in zip(transitions, seeds)]


def test_pass_at_k_counts_a_transition_once_any_sample_is_right(setup):
    transitions = load_transitions(setup / "data" / "test.jsonl")[:7]  # sample j of item i is seeded 7j + i
    no_change_right = [evaluate_predictions([t], ["The final answer is: {\"modified\": []}"])["overall"] == 100.0
                       for t in transitions]
    assert not all(no_change_right)
    for k, seeds_of in ((1, lambda i: [i]), (2, lambda i: [i, 7 + i])):
        report = pass_at_k(EveryThirdSeedIsRight(), transitions, k, batch_size=3)
        hit = [any(s % 3 == 0 for s in seeds_of(i)) or no_change_right[i] for i in range(7)]
        assert report["overall"] == round(100 * sum(hit) / 7, 2) and report["k"] == k
    with pytest.raises(ValueError, match="k >= 1"):
        pass_at_k(EveryThirdSeedIsRight(), transitions, 0)


def test_script_pass_at_adds_a_sampled_table(setup):
    out = setup / "results" / "tg_pass"
    assert main(["--checkpoint", f"random={setup / 'ckpt'}", "--data", f"test={setup / 'data' / 'test.jsonl'}",
                 "--out", str(out), "--limit", "3", "--max-new-tokens", "8", "--pass-at", "2"]) == 0
    row = json.loads(out.with_suffix(".json").read_text())["datasets"]["test"]["rows"]["random"]
    assert row["pass_at_k"]["k"] == 2 and row["pass_at_k"]["n"] == 3
    assert "pass@2" in out.with_suffix(".md").read_text()


def test_every_data_set_gets_the_no_change_row(setup):
    """The trivial baseline is scored by the same reward: right exactly where nothing changes, objects and score
    record both (an "Unchanged" transition of Table 1 can still end the game: its score record changes)."""
    from rlvr_sim.evaluations.textgame import NO_CHANGE

    out = setup / "results" / "tg_baseline"
    assert main(["--checkpoint", f"random={setup / 'ckpt'}", "--data", f"test={setup / 'data' / 'test.jsonl'}",
                 "--out", str(out), "--limit", "12", "--max-new-tokens", "8"]) == 0
    rows = json.loads(out.with_suffix(".json").read_text())["datasets"]["test"]["rows"]
    assert list(rows) == [NO_CHANGE, "random"]
    baseline = rows[NO_CHANGE]
    assert 0 < baseline["n_unchanged"] < baseline["n"] == 12  # the fixture holds both kinds
    transitions = load_transitions(setup / "data" / "test.jsonl")[:12]
    still = sum(make_diff(t.current_state, t.gold_state) == {"modified": [], "removed": [], "score": {}} for t in transitions)
    assert baseline["changed"] == 0.0 and baseline["overall"] == round(100 * still / 12, 2)
    assert baseline["unchanged"] == round(100 * still / baseline["n_unchanged"], 2)
    assert f"| {NO_CHANGE} |" in out.with_suffix(".md").read_text()
