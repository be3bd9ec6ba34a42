"""RLVRWorld-TextGame-v0: the world model as a Gymnasium env (check_env, determinism, shadow mode)."""

import gymnasium as gym
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.textgame.env import game_state
from rlvr_sim.envs.textgame.games import make_game
from rlvr_sim.envs.textgame.world_model_env import (
    DEFAULT_CHECKPOINT,
    TextGameWorldModel,
    TextGameWorldModelEnv,
)
from transformers import PreTrainedTokenizerFast

import rlvr_sim  # noqa: F401  (registers the env ids)
from rlvr_sim.data.bytesized32 import TextGameTransition
from rlvr_sim.models.lm import build_model, save_checkpoint
from rlvr_sim.tasks.textgame import EMBEDDED_TOKENIZER


@pytest.fixture(scope="module")
def random_checkpoint(tmp_path_factory):
    """An untrained tiny Llama with the embedded tokenizer: exercises the env plumbing and parse failures."""
    torch.manual_seed(0)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER))
    model = build_model("tiny-5m", vocab_size=len(tokenizer), max_positions=512, hidden_size=32,
                        intermediate_size=64, num_attention_heads=2, num_hidden_layers=1)
    path = tmp_path_factory.mktemp("ckpt") / "random"
    save_checkpoint(path, model, tokenizer, {"task": "textgame", "task_args": {"with_rules": False}})
    return path


@pytest.fixture(scope="module")
def random_world_model(random_checkpoint):
    return TextGameWorldModel(random_checkpoint, max_new_tokens=12)


def test_world_model_env_passes_check_env_greedy_and_sampled(random_world_model):
    check_env(TextGameWorldModelEnv(world_model=random_world_model), skip_render_check=True)
    check_env(TextGameWorldModelEnv(world_model=random_world_model, temperature=1.0), skip_render_check=True)


def test_unparseable_output_keeps_state_and_reports_why(random_world_model):
    env = TextGameWorldModelEnv(world_model=random_world_model, game="boil-water", shadow=True)
    obs, info = env.reset(seed=0)
    obs2, reward, terminated, truncated, info = env.step("turn on stove")
    assert info["parse_ok"] is False and info["parse_error"] and isinstance(info["raw_output"], str)
    assert obs2 == obs and reward == 0.0 and not terminated
    shadow = info["shadow"]
    assert shadow["exact_match"] is False and shadow["real_state"] != info["state"] and shadow["accuracy"] == 0.0


def test_sampled_steps_replay_with_the_same_seed(random_world_model):
    outputs = []
    for _ in range(2):
        env = TextGameWorldModelEnv(world_model=random_world_model, temperature=1.0)
        env.reset(seed=5)
        outputs.append([env.step("wait")[4]["raw_output"] for _ in range(2)])
    assert outputs[0] == outputs[1]


def test_predict_applies_a_correct_diff_through_the_codec(random_world_model, monkeypatch):
    game = make_game("sweep-floor", seed=0)
    current = game_state(game)
    game.step("take broom")
    gold = game_state(game)
    transition = TextGameTransition(current, gold, "take broom", uuid_base=game.max_uuid, game="sweep-floor")
    from rlvr_sim.tasks.textgame import decode_answer, encode_answer_text

    state, error = decode_answer(encode_answer_text(transition), current)
    assert error is None and state == gold
    too_long = TextGameTransition(current, gold, "wait " * 600, uuid_base=4, game="sweep-floor")
    prediction = random_world_model.predict([too_long])[0]
    assert prediction.state is None and "exceeds" in prediction.error


def test_bad_arguments(random_world_model):
    with pytest.raises(ValueError):
        TextGameWorldModelEnv(world_model=random_world_model, game="nope")
    with pytest.raises(ValueError):
        TextGameWorldModelEnv(world_model=random_world_model, temperature=-1)
    with pytest.raises(ValueError):
        TextGameWorldModel(DEFAULT_CHECKPOINT, prompt_format="chat")


def test_default_env_uses_the_embedded_rlvr_checkpoint():
    env = gym.make("RLVRWorld-TextGame-v0")
    assert env.unwrapped.world_model.checkpoint == str(DEFAULT_CHECKPOINT)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(info["valid_actions"][0])
    assert isinstance(obs, str) and "parse_ok" in info
