"""The real browser: BrowserEnv contract, tree ids, bad input outcomes, and one full MPC agent episode.

Marked `browser` (Chromium + Playwright needed); still in the default run, kept to one env instance.
"""

import pytest
from gymnasium.utils.env_checker import check_env
from rlvr_sim.envs.web.browser_env import BrowserEnv
from rlvr_sim.envs.web.server import SiteServer, SiteUnavailableError
from rlvr_sim.policies.web_mpc import (
    BrowserLookahead,
    HeuristicValueFunction,
    HeuristicWebPolicy,
    MPCWebAgent,
    run_episode,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def env():
    environment = BrowserEnv(max_steps=6)
    yield environment
    environment.close()


def test_check_env_and_deterministic_ids(env):
    check_env(env, skip_render_check=True)
    first, info = env.reset(seed=3, options={"task_id": 18})
    again, _ = env.reset(seed=3, options={"task_id": 18})
    assert first == again and info["objective"] == "Open the product page of Notebook A5"
    assert first.startswith("Tab 0 (current): Dashboard / Shop Admin\n\n[1] RootWebArea 'Dashboard / Shop Admin'")
    assert "\t\t[4] link 'Products'" in first


def test_bad_actions_are_reported_not_fatal(env):
    tree, _ = env.reset(seed=0, options={"task_id": 0})
    for action, reason in (("click [999]", "not in the current page"), ("jump over", "unknown action"),
                           ("goto [http://example.com/]", "outside the site"), ("new_tab", "single tab"),
                           ("type [4] [x] [0]", "not a text field")):
        obs, reward, terminated, truncated, info = env.step(action)
        assert reason in info["action_error"], (action, info)
        assert reward == 0.0 and not terminated
    assert obs == tree  # nothing changed on the page
    env.driver.page.set_default_navigation_timeout(1)  # a page that cannot load in time
    try:
        _, _, terminated, _, info = env.step("goto [/orders]")
    finally:
        env.driver.page.set_default_navigation_timeout(5000)
    assert "PageLoadError" in info["action_error"] and not terminated


def test_simulate_leaves_the_episode_unchanged(env):
    tree, _ = env.reset(seed=0, options={"task_id": 7})
    imagined = env.simulate("click [5]")
    assert "RootWebArea 'Orders / Shop Admin'" in imagined
    obs, *_ = env.step("scroll [down]")
    assert obs == tree


def test_simulate_is_the_real_step_on_a_page_a_form_submission_returned(env):
    """A validation-error page came from a POST: its URL loads a different page (no alert, other ids). The
    lookahead replays the episode instead and matches the real step; before, it typed into the wrong
    element or failed."""
    env.reset(seed=0, options={"task_id": 6})
    env.step("click [25]")                                  # Add product -> /products/new
    env.step("type [11] [Tea Pot] [0]")
    tree, *_ = env.step("click [23]")                       # Create with price and stock missing
    assert "Enter a name, a price and a stock" in tree and "[17] textbox 'Stock'" in tree
    imagined = [env.simulate(a) for a in ("type [17] [10] [0]", "click [4]", "type [15] [25.00] [0]")]
    assert env.step("scroll [down]")[0] == tree              # the episode is where it was
    for action, predicted in zip(("type [17] [10] [0]", "click [4]"), imagined):
        real, *_ = env.step(action)
        assert predicted == real, action
    from rlvr_sim.envs.web.browser_env import SimulationError

    env._episode_actions[0] = ("click [24]", False)          # a history the site cannot replay: a clear error
    env._page_actions = ["type [999] [x] [0]"]
    with pytest.raises(SimulationError, match="cannot be rebuilt"):
        env.simulate("click [3]")


def test_full_mpc_episode_with_browser_lookahead(env):
    agent = MPCWebAgent(HeuristicWebPolicy(), HeuristicValueFunction(), BrowserLookahead(env), n_samples=10, top_k=3)
    result = run_episode(env, agent, task_id=18, seed=0, max_steps=5)
    assert result["success"], result["trace"]
    assert all(len(step["scores"]) >= 1 for step in result["trace"])


def test_server_down_raises_clear_error():
    server = SiteServer().start()
    down = BrowserEnv(base_url=server.url)
    try:
        down.reset(seed=0, options={"task_id": 0})
        server.stop()
        with pytest.raises(SiteUnavailableError, match="did not answer"):
            down.step("click [4]")
        with pytest.raises(SiteUnavailableError, match="did not"):
            down.reset(seed=0)
    finally:
        down.close()


def test_collector_writes_wma_records(tmp_path):
    from rlvr_sim.envs.web.collect import main as collect_main

    from rlvr_sim.data.wma import load_wma
    from rlvr_sim.metrics.web import item_change_f1

    assert collect_main(["--out", str(tmp_path), "--episodes", "2", "--seed", "1", "--max-steps", "2",
                         "--test-fraction", "0.0"]) == 0
    transitions = load_wma(tmp_path / "train.jsonl")
    assert 2 <= len(transitions) <= 4 and (tmp_path / "test.jsonl").read_text() == ""
    for transition in transitions:
        assert transition.tree.startswith("Tab 0 (current): ") and transition.next_tree is not None
        assert item_change_f1(transition.gold, transition.gold).f1 == 1.0
        assert not transition.url.startswith("http")


def test_collector_policy_prob_takes_the_agents_own_proposals(tmp_path):
    """--policy-prob 1: every action is one the MPC agent's proposal policy can sample; 0 leaves the data as before."""
    from rlvr_sim.envs.web.collect import collect
    from rlvr_sim.policies.web_mpc import HeuristicWebPolicy

    from rlvr_sim.data.wma import load_wma

    collect(tmp_path / "on", 2, seed=3, test_fraction=0.0, max_steps=2, policy_prob=1.0,
            policy=HeuristicWebPolicy(temperature=2.0))
    for transition in load_wma(tmp_path / "on" / "train.jsonl"):
        proposals = HeuristicWebPolicy().candidates(transition.objective, transition.tree,
                                                    list(transition.previous_actions), transition.url)
        assert transition.action in proposals or (not proposals and transition.action == "go_back")
    collect(tmp_path / "a", 1, seed=3, test_fraction=0.0, max_steps=2)
    collect(tmp_path / "b", 1, seed=3, test_fraction=0.0, max_steps=2, policy_prob=0.0)
    assert (tmp_path / "a" / "train.jsonl").read_text() == (tmp_path / "b" / "train.jsonl").read_text()
    with pytest.raises(ValueError, match="policy_prob"):
        collect(tmp_path / "c", 1, policy_prob=1.5)
    with pytest.raises(ValueError, match="needs a policy"):
        collect(tmp_path / "d", 1, policy_prob=0.5)


def test_collector_candidates_records_each_top_k_candidate_with_its_real_next_page(tmp_path):
    """--candidates 3: each state's top-3 policy candidates are all recorded, each with the page the real
    browser shows after it (replayed here in a fresh episode), and the episode follows one of them."""
    from collections import defaultdict

    from rlvr_sim.envs.web.collect import collect
    from rlvr_sim.envs.web.tree import format_changes, item_changes
    from rlvr_sim.policies.web_mpc import HeuristicWebPolicy

    from rlvr_sim.data.wma import load_wma

    counts = collect(tmp_path / "mpc", 2, seed=4, test_fraction=0.0, max_steps=3, candidates=3,
                     policy=HeuristicWebPolicy(temperature=2.0))
    transitions = load_wma(tmp_path / "mpc" / "train.jsonl")
    assert counts["train"] == len(transitions) > 6
    by_state = defaultdict(list)
    for t in transitions:
        by_state[(t.objective, t.step_idx, t.tree)].append(t)
    assert max(len(group) for group in by_state.values()) >= 2  # several candidates of one state
    for group in by_state.values():
        assert len({t.action for t in group}) == len(group) <= 3
        for t in group:
            assert t.gold == format_changes(item_changes(t.tree, t.next_tree))
    first = [t for t in transitions if t.step_idx == 0]  # start pages: replay each candidate for real
    env = BrowserEnv()
    try:
        for t in first[:3]:
            env.reset(seed=0, options={"task_id": t.task_id})
            after, *_ = env.step(t.action)
            assert format_changes(item_changes(t.tree, after)) == t.gold
    finally:
        env.close()
    with pytest.raises(ValueError, match="needs a policy"):
        collect(tmp_path / "e", 1, candidates=3)


def test_demo_section_runs_a_learned_world_model_episode_and_prints_the_tables(tmp_path):
    """`rlvr-sim demo`'s web section: real site + Chromium, the embedded RLVR world model, committed tables."""
    from rlvr_sim.envs.web.demo import run_episode_text
    from rlvr_sim.evaluations.web import results_tables as tables_text

    text, result = run_episode_text(task_id=0, seed=0, max_steps=3)
    assert "world model web_rlvr" in text and "task 0:" in text
    assert 1 <= result["steps"] <= 3 and len(text.splitlines()) == result["steps"] + 3
    assert all(step["action"] in text for step in result["trace"])
    tables = tables_text()
    assert "| Model | Precision | Recall | F1 |" in tables and "| No-change baseline |" in tables
    assert "RLVR - SFT" in tables  # the paired gain and its interval, in the table's note
    assert "| Agent | Success rate (%) [95% CI] |" in tables and "| Policy alone |" in tables
    assert "No web.md yet" in tables_text(tmp_path)


def test_decision_report_scores_world_models_on_the_agents_own_states(tmp_path):
    """`web_agent.py --decisions`: F1 against the real next pages, agreement with the browser's pick."""
    import json

    from rlvr_sim.evaluations.web_agent import main

    assert main(["--decisions", "--tasks", "0", "--max-steps", "1", "--samples", "6", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "web_decisions.json").read_text())
    summary, (state,) = report["summary"], report["states"]
    assert summary["states"] == 1 and summary["browser"]["agreement"] == 100.0
    for name in ("SFT", "RLVR"):
        assert 0.0 <= summary[name]["f1"] <= 100.0 and summary[name]["agreement"] in (0.0, 100.0)
        assert state["models"][name]["pick"] in state["candidates"]
        gated, confidence = state["models"][name]["gated_pick"], state["models"][name]["confidence"]
        assert set(confidence) == {a for a in state["candidates"] if not a.startswith("stop")}
        assert all(c <= 0.0 for c in confidence.values())
        assert gated == MPCWebAgent.gated_best(state["candidates"], state["models"][name]["scores"], confidence, -0.02)
        assert summary[name]["gated"]["min_confidence"] == -0.02
    assert summary["SFT"]["transitions"] == len([a for a in state["candidates"] if not a.startswith("stop")])
    assert "| SFT world model |" in (tmp_path / "web_decisions.md").read_text()
    assert "| SFT, confidence-gated (>= -0.02) |" in (tmp_path / "web_decisions.md").read_text()

    # --twins-of: the candidate whose page + action is in a training folder is scored apart from the rest
    from rlvr_sim.envs.web.world_model_env import load_start_pages

    from rlvr_sim.data.wma import WebTransition, to_wma_record

    start, twin_action = load_start_pages()[0], state["candidates"][0]
    train = tmp_path / "train_data"
    train.mkdir()
    record = WebTransition(objective="anything", action=twin_action, tree=start["tree"], gold="New items:\nNone",
                           url=start["url"])
    (train / "train.jsonl").write_text(json.dumps(to_wma_record(record)) + "\n")
    assert main(["--decisions", "--tasks", "0", "--max-steps", "1", "--samples", "6", "--out", str(tmp_path),
                 "--twins-of", str(train)]) == 0
    report = json.loads((tmp_path / "web_decisions.json").read_text())
    (state,) = report["states"]
    assert state["twin"] == {a: a == twin_action for a in state["candidates"] if not a.startswith("stop")}
    for name in ("SFT", "RLVR"):
        row = report["summary"][name]
        assert row["transitions_twin"] == 1 and row["transitions_no_twin"] == row["transitions"] - 1
        assert row["f1_twin"] == 100.0 * state["models"][name]["f1"][twin_action]
    assert "F1, twin in training" in (tmp_path / "web_decisions.md").read_text()
