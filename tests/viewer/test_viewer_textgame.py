"""The terminal text-game player: diff rows, highlighted mismatches, scripted sessions, a real checkpoint."""

import copy

import pytest
from rich.console import Console
from rlvr_sim.envs.textgame.games import make_game

from rlvr_sim.viewer.textgame_play import (
    Prediction,
    TextGamePlayer,
    WorldModelPredictor,
    diff_rows,
    main,
)


def state(objects, score=0, over=False, won=False):
    return {"game_state": objects + [{"score": score, "gameOver": over, "gameWon": won}]}


def obj(uuid, name, contains=(), **properties):
    return {
        "name": name,
        "uuid": uuid,
        "type": name.title(),
        "properties": properties,
        "contains": list(contains),
    }


def test_diff_rows_mark_wrong_missed_and_spurious_changes():
    before = state(
        [obj(0, "stove", on=False), obj(1, "pot", contains=["water"]), obj(2, "water", temperature=40)]
    )
    real = state(
        [obj(0, "stove", on=True), obj(1, "pot", contains=["water"]), obj(2, "water", temperature=50)], 1
    )
    predicted = state(
        [obj(0, "stove", on=True), obj(1, "pot", contains=[]), obj(2, "water", temperature=60)], score=1
    )
    rows = {(r.object_name, r.field): r for r in diff_rows(before, real, predicted)}
    assert set(rows) == {("stove", "on"), ("pot", "contains"), ("water", "temperature"), ("score", "score")}
    assert rows["stove", "on"].correct  # right change
    assert not rows["water", "temperature"].correct  # wrong value
    assert not rows["pot", "contains"].correct  # spurious change (the real pot still holds the water)
    assert rows["score", "score"].correct
    # an unparseable answer predicts nothing: every real change is missed, objects "vanish"
    rows = diff_rows(before, real, None)
    assert rows and not any(r.correct for r in rows)


def test_diff_rows_created_and_removed_objects_and_contains_order():
    before = state([obj(0, "bowl", contains=["a", "b"]), obj(1, "egg", cracked=False)])
    real = state([obj(0, "bowl", contains=["b", "a", "yolk"]), obj(2, "yolk", cooked=False)])
    predicted = state([obj(0, "bowl", contains=["yolk", "a", "b"]), obj(2, "yolk", cooked=False)])
    rows = diff_rows(before, real, predicted)
    assert all(r.correct for r in rows), [(r.object_name, r.field) for r in rows if not r.correct]
    fields = {(r.object_name, r.field) for r in rows}
    assert ("egg", "(exists)") in fields and ("yolk", "(exists)") in fields and ("bowl", "contains") in fields


class OraclePredictor:
    """Predicts by stepping a copy of the real game; `spoil` breaks one property of its answer."""

    name = "oracle"

    def __init__(self, game_id, seed, spoil=False):
        self.game = make_game(game_id, seed)
        self.spoil = spoil

    def predict(self, game, current_state, action, uuid_base, task):
        shadow = copy.deepcopy(self.game)
        self.game.step(action)
        shadow.step(action)
        objects = shadow.snapshot()["objects"]
        if self.spoil:
            objects[0]["properties"]["on"] = "broken"
        return Prediction(text="(oracle)", state={"game_state": objects + [shadow.score_state()]}, error=None)


def run_scripted(predictor, actions, seed=0):
    console = Console(record=True, width=140, color_system=None)
    player = TextGamePlayer("boil-water", predictor, seed=seed, console=console)
    player.run(actions)
    return player, console.export_text()


def test_scripted_session_exact_predictions():
    player, text = run_scripted(
        OraclePredictor("boil-water", 0), ["put pot on stove", "turn on stove", "wait"]
    )
    assert player.steps == 3 and player.exact == 3
    assert "3/3 steps predicted exactly" in text
    assert "[water]" in text  # list values are shown literally, not swallowed as rich markup
    assert "✗" not in text


def test_scripted_session_highlights_mismatches_and_commands():
    predictor = OraclePredictor("boil-water", 0, spoil=True)
    player, text = run_scripted(predictor, [":actions", "turn on stove", ":state", ":bogus", ":quit", "wait"])
    assert player.steps == 1 and player.exact == 0  # :quit stops before "wait"
    assert "broken" in text and "✗" in text
    assert "turn on stove, turn off stove" in text
    assert "unknown command" in text


def test_expert_command_plays_the_game_to_the_end():
    player, text = run_scripted(OraclePredictor("boil-water", 0), [":expert"] * 12)
    assert player.game.game_over and player.game.game_won
    assert "game over: won" in text


def test_untrained_checkpoint_reports_unparseable_output(tmp_path):
    from transformers import PreTrainedTokenizerFast

    from rlvr_sim.models.lm import build_model, save_checkpoint
    from rlvr_sim.tasks.textgame import EMBEDDED_TOKENIZER

    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER))
    model = build_model(
        "tiny-5m",
        vocab_size=len(tokenizer),
        max_positions=1024,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    save_checkpoint(tmp_path / "untrained", model, tokenizer, meta={"task": "textgame"})
    predictor = WorldModelPredictor(str(tmp_path / "untrained"))
    predictor.model.max_new_tokens = 8
    console = Console(record=True, width=140, color_system=None)
    player = TextGamePlayer("boil-water", predictor, console=console)
    player.run(["turn on stove"])
    text = console.export_text()
    assert player.steps == 1 and player.exact == 0
    assert "could not be parsed" in text


def test_main_lists_games_and_rejects_unknown(capsys):
    assert main(["--list-games"]) == 0
    assert "boil-water" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown game"):
        main(["--game", "no-such-game"])
    assert (
        main(
            ["--game", "boil-water", "--actions", "take pot;wait"], predictor=OraclePredictor("boil-water", 0)
        )
        == 0
    )
