"""RLVRWorld-Web-v0 over a real (randomly initialised, tiny) Llama, and the apply logic with a scripted model."""

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.web.world_model_env import (
    EMBEDDED_TOKENIZER_DIR,
    LMWebWorldModel,
    WebWorldModelEnv,
    next_tree_from_prediction,
)
from transformers import PreTrainedTokenizerFast

from rlvr_sim.models.lm import build_model

TREE = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop' focused: True\n\t[2] link 'Orders'\n\t[3] link 'Products'"


class ScriptedWorldModel:
    """Test double: returns a fixed prediction (the env logic under test is parsing and applying it)."""

    def __init__(self, prediction: str) -> None:
        self.prediction = prediction

    def predict(self, objective, url, action, tree, samples=1, seed=0):
        return [self.prediction] * samples


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
