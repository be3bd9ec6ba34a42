"""RLVRWorld-Web-v0 over a real (randomly initialised, tiny) Llama (the same tokens as evaluations/web.py, the
batched vector env), and the apply logic with a scripted model."""

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.lm_env import Prediction
from rlvr_sim.envs.web.actions import parse_action
from rlvr_sim.envs.web.world_model_env import (
    EMBEDDED_TOKENIZER_DIR,
    LMWebWorldModel,
    WebWorldModelEnv,
    WebWorldModelVectorEnv,
    decode_changes,
    next_tree_from_prediction,
)
from transformers import PreTrainedTokenizerFast

from rlvr_sim.data.wma import WebTransition, to_wma_record
from rlvr_sim.models.lm import build_model, save_checkpoint

TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'\n\t[3] link 'Products'"


class ScriptedWorldModel:
    """Test double: returns a fixed prediction (the env logic under test is parsing and applying it)."""

    def __init__(self, prediction: str) -> None:
        self.prediction = prediction

    def predict_next(self, queries, temperature=None, seeds=None):
        return [Prediction(self.prediction, *decode_changes(q.tree, self.prediction)) for q in queries]


@pytest.fixture(scope="module")
def tiny_world_model():
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(EMBEDDED_TOKENIZER_DIR))
    model = build_model("tiny-5m", len(tokenizer), max_positions=768, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2)
    return LMWebWorldModel(model, tokenizer, max_new_tokens=6)


def test_check_env_with_a_real_tiny_model(tiny_world_model):
    env = WebWorldModelEnv(world_model=tiny_world_model, max_steps=3)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=1, options={"task_id": 0})
    assert info["objective"] == "Set the price of Blue Mug to 9.00" and obs.startswith("Tab 0 (current)")
    _, reward, terminated, _, info = env.step("click [4]")
    assert reward == 0.0 and not terminated and isinstance(info["raw_prediction"], str)


def test_registered_id_builds():
    env = gym.make("RLVRWorld-Web-v0", world_model=ScriptedWorldModel("New items:\nNone"), max_steps=2)
    assert env.unwrapped.max_steps == 2


def test_predicted_changes_are_applied_and_bad_output_is_reported():
    prediction = "New items:\n[4] link 'Customers'\n\nDeleted items:\n[3] link 'Products'\n\nUpdated items:\n[1] RootWebArea 'Orders' focused: True"
    env = WebWorldModelEnv(world_model=ScriptedWorldModel(prediction))
    env.reset(seed=0, options={"tree": TREE, "objective": "o", "url": "/"})
    obs, _, _, _, info = env.step("click [2]")
    assert obs == "Tab 0 (current): Orders\n\n[1] RootWebArea 'Orders' focused: True\n\t[2] link 'Orders'\n\t[4] link 'Customers'"
    assert info["raw_prediction"] == prediction
    garbage = WebWorldModelEnv(world_model=ScriptedWorldModel("no idea"))
    garbage.reset(seed=0, options={"tree": TREE})
    obs, _, _, _, info = garbage.step("click [2]")
    assert obs == TREE and "section" in info["parse_error"]
    obs, _, _, _, info = garbage.step("click here please")
    assert "ActionParseError" in info["action_error"] and info["raw_prediction"] is None
    _, _, terminated, _, _ = garbage.step("stop [done]")
    assert terminated
    assert next_tree_from_prediction(TREE, "New items:\nnot an item\nDeleted items:\nUpdated items:")[1] == "1 malformed item lines ignored"


def test_predict_batch_of_no_actions_is_empty(tiny_world_model):
    """All candidates can be `stop` actions, which are never imagined: an empty batch, not a sampler error."""
    assert tiny_world_model.predict_batch("Open orders", "/", [], "[1] RootWebArea 'Shop'") == []


