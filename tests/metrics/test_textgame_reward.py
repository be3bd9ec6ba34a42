"""Reward and metric edge cases for text-game state prediction (default semantics and rlvr-world compat)."""

import copy
import json

import pytest

from rlvr_sim.metrics.textgame import (
    AnswerParseError,
    accuracy_report,
    apply_diff,
    changed_pairs,
    compare_states,
    format_accuracy_table,
    is_changed_transition,
    make_diff,
    parse_answer,
    text_game_reward,
)

SCORE_0 = {"score": 2, "gameOver": False, "gameWon": False}
SCORE_1 = {"score": 4, "gameOver": True, "gameWon": True}


def obj(name, uuid, props, contains=()):
    return {"name": name, "uuid": uuid, "type": name.title(), "properties": dict(props), "contains": list(contains)}


@pytest.fixture
def heating():
    """Water heats on a lit stove: one property changes, nothing created."""
    current = {"game_state": [obj("stove", 0, {"on": True}, ["pot"]), obj("pot", 1, {}, ["water"]),
                              obj("water", 2, {"temperature": 60}), SCORE_0]}
    gold = copy.deepcopy(current)
    gold["game_state"][2]["properties"]["temperature"] = 80
    return current, gold


@pytest.fixture
def boiling():
    """Water boils away: water (uuid 2) removed, steam (uuid 3 = max_UUID) created, score changes."""
    current = {"game_state": [obj("stove", 0, {"on": True}, ["pot"]), obj("pot", 1, {}, ["water"]),
                              obj("water", 2, {"temperature": 80}), SCORE_0]}
    gold = {"game_state": [obj("stove", 0, {"on": True}, ["pot"]), obj("pot", 1, {}, ["steam"]),
                           obj("steam", 3, {"temperature": 100}), SCORE_1]}
    return current, gold


@pytest.fixture
def unchanged(heating):
    current, _ = heating
    return current, copy.deepcopy(current)


def answer(diff, marker=True):
    return ("The final answer is: " if marker else "") + json.dumps(diff)


def exact(current, gold):
    return answer(make_diff(current, gold))


def test_exact_answer_scores_max(heating):
    current, gold = heating
    assert text_game_reward(exact(current, gold), current, gold) == 1.0
    assert text_game_reward(exact(current, gold), current, gold, "task_specific") == pytest.approx(1.3)


def test_exact_answer_with_created_and_removed_object_scores_max(boiling):
    current, gold = boiling
    diff = make_diff(current, gold)
    assert [o["uuid"] for o in diff["modified"]] == [1, 3] and diff["removed"] == [2]
    assert text_game_reward(answer(diff), current, gold) == 1.0
    assert text_game_reward(answer(diff), current, gold, "task_specific") == pytest.approx(1.3)


def test_unchanged_transition_max_is_0_3(unchanged):
    current, gold = unchanged
    response = answer({"modified": [], "removed": [], "score": {}})
    assert not is_changed_transition(current, gold)
    assert text_game_reward(response, current, gold) == 1.0
    assert text_game_reward(response, current, gold, "task_specific") == pytest.approx(0.3)


def test_no_change_answer_on_changed_transition(heating):
    current, gold = heating
    response = answer({"modified": [], "removed": [], "score": {}})
    assert text_game_reward(response, current, gold) == 0.0
    # 5 checks (stove on + contains, pot contains, water temperature + contains), one wrong
    comparison = compare_states(apply_diff(current, parse_answer(response)), gold)
    assert comparison.num_errors == 1
    expected = 0.09 * comparison.objects_accuracy + 0.01 * 1.0
    assert text_game_reward(response, current, gold, "task_specific") == pytest.approx(expected)


