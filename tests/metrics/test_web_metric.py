"""Item-change F1: documented edge cases of the default scorer and the rlvr-world compatibility mode."""

import json
from pathlib import Path

import pytest

from rlvr_sim.metrics.web import item_change_f1, parse_item_sections

GOLD = "New items:\n[3] link 'A'\n[4] button 'B'\n\nDeleted items:\nNone\n\nUpdated items:\n[1] RootWebArea 'X'"
EMPTY = "New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\nNone"


def test_exact_answer_scores_one_and_order_duplicates_whitespace_ignored():
    assert item_change_f1(GOLD, GOLD) == (1.0, 1.0, 1.0)
    shuffled = "Updated items:\n  [1] RootWebArea 'X'  \nNew items:\n[4] button 'B'\n[3] link 'A'\n[3] link 'A'\nDeleted items:\nNone"
    assert item_change_f1(shuffled, GOLD).f1 == 1.0


def test_partial_prediction_precision_recall():
    pred = "New items:\n[3] link 'A'\n[9] link 'Z'\n\nDeleted items:\nNone\n\nUpdated items:\nNone"
    score = item_change_f1(pred, GOLD)
    assert score.precision == pytest.approx(0.5)
    assert score.recall == pytest.approx(1 / 3)
    assert score.f1 == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))


def test_sections_are_pooled_but_an_item_in_the_wrong_section_does_not_match():
    pred = "New items:\n[1] RootWebArea 'X'\n\nDeleted items:\nNone\n\nUpdated items:\nNone"
    assert item_change_f1(pred, GOLD).f1 == 0.0


def test_none_lines_and_empty_sides():
    assert item_change_f1(EMPTY, EMPTY) == (1.0, 1.0, 1.0)  # "no change" predicted for "no change"
    assert item_change_f1(GOLD, EMPTY) == (0.0, 0.0, 0.0)
    assert item_change_f1(EMPTY, GOLD) == (0.0, 0.0, 0.0)
    assert item_change_f1("New items:\nnone\nDeleted items:\nNONE\nUpdated items:", EMPTY).f1 == 1.0


def test_text_outside_sections_and_think_block_are_ignored():
    reasoning = "Let me think. The link opens a page.\n" + GOLD
    assert item_change_f1(reasoning, GOLD).f1 == 1.0
    think = "<think>New items:\n[77] link 'noise'</think>\n" + GOLD
    assert item_change_f1(think, GOLD).f1 == 1.0
    inline = "New items: [3] link 'A'\n[4] button 'B'\nDeleted items: None\nUpdated items: [1] RootWebArea 'X'"
    assert item_change_f1(inline, GOLD).f1 == 1.0


def test_unparseable_response_scores_zero_even_for_no_change():
    assert item_change_f1("I don't know", EMPTY) == (0.0, 0.0, 0.0)
    assert item_change_f1("", GOLD) == (0.0, 0.0, 0.0)
    assert parse_item_sections("no headers here") is None


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="compat"):
        item_change_f1(GOLD, GOLD, compat="webarena")
    with pytest.raises(ValueError, match="gold"):
        item_change_f1(GOLD, "not an answer")
    with pytest.raises(TypeError):
        item_change_f1(None, GOLD)  # type: ignore[arg-type]


def test_rlvr_world_compat_reproduces_official_quirks():
    # the official scorer counts "None" lines as items: an empty prediction matches the empty Deleted section
    score = item_change_f1(EMPTY, GOLD, compat="rlvr-world")
    assert score.precision == pytest.approx(1 / 3) and score.recall == pytest.approx(1 / 4)
    # headers are case-sensitive and text after a header on its line is dropped
    lower = "new items:\n[3] link 'A'\nDeleted items:\nNone"
    assert item_change_f1(lower, GOLD, compat="rlvr-world").f1 == pytest.approx(2 * 1 * 0.25 / 1.25)
    inline = "New items: [3] link 'A'\nDeleted items:\nNone"
    assert item_change_f1(inline, GOLD, compat="rlvr-world").recall == pytest.approx(0.25)
    # no header at all: nothing predicted, precision 0 by the official denominator rule
    assert item_change_f1("garbage", GOLD, compat="rlvr-world") == (0.0, 0.0, 0.0)
    assert item_change_f1(GOLD, GOLD, compat="rlvr-world").f1 == 1.0


WMA_SAMPLES = [Path(__file__).resolve().parents[1] / "fixtures" / "wma" / "sample.json"]  # the project's own
_REAL_WMA = Path(__file__).resolve().parents[3].joinpath("shared", "samples", "wma_webarena_sample_tao_annotated.json")
WMA_SAMPLES += [_REAL_WMA] if _REAL_WMA.exists() else []  # and the real WebArena sample where this machine has it


@pytest.mark.parametrize("sample", WMA_SAMPLES, ids=lambda path: path.parent.name)
def test_wma_gold_answers_score_one_against_themselves(sample):
    records = json.loads(sample.read_text())
    assert records
    for record in records:
        assert item_change_f1(record["next_state_tao"], record["next_state_tao"]).f1 == 1.0
        assert item_change_f1(record["next_state_tao"], record["next_state_tao"], compat="rlvr-world").f1 == 1.0
