"""Ground-truth games, agents, the Gymnasium env and the collector."""

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.textgame.collect import collect, count_twins, main, transition_key, twin_counts
from rlvr_sim.envs.textgame.engine import UNKNOWN_ACTION
from rlvr_sim.envs.textgame.env import TextGameEnv
from rlvr_sim.envs.textgame.games import GAMES, make_game
from rlvr_sim.policies.textgame_agents import EpsilonTextGameAgent, RandomTextGameAgent, ScriptedTextGameAgent

import rlvr_sim  # noqa: F401  (registers the env ids)
from rlvr_sim.data.bytesized32 import load_bytesized32_jsonl, record_to_transition
from rlvr_sim.metrics.textgame import is_changed_transition, make_diff
from rlvr_sim.tasks.textgame import GAME_RULES


def test_at_least_eight_games_with_rules_and_schema():
    assert len(GAMES) >= 8 and set(GAME_RULES) == set(GAMES)
    for game_id in GAMES:
        game = make_game(game_id, seed=3)
        assert game.task_description and all(GAME_RULES[game_id])  # rules: objects, actions, score
        for obj in game.snapshot()["objects"]:
            assert set(obj) == {"name", "uuid", "type", "properties", "contains"}
        assert set(game.score_state()) == {"score", "gameOver", "gameWon"}


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_scripted_agent_wins_every_game(game_id):
    for seed in range(5):
        game, agent = make_game(game_id, seed), ScriptedTextGameAgent()
        for _ in range(30):
            if game.game_over:
                break
            game.step(agent.act(game))
        assert game.game_won, (game_id, seed)


def test_created_object_gets_max_uuid_and_removed_object_disappears():
    game = make_game("boil-water", seed=0)
    base = game.max_uuid
    for action in ["put pot on stove", "turn on stove"] + ["wait"] * 6:
        before = game.snapshot()
        game.step(action)
        if game.find("steam") is not None:
            break
    steam = game.get("steam")
    assert steam["uuid"] == base == before["max_UUID"]
    assert game.find("water") is None and game.get("pot")["contains"] == ["steam"]
    assert game.game_won


def test_tick_changes_state_without_action_effect():
    game = make_game("grow-plant", seed=0)
    game.props("seed")["water"] = 2
    growth = game.props("seed")["growth"]
    action_state, tick_state = game.step("look")
    seed_after_action = next(o for o in action_state["objects"] if o["name"] == "seed")
    assert seed_after_action["properties"]["growth"] == growth
    assert game.props("seed")["growth"] == growth + 1


def test_unknown_action_is_answered_not_raised():
    game = make_game("sweep-floor", seed=0)
    game.step("dance wildly")
    assert game.observation == UNKNOWN_ACTION


def test_agents_are_seeded():
    actions = []
    for _ in range(2):
        game, agent = make_game("mix-paint", 1), RandomTextGameAgent(seed=7)
        actions.append([agent.act(game) for _ in range(10)])
    assert actions[0] == actions[1]
    with pytest.raises(ValueError):
        EpsilonTextGameAgent(1.5)


def test_ground_truth_env_passes_check_env_and_plays():
    env = TextGameEnv()
    check_env(env, skip_render_check=True)
    env = gym.make("RLVRSim/TextGame-v0", game="lit-lightbulb")
    obs, info = env.reset(seed=0)
    initial_score, total, terminated = info["score"], 0.0, False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.game.expert_action())
        total += reward
        assert not truncated
    assert info["won"] and total == info["score"] - initial_score > 0
    assert "valid_actions" in info and info["state"]["game_state"][-1]["gameWon"] is True
    with pytest.raises(ValueError):
        TextGameEnv(game="no-such-game")


def test_collector_writes_loadable_split_data(tmp_path):
    stats = collect(tmp_path, episodes_per_game=12, max_steps=10, seed=1, test_fraction=0.25,
                    heldout_games=("mix-paint",))
    train = load_bytesized32_jsonl(tmp_path / "train.jsonl")
    test = load_bytesized32_jsonl(tmp_path / "test.jsonl")
    heldout = load_bytesized32_jsonl(tmp_path / "heldout_games.jsonl")
    assert len(train) == stats["train"]["transitions"] and test and heldout
    assert {t.game for t in heldout} == {"mix-paint"} and "mix-paint" not in {t.game for t in train + test}
    key = lambda t: json.dumps([t.game, t.current_state], sort_keys=True)  # noqa: E731
    assert not {key(t) for t in train} & {key(t) for t in test}  # split by held-out states
    assert any(is_changed_transition(t.current_state, t.gold_state) for t in train)
    assert any(not is_changed_transition(t.current_state, t.gold_state) for t in train)
    raw = json.loads((tmp_path / "train.jsonl").read_text().splitlines()[0])
    assert set(raw) == {"game", "state_id", "current_state", "action_state", "tick_state",
                        "current_score_state", "next_score_state"}
    assert main(["--out", str(tmp_path / "cli"), "--episodes-per-game", "2", "--max-steps", "3"]) == 0
    assert (tmp_path / "cli" / "stats.json").exists()
    assert stats["test_twins"] == count_twins([tmp_path], tmp_path) and stats["test_twins"]["key_twins"] == 0
    assert count_twins([tmp_path, tmp_path / "test.jsonl"], tmp_path)["key_twins"] == len(test)  # test in train: all twins


def test_twin_counts_key_twins_and_near_twins_with_another_score():
    game = make_game("mix-paint", seed=0)
    current, score = game.snapshot(), game.score_state()
    action_state, tick_state = game.step("look")  # changes neither objects nor score: the answer is empty
    record = {"game": "mix-paint", "state_id": 0, "current_state": current, "action_state": action_state,
              "tick_state": tick_state, "current_score_state": score, "next_score_state": game.score_state()}
    twin = record_to_transition(record)
    assert transition_key(twin) == transition_key(record_to_transition(json.loads(json.dumps(record))))
    other_action = record_to_transition(dict(record, tick_state=dict(tick_state, lastAction="wait")))
    assert transition_key(other_action) != transition_key(twin)
    rescored = {**score, "score": score["score"] + 5}
    near = record_to_transition(dict(record, current_score_state=rescored, next_score_state=rescored))
    assert transition_key(near) != transition_key(twin)
    assert transition_key(near, with_score=False) == transition_key(twin, with_score=False)
    assert make_diff(near.current_state, near.gold_state) == make_diff(twin.current_state, twin.gold_state)
    won = {**rescored, "gameWon": True}  # the same objects and action, another answer (a score change)
    near_other = record_to_transition(dict(record, current_score_state=rescored, next_score_state=won))
    assert twin_counts([twin], [twin, other_action, near, near_other]) == {
        "test": 4, "key_twins": 1, "object_twins": 2, "object_twins_same_answer": 1}
    assert twin_counts([], [twin])["key_twins"] == 0