def test_one_wrong_property(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    diff["modified"][0]["properties"]["temperature"] = 70
    assert text_game_reward(answer(diff), current, gold) == 0.0
    ts = text_game_reward(answer(diff), current, gold, "task_specific")
    assert ts == pytest.approx(0.09 * 4 / 5 + 0.01)  # objects 4/5 right, score right, the changed pair wrong


def test_dropped_object(boiling):
    current, gold = boiling
    diff = make_diff(current, gold)
    diff["modified"] = [o for o in diff["modified"] if o["uuid"] != 3]  # forgets to create the steam
    assert text_game_reward(answer(diff), current, gold) == 0.0
    assert text_game_reward(answer(diff), current, gold, "task_specific") < 1.3


def test_hallucinated_object(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    diff["modified"].append(obj("ghost", 9, {"scary": True}))
    assert text_game_reward(answer(diff), current, gold) == 0.0
    assert text_game_reward(answer(diff), current, gold, "task_specific") < 1.3


def test_object_not_removed_is_an_error(boiling):
    current, gold = boiling
    diff = make_diff(current, gold)
    diff["removed"] = []
    assert text_game_reward(answer(diff), current, gold) == 0.0


def test_wrong_score(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    diff["score"] = {"score": 3, "gameOver": False, "gameWon": False}
    assert text_game_reward(answer(diff), current, gold) == 0.0
    assert text_game_reward(answer(diff), current, gold, "task_specific") == pytest.approx(0.09 + 0.01 * 2 / 3 + 1.0)


def test_contains_reordered_no_penalty():
    current = {"game_state": [obj("box", 0, {}, ["a", "b"]), obj("a", 1, {}), obj("b", 2, {}), obj("c", 3, {}), SCORE_0]}
    gold = copy.deepcopy(current)
    gold["game_state"][0]["contains"] = ["a", "b", "c"]
    pred = copy.deepcopy(gold["game_state"][0])
    pred["contains"] = ["c", "b", "a"]
    response = answer({"modified": [pred], "removed": [], "score": {}})
    assert text_game_reward(response, current, gold) == 1.0
    assert text_game_reward(response, current, gold, "task_specific") == pytest.approx(1.3)


def test_unexpected_property_is_an_error_not_an_exception(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    diff["modified"][0]["properties"]["color"] = "blue"
    assert text_game_reward(answer(diff), current, gold) == 0.0
    ts = text_game_reward(answer(diff), current, gold, "task_specific")
    assert 1.0 < ts < 1.1  # the changed pair (temperature) is right; one error in the objects term


@pytest.mark.parametrize(
    "response",
    [
        "",
        "The final answer is:",
        "The final answer is: {\"modified\": [",
        "I think the water gets hotter.",
        "The final answer is: [1, 2, 3]",
        "The final answer is: {\"removed\": []}",
        "The final answer is: {\"modified\": [{\"name\": \"water\"}], \"removed\": []}",
        "The final answer is: {\"modified\": 5, \"removed\": []}",
        "The final answer is: {\"modified\": [], \"removed\": [], \"score\": 3}",
        # a sampled answer seen in training: the score record's 'score' key replaced by another word
        "The final answer is: {\"modified\": [], \"score\": {\"temperature\": 3, \"gameOver\": true}}",
    ],
)
def test_malformed_outputs_score_zero(heating, response):
    current, gold = heating
    for reward_type in ("binary", "task_specific"):
        assert text_game_reward(response, current, gold, reward_type) == 0.0
    with pytest.raises(AnswerParseError):
        parse_answer(response)


def test_parser_tolerates_what_models_emit(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    variants = [
        answer(diff, marker=False),  # missing marker
        "Reasoning...\n```json\n" + json.dumps(diff) + "\n```\nDone.",  # fenced json, trailing text
        "The final answer is: " + repr(diff),  # Python repr (True, single quotes)
        "the final answer is: " + json.dumps(diff) + " I hope this helps.",  # lower case, trailing text
        "The final answer is: " + json.dumps({k: v for k, v in diff.items() if k != "removed"}),  # no 'removed'
    ]
    for response in variants:
        assert text_game_reward(response, current, gold) == 1.0, response


def test_parse_error_reports_why():
    with pytest.raises(AnswerParseError, match="truncated"):
        parse_answer('The final answer is: {"modified": [{"uuid": 1')
    with pytest.raises(AnswerParseError, match="no 'modified'"):
        parse_answer('The final answer is: {"removed": []}')


def test_states_as_json_strings_and_bad_arguments(heating):
    current, gold = heating
    assert text_game_reward(exact(current, gold), json.dumps(current), json.dumps(gold)) == 1.0
    with pytest.raises(ValueError, match="reward_type"):
        text_game_reward("", current, gold, "dense")
    with pytest.raises(ValueError, match="compat"):
        text_game_reward("", current, gold, compat="verl")


def test_bool_is_not_a_number_by_default_but_is_in_compat():
    current = {"game_state": [obj("lamp", 0, {"on": 0}), SCORE_0]}
    gold = {"game_state": [obj("lamp", 0, {"on": True}), SCORE_0]}
    response = answer({"modified": [obj("lamp", 0, {"on": 1})], "removed": [], "score": {}})
    assert text_game_reward(response, current, gold) == 0.0
    assert text_game_reward(response, current, gold, compat="rlvr-world") == 1.0


# ------------------------------------------------------------------------------------ compat quirks


def test_compat_exact_answer_on_plain_transition_matches_default(heating):
    current, gold = heating
    for reward_type in ("binary", "task_specific"):
        assert text_game_reward(exact(current, gold), current, gold, reward_type, "rlvr-world") == pytest.approx(
            text_game_reward(exact(current, gold), current, gold, reward_type)
        )


def test_compat_created_objects_never_counted(boiling):
    current, gold = boiling
    assert text_game_reward(exact(current, gold), current, gold, compat="rlvr-world") == 0.0
    # the created steam is a missing object for the official scorer even in an exact answer
    ts = text_game_reward(exact(current, gold), current, gold, "task_specific", compat="rlvr-world")
    assert ts == pytest.approx(0.09 * 3 / 4 + 0.01 + 1.0)  # stove 2/2, pot 1/1, steam missing


def test_compat_listed_removals_never_checked(boiling):
    current, gold = boiling
    diff = make_diff(current, gold)
    diff["removed"] = []  # keeps the water that gold removed: the official scorer never notices
    assert text_game_reward(answer(diff), current, gold, "task_specific", compat="rlvr-world") == pytest.approx(
        text_game_reward(exact(current, gold), current, gold, "task_specific", compat="rlvr-world")
    )
    assert text_game_reward(answer(diff), current, gold, "task_specific") < text_game_reward(
        exact(current, gold), current, gold, "task_specific"
    )


def test_compat_extra_property_zeroes_task_specific(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    diff["modified"][0]["properties"]["color"] = "blue"
    assert text_game_reward(answer(diff), current, gold, "task_specific", compat="rlvr-world") == 0.0
    assert text_game_reward(answer(diff), current, gold, "binary", compat="rlvr-world") == 1.0  # not even seen


def test_compat_requires_modified_and_removed_keys(heating):
    current, gold = heating
    diff = make_diff(current, gold)
    del diff["removed"]
    assert text_game_reward(answer(diff), current, gold, compat="rlvr-world") == 0.0
    assert text_game_reward(answer(diff), current, gold) == 1.0


def test_compat_unparseable_scores_zero(heating):
    current, gold = heating
    assert text_game_reward("no idea", current, gold, "task_specific", compat="rlvr-world") == 0.0


# ------------------------------------------------------------------------------------ accuracy report


def test_changed_pairs_and_accuracy_report(boiling, heating):
    current, gold = boiling
    pairs = changed_pairs(current, gold)
    assert (1, "contains") in pairs and (3, "temperature") in pairs and (2, "<object>") in pairs
    report = accuracy_report([True, True, False, False, False], [True, False, True, True, False])
    assert report["changed"] == 50.0 and report["unchanged"] == pytest.approx(66.67) and report["overall"] == 60.0
    assert report["n_changed"] == 2 and report["n"] == 5
    table = format_accuracy_table({"sft": {**report, "mean_binary_reward": 0.6}})
    assert "| sft | 66.67 | 50.00 | 60.00 | 0.60 |" in table
    with pytest.raises(ValueError):
        accuracy_report([True], [True, False])


def test_reward_never_raises_on_corrupted_gold_answers(heating, boiling):
    """Random token-level corruptions of exact answers (what a sampling model emits): a float in
    [0, max], never an exception."""
    import random

    rng = random.Random(0)
    for current, gold in (heating, boiling):
        exact = "The final answer is: " + json.dumps(make_diff(current, gold))
        pieces = ['"score"', '"uuid"', '"modified"', '"removed"', "{", "}", "[", "]", ",", ":", "1", "true",
                  '"name"', '"x"', "null", '"properties"', '"contains"']
        for _ in range(400):
            text = list(exact)
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(text))
                if rng.random() < 0.5:
                    text[at : at + rng.randint(1, 8)] = list(rng.choice(pieces))
                else:
                    del text[at : at + rng.randint(1, 8)]
            response = "".join(text)
            for reward_type in ("binary", "task_specific"):
                for compat in (None, "rlvr-world"):
                    value = text_game_reward(response, current, gold, reward_type, compat)
                    assert 0.0 <= value <= 1.3
