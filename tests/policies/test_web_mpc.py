"""MPC agent mechanics with scripted parts (no browser): top-k by frequency, argmax of imagined value."""

import numpy as np
import pytest
from rlvr_sim.policies.web_mpc import (
    HeuristicValueFunction,
    HeuristicWebPolicy,
    MPCWebAgent,
    elements,
    objective_values,
    value_for_label,
)

TREE = """Tab 0 (current): Blue Mug / Shop Admin

[1] RootWebArea 'Blue Mug / Shop Admin' focused: True
\t[8] main ''
\t\t[9] heading 'Blue Mug'
\t\t[15] textbox 'Price' required: False
\t\t\t[16] StaticText '8.50'
\t\t[20] button 'Save'"""


class FixedPolicy:
    def __init__(self, samples):
        self.samples = samples

    def propose(self, objective, tree, url, history, n_samples, rng):
        return list(self.samples)


class TableWorldModel:
    def imagine(self, objective, url, tree, action, seed):
        return tree + f"\n\t\t[99] StaticText 'after {action}'"


class TableValue:
    def __init__(self, values):
        self.values = values

    def score(self, objective, tree, action, next_tree, history):
        return self.values[action]


def test_agent_keeps_top_k_by_frequency_and_takes_best_value():
    policy = FixedPolicy(["click [1]"] * 5 + ["click [2]"] * 3 + ["click [3]"] * 2 + ["click [4]"])
    values = {"click [1]": 2.0, "click [2]": 4.5, "click [3]": 3.0, "click [4]": 5.0}
    agent = MPCWebAgent(policy, TableValue(values), TableWorldModel(), top_k=3)
    assert agent.act("o", TREE, "/", [], np.random.default_rng(0)) == "click [2]"  # [4] is not in the top 3
    assert set(agent.last_scores) == {"click [1]", "click [2]", "click [3]"}
    alone = MPCWebAgent(policy, TableValue(values), world_model=None)
    assert alone.act("o", TREE, "/", [], np.random.default_rng(0)) == "click [1]"


class ScoredWorldModel(TableWorldModel):
    """TableWorldModel that also reports a fixed confidence per action (as LearnedWorldModel does)."""

    def __init__(self, confidence):
        self.confidence = confidence

    def imagine_batch_scored(self, objective, url, tree, actions, seed):
        return [(self.imagine(objective, url, tree, a, seed), self.confidence[a]) for a in actions]


def test_confidence_gate_lets_the_lookahead_overrule_the_policy_only_where_the_model_is_confident():
    policy = FixedPolicy(["click [1]"] * 5 + ["click [2]"] * 3 + ["click [3]"] * 2)
    values = {"click [1]": 2.0, "click [2]": 4.5, "click [3]": 3.0}

    def pick(confidence, min_confidence=-0.02):
        agent = MPCWebAgent(policy, TableValue(values), ScoredWorldModel(confidence), top_k=3,
                            min_confidence=min_confidence)
        action = agent.act("o", TREE, "/", [], np.random.default_rng(0))
        assert agent.last_confidence == confidence
        return action

    assert pick({"click [1]": -0.01, "click [2]": -0.01, "click [3]": -0.01}) == "click [2]"  # all known: best value
    assert pick({"click [1]": -0.01, "click [2]": -0.30, "click [3]": -0.01}) == "click [3]"  # [2] unknown: left out
    assert pick({"click [1]": -0.30, "click [2]": -0.01, "click [3]": -0.01}) == "click [1]"  # the top unknown: keep it
    assert pick({"click [1]": -0.30, "click [2]": -0.30, "click [3]": -0.30}, float("-inf")) == "click [2]"  # no gate
    # the same picks as the ungated agent's when every prediction passes
    ungated = MPCWebAgent(policy, TableValue(values), TableWorldModel(), top_k=3)
    assert ungated.act("o", TREE, "/", [], np.random.default_rng(0)) == "click [2]"
    # a `stop` candidate is never imagined and always counts
    stop_policy = FixedPolicy(["click [1]"] * 5 + ["stop [8.50]"] * 3)
    agent = MPCWebAgent(stop_policy, TableValue({"click [1]": 2.0, "stop [8.50]": 5.0}),
                        ScoredWorldModel({"click [1]": -0.01}), min_confidence=-0.02)
    assert agent.act("o", TREE, "/", [], np.random.default_rng(0)) == "stop [8.50]"


def test_confidence_gate_needs_a_world_model_that_reports_confidence():
    with pytest.raises(ValueError, match="reports its confidence"):
        MPCWebAgent(FixedPolicy(["click [1]"]), TableValue({}), TableWorldModel(), min_confidence=-0.02)
    with pytest.raises(ValueError, match="depth 1"):
        MPCWebAgent(FixedPolicy(["click [1]"]), TableValue({}), ScoredWorldModel({}), depth=2, min_confidence=-0.02)


def test_heuristic_parts_read_objectives_and_pages():
    assert value_for_label("Set the price of Blue Mug to 9.00", "price") == "9.00"
    assert value_for_label("Add a new product named Tea Pot with price 25.00 and stock 10", "stock") == "10"
    assert "alan@turing.org" in objective_values("Change the email of Alan Turing to alan@turing.org")
    policy = HeuristicWebPolicy()
    scores = policy.candidates("Set the price of Blue Mug to 9.00", TREE, [], "/products/1")
    assert max(scores, key=scores.get) == "type [15] [9.00] [0]"
    assert policy.read_answer("What is the price of Blue Mug?", elements(TREE)) == "8.50"
    value = HeuristicValueFunction()
    saved = TREE + "\n\t\t[21] status ''\n\t\t\t[22] StaticText 'Saved Blue Mug'"
    assert value.score("Set the price of Blue Mug to 9.00", TREE, "click [20]", saved, []) > \
        value.score("Set the price of Blue Mug to 9.00", TREE, "click [20]", TREE, [])
    assert value.score("o", TREE, "stop [8.50]", TREE, []) == 5.0
    assert value.score("o", TREE, "not an action", TREE, []) == 1.0


def test_collector_loads_the_default_proposal_policy_by_name():
    """The web collector imports no policy: `--policy` names the class (default: the MPC agent's own)."""
    from rlvr_sim.envs.web.collect import DEFAULT_POLICY, load_policy

    policy = load_policy(DEFAULT_POLICY, 2.0)
    assert isinstance(policy, HeuristicWebPolicy) and policy.temperature == 2.0
    with pytest.raises(ValueError, match="package.module:Class"):
        load_policy("no_such_module:Policy", 1.0)
