"""RLVRWorld-TextGame-v0: the world model as a Gymnasium env (check_env, determinism, shadow mode, the same
tokens as the evaluation and the viewer, the batched vector env)."""

import gymnasium as gym
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.textgame.env import game_state
from rlvr_sim.envs.textgame.games import make_game
from rlvr_sim.envs.textgame.world_model_env import (
    DEFAULT_CHECKPOINT,
    Prediction,
    TextGameWorldModel,
    TextGameWorldModelEnv,
    TextGameWorldModelVectorEnv,
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
    save_checkpoint(path, model, tokenizer, {"task": "textgame", "task_args": {"with_rules": False, "max_new_tokens": 12}})
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


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_env_evaluation_and_viewer_predict_the_same_tokens(random_checkpoint, random_world_model, temperature,
                                                           recorded_completions):
    """One (state, action) and seed: the env step, evaluations/textgame.py (its own model load) and the
    viewer's predictor generate token-identical answers."""
    from rlvr_sim.evaluations.textgame import predict_responses

    from rlvr_sim.viewer.textgame_play import WorldModelPredictor

    env = TextGameWorldModelEnv(world_model=random_world_model, game="boil-water", temperature=temperature)
    _, info = env.reset(seed=3)
    state, uuid_base, action = info["state"], info["uuid_base"], "turn on stove"
    _, _, _, _, step_info = env.step(action)
    seed = step_info["sample_seed"]
    transition = TextGameTransition(state, state, action, uuid_base, env.real_game.task_description, "boil-water")
    responses, _ = predict_responses(str(random_checkpoint), [transition], max_new_tokens=12,
                                     temperature=temperature, seed=seed)
    viewer = WorldModelPredictor(str(random_checkpoint), temperature=temperature, seed=seed)  # its own load
    viewed = viewer.predict("boil-water", state, action, uuid_base, env.real_game.task_description)
    env_tokens, eval_tokens, viewer_tokens = recorded_completions
    assert env_tokens == eval_tokens == viewer_tokens and len(env_tokens[0]) > 0
    assert step_info["raw_output"] == responses[0] == viewed.text
    assert isinstance(viewed, Prediction)  # the viewer shows the envs' own prediction object


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_vector_env_matches_single_envs_with_one_lm_call_per_step(random_world_model, temperature,
                                                                  recorded_completions):
    vec = gym.make_vec("RLVRWorld-TextGame-v0", num_envs=3, world_model=random_world_model,
                       temperature=temperature, max_steps=2)
    assert isinstance(vec.unwrapped, TextGameWorldModelVectorEnv)
    observations, infos = vec.reset(seed=7)
    actions = ["wait", "look", "turn on stove"]
    steps = [vec.step(actions) for _ in range(3)]
    assert len(recorded_completions) == 2  # one batched generation per step; the third step autoresets
    for i in range(3):
        env = TextGameWorldModelEnv(world_model=random_world_model, temperature=temperature, max_steps=2)
        obs, info = env.reset(seed=7 + i)
        assert obs == observations[i] and info["game"] == infos["game"][i]
        for t in range(2):
            obs, reward, terminated, truncated, info = env.step(actions[i])
            assert obs == steps[t][0][i] and reward == steps[t][1][i]
            assert (terminated, truncated) == (steps[t][2][i], steps[t][3][i])
            assert info["raw_output"] == steps[t][4]["raw_output"][i]
    assert all(steps[1][3]) and "raw_output" not in steps[2][4]  # truncated, then reset (no prediction)
    assert vec.observation_space.contains(steps[2][0])
    vec.close()


def test_render_modes(random_world_model):
    env = TextGameWorldModelEnv(world_model=random_world_model, render_mode="ansi")
    assert env.render() is None
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
    assert TextGameWorldModelEnv(world_model=random_world_model).render() is None
    with pytest.raises(ValueError, match="render_mode"):
        TextGameWorldModelEnv(world_model=random_world_model, render_mode="human")