def test_scored_predictions_carry_the_models_own_token_log_probs(tiny_world_model):
    """`predict_batch_scored`: the same answers as `predict_batch`, and each confidence is the mean log-prob
    of the answer's tokens that one teacher-forced forward pass of prompt + answer gives (the MPC agent's
    confidence gate reads it)."""
    import torch
    from rlvr_sim.envs.web.world_model_env import WebQuery

    actions = ["click [2]", "click [3]"]
    scored = tiny_world_model.predict_batch_scored("Open orders", "/", actions, TREE, seed=3)
    texts = tiny_world_model.predict_batch("Open orders", "/", actions, TREE, seed=3)
    assert [t for t, _ in scored] == texts
    temperature = tiny_world_model.temperature
    tiny_world_model.temperature = 0.0
    try:
        greedy = tiny_world_model.predict_batch_scored("Open orders", "/", actions, TREE, seed=3)
    finally:
        tiny_world_model.temperature = temperature
    from rlvr_sim.rl.sampler import sample

    for action, (_, confidence) in zip(actions, greedy):
        prompt = tiny_world_model.prompt_ids(WebQuery("Open orders", "/", action, TREE))
        out = sample(tiny_world_model.model, [prompt], max_new_tokens=tiny_world_model.max_new_tokens,
                     temperature=0.0, stop_token_ids=tiny_world_model.stop_token_ids,
                     pad_token_id=tiny_world_model.pad_token_id, seeds=[0])
        answer = out.completions()[0]
        with torch.no_grad():
            logits = tiny_world_model.model(torch.tensor([prompt + answer])).logits[0]
        logprobs = torch.log_softmax(logits[len(prompt) - 1:-1].float(), -1)
        expected = logprobs.gather(-1, torch.tensor(answer)[:, None]).mean().item()
        assert confidence == pytest.approx(expected, abs=1e-4)
        assert confidence <= 0.0


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory, tiny_world_model):
    path = tmp_path_factory.mktemp("web") / "tiny"
    save_checkpoint(path, tiny_world_model.model, tiny_world_model.tokenizer,
                    {"task": "web", "task_args": {"max_new_tokens": 32, "max_prompt_tokens": 640}})
    return path


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_env_and_evaluation_predict_the_same_tokens(tmp_path, tiny_checkpoint, temperature, recorded_completions):
    """One (state, action) and seed: the env step and evaluations/web.py (its own model load, the
    transition as a one-line data set) generate token-identical answers."""
    from rlvr_sim.evaluations.web import predict

    env = WebWorldModelEnv(checkpoint=tiny_checkpoint, temperature=temperature)
    env.reset(seed=4, options={"tree": TREE, "objective": "Open orders", "url": "/admin"})
    _, _, _, _, info = env.step("click [2]")
    record = to_wma_record(WebTransition(objective="Open orders", action=parse_action("click [2]").to_text(),
                                         tree=TREE, gold="New items:\nNone\n\nDeleted items:\nNone\n\nUpdated items:\nNone",
                                         url="/admin"))
    (tmp_path / "test.jsonl").write_text(json.dumps(record) + "\n")
    predictions = predict(tiny_checkpoint, tmp_path, "test", None, temperature, 1, info["sample_seed"])[0]
    env_tokens, eval_tokens = recorded_completions
    assert env_tokens == eval_tokens and len(env_tokens[0]) > 0
    assert info["raw_prediction"] == predictions[0]
    replayer = LMWebWorldModel.from_checkpoint(tiny_checkpoint, temperature=temperature)  # the MPC agent's path
    replay = replayer.predict("Open orders", "/admin", "click [2]", TREE, seed=info["sample_seed"])
    assert replay == predictions


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_vector_env_matches_single_envs_with_one_lm_call_per_step(tiny_world_model, temperature,
                                                                  recorded_completions):
    vec = gym.make_vec("RLVRWorld-Web-v0", num_envs=3, world_model=tiny_world_model, temperature=temperature,
                       max_steps=2)
    assert isinstance(vec.unwrapped, WebWorldModelVectorEnv)
    observations, infos = vec.reset(seed=2)
    actions = ["click [4]", "stop [done]", "not an action"]
    steps = [vec.step(actions) for _ in range(3)]
    assert [len(c) for c in recorded_completions] == [1, 1]  # only world 0 needed the LM, once per step
    for i in range(3):
        env = WebWorldModelEnv(world_model=tiny_world_model, temperature=temperature, max_steps=2)
        obs, info = env.reset(seed=2 + i)
        assert obs == observations[i] and info["task_id"] == infos["task_id"][i]
        for t in range(2 if i == 0 else 1):
            obs, _, terminated, truncated, info = env.step(actions[i])
            assert obs == steps[t][0][i] and (terminated, truncated) == (steps[t][2][i], steps[t][3][i])
            assert info["raw_prediction"] == steps[t][4]["raw_prediction"][i]
    assert steps[0][2].tolist() == [False, True, False] and "ActionParseError" in steps[0][4]["action_error"][2]
    assert steps[1][4]["_task_id"].tolist() == [False, True, False]  # world 1 autoreset after its stop
    vec.close()


def test_render_modes(tiny_world_model):
    env = WebWorldModelEnv(world_model=tiny_world_model, render_mode="ansi")
    assert env.render() is None
    obs, _ = env.reset(seed=0, options={"tree": TREE})
    assert env.render() == obs == TREE
    with pytest.raises(ValueError, match="render_mode"):
        WebWorldModelEnv(world_model=tiny_world_model, render_mode="human")
    with pytest.raises(RuntimeError, match="reset"):
        WebWorldModelEnv(world_model=tiny_world_model).step("click [2]")
