"""PushT MPC (`rlvr_sim.policies.pusht_mpc`): seeded plans, the oracle beats random on easy goals, the learned
simulator's plan moves the agent toward its goal, the goal-less (NearGoalTask) cost brings a far agent to the T,
bad input fails clearly, and the policy is a FramePolicy."""

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
import gymnasium as gym  # noqa: E402
from rlvr_sim.policies.pusht_mpc import (  # noqa: E402
    NEAR_GOAL_COST,
    GoalCost,
    GymPushTModel,
    GymPushTMPCPolicy,
    LearnedPushTModel,
    MPCPlanner,
    PlannerConfig,
    PlanStart,
    PushTMPCPolicy,
    make_model,
    reached,
)

SMALL = PlannerConfig(samples=24, iterations=3, elites=6, horizon=4)


@pytest.fixture(scope="module")
def real():
    env = gym.make("gym_pusht/PushT-v0", obs_type="pixels", observation_width=64, observation_height=64).unwrapped
    yield env
    env.close()


def _state(env) -> np.ndarray:
    return np.array([*env.agent.position, *env.block.position, env.block.angle, *env.agent.velocity])


def _easy_goal(env, index: int) -> tuple[np.ndarray, np.ndarray]:
    """A start state (7,) and the state 12 env steps later after a push up into the T's stem: reachable."""
    rng = np.random.default_rng([3, index])
    block = np.array([256.0, 200.0]) + rng.uniform(-50, 50, 2)
    env.reset(options={"reset_to_state": [*(block + [0.0, 150.0]), *block, rng.uniform(-0.15, 0.15)]})
    start = _state(env)
    target = start[:2] + [0.0, -60.0] + rng.uniform(-20, 20, 2)  # up into the stem: the T moves
    for _ in range(12):
        env.step(target.astype(np.float32))
    return start, _state(env)[:5]


def _play(env, start: np.ndarray, goal: np.ndarray, act, budget: int = 24) -> bool:
    """Run `act(frame, state) -> target` every 4 env steps from `start` in gym-pusht; whether the goal is reached."""
    env.reset(seed=0)
    env.block.angle, env.block.position = float(start[4]), tuple(start[2:4])
    env.agent.position, env.agent.velocity = tuple(start[:2]), tuple(start[5:7])
    frame = env._render()
    for step in range(budget):
        if step % 4 == 0:
            action = act(frame, _state(env))
        frame, *_ = env.step(np.asarray(action, dtype=np.float32))
        if reached(_state(env)[:5], goal):
            return True
    return False


def test_a_seed_gives_identical_plans_and_another_seed_another():
    model = GymPushTModel()
    start, cost = PlanStart(state=[100.0, 300.0, 250.0, 250.0, 0.3]), GoalCost([200.0, 300.0, 260.0, 250.0, 0.3])
    plans = [MPCPlanner(model, SMALL, seed=s).plan(start, cost) for s in (5, 5, 6)]
    assert np.array_equal(plans[0].actions, plans[1].actions) and plans[0].cost == plans[1].cost
    assert not np.array_equal(plans[0].actions, plans[2].actions)
    assert plans[0].actions.shape == (SMALL.horizon, 2) and plans[0].rollouts == SMALL.samples * SMALL.iterations
    mppi = PlannerConfig(samples=16, iterations=2, elites=4, horizon=3, method="mppi")
    assert np.array_equal(MPCPlanner(model, mppi, seed=1).plan(start, cost).actions,
                          MPCPlanner(model, mppi, seed=1).plan(start, cost).actions)


def test_oracle_planner_beats_random_on_easy_goals(real):
    wins = {"oracle": 0, "random": 0}
    for index in range(4):
        start, goal = _easy_goal(real, index)
        policy = PushTMPCPolicy(seed=index, model="gym-pusht", goal=goal, config=SMALL, replan_every=1)
        wins["oracle"] += _play(real, start, goal, lambda frame, state, policy=policy: policy.act(frame, state=state))
        rng = np.random.default_rng(index)
        wins["random"] += _play(real, start, goal, lambda frame, state, rng=rng: rng.uniform(50, 462, 2))
    assert wins["oracle"] >= 3 and wins["oracle"] > wins["random"], wins


def test_learned_planner_moves_the_agent_toward_its_goal(real):
    """Plan in the embedded learned simulator from a 64x64 frame, execute the plan in gym-pusht."""
    real.reset(options={"reset_to_state": [120.0, 380.0, 300.0, 200.0, 0.4]})
    frame, start = real._render(), _state(real)
    goal = np.array([380.0, 400.0, *start[2:5]])  # the agent far across the arena, the T where it is
    model = LearnedPushTModel("pusht_pose_base")
    config = PlannerConfig(samples=32, iterations=3, elites=6, horizon=3, init_std=120.0)
    plan = MPCPlanner(model, config, seed=0).plan(PlanStart(frame=frame), GoalCost(goal))
    assert model.frames_generated == 32 * 3 * 3 and plan.predicted.shape == (3, 5)
    for action in plan.actions:
        for _ in range(model.frame_skip):
            real.step(action.astype(np.float32))
    before, after = np.linalg.norm(start[:2] - goal[:2]), np.linalg.norm(_state(real)[:2] - goal[:2])
    assert before > 250 and after < 0.5 * before, (before, after)


def test_bad_input_gives_clear_errors():
    with pytest.raises(ValueError, match="5 finite numbers"):
        GoalCost([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="agent's term, the block's"):
        GoalCost(np.zeros(5), agent=False, block=False)
    with pytest.raises(ValueError, match="approach_weight >= 0"):
        GoalCost(np.zeros(5), approach_weight=-1.0)
    with pytest.raises(ValueError, match="elites"):
        PlannerConfig(samples=4, elites=8)
    with pytest.raises(ValueError, match="method"):
        PlannerConfig(method="sgd")
    with pytest.raises(ValueError, match="samples must be a positive integer"):
        PlannerConfig(samples=0)
    model = GymPushTModel()
    start = PlanStart(state=np.zeros(5))
    with pytest.raises(ValueError, match=r"shape \(N, H, 2\)"):
        model.rollout(start, np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        model.rollout(start, np.full((1, 1, 2), np.nan))
    with pytest.raises(ValueError, match="start frame or a start state"):
        model.rollout(PlanStart(), np.zeros((1, 1, 2)))
    with pytest.raises(ValueError, match="unknown planner model"):
        make_model("dreamer")
    with pytest.raises(ValueError, match="needs rollout"):
        MPCPlanner(object())
    with pytest.raises(ValueError, match="block-blind planner needs an explicit goal"):
        PushTMPCPolicy(model=model, blind=True)
    with pytest.raises(ValueError, match="replan_every"):
        PushTMPCPolicy(model=model, replan_every=9, config=SMALL)
    with pytest.raises(ValueError, match="start frame"):
        make_model("learned:pusht_pose_base").world.check_frames(np.zeros((1, 8, 8, 3), np.uint8), 1)


def test_cost_is_one_per_term_at_the_tolerance_and_blind_ignores_the_block():
    goal = np.array([100.0, 100.0, 200.0, 200.0, 0.0])
    at_tolerance = np.array([[[100.0, 120.0, 200.0, 200.0, np.pi / 9]]])
    assert GoalCost(goal).step_costs(at_tolerance)[0, 0] == pytest.approx(2.0)
    assert GoalCost(goal, block=False).step_costs(at_tolerance)[0, 0] == pytest.approx(1.0)
    assert GoalCost(goal).step_costs(np.full((1, 1, 5), np.nan))[0, 0] > 10
    assert reached(goal + [5, 5, 5, 5, 0.1], goal) and not reached(goal + [0, 0, 0, 0, 0.5], goal)


def test_mean_weight_prefers_arriving_and_staying_over_passing_the_goal_once():
    """Agent-only cost (blind), 4 steps: `stay` is 10 units off throughout, `passing` touches the goal at step 2
    between two far steps and ends 18 off. Best + last prefers `passing` (0.9 < 1.0); with the mean step's cost
    at weight 0.5 `stay` wins (1.25 < 1.76), and the policy passes its weight on to an explicit goal's cost."""
    goal = np.array([100.0, 100.0, 300.0, 300.0, 0.0])
    states = np.repeat(goal[None, None], 4, axis=1).repeat(2, axis=0)
    states[0, :, 0] += 10.0
    states[1, :, 0] += [60.0, 0.0, 60.0, 18.0]
    plain, weighted = GoalCost(goal, block=False), GoalCost(goal, block=False, mean_weight=0.5)
    np.testing.assert_allclose(plain(states), [1.0, 0.9])
    np.testing.assert_allclose(weighted(states), [1.25, 0.9 + 0.5 * 1.725])
    with pytest.raises(ValueError, match="mean_weight >= 0"):
        GoalCost(goal, mean_weight=-1.0)
    policy = PushTMPCPolicy(model=GymPushTModel(), goal=goal, config=SMALL, mean_weight=0.5)
    assert policy.cost.mean_weight == 0.5 and NEAR_GOAL_COST.mean_weight == 0.0


def test_max_combine_is_below_one_exactly_where_the_success_test_passes():
    """"max" joins a step's position and angle terms as the success test does: 15 units off with the angle 0.3
    rad off (inside both tolerances) costs 0.75 + 0.86 = 1.61 summed but 0.86 by max; 0 units off with the angle
    0.4 rad off (a failure) costs 1.15 either way, so only "max" ranks the reachable state first."""
    goal = np.array([100.0, 100.0, 200.0, 200.0, 0.0])
    states = np.repeat(goal[None, None], 2, axis=0)
    states[0, 0, 2], states[0, 0, 4] = 215.0, 0.3
    states[1, 0, 4] = 0.4
    summed, larger = GoalCost(goal).step_costs(states)[:, 0], GoalCost(goal, combine="max").step_costs(states)[:, 0]
    assert summed[0] > summed[1] and larger[0] < 1 < larger[1]
    assert reached(states[0, 0], goal) and not reached(states[1, 0], goal)
    rng = np.random.default_rng(0)
    many = goal + rng.normal(0, [15, 15, 15, 15, 0.4], (400, 1, 5))
    np.testing.assert_array_equal(GoalCost(goal, combine="max").step_costs(many)[:, 0] < 1,
                                  [reached(s[0], goal) for s in many])
    assert GoalCost(goal, combine="max").step_costs(np.full((1, 1, 5), np.nan))[0, 0] > 10
    with pytest.raises(ValueError, match="combine"):
        GoalCost(goal, combine="mean")
    with pytest.raises(ValueError, match="last_weight"):
        GoalCost(goal, last_weight=-1.0)


def test_last_weight_scales_the_last_step_and_the_policy_passes_the_cost_options_on():
    goal = np.array([100.0, 100.0, 300.0, 300.0, 0.0])
    states = np.repeat(goal[None, None], 3, axis=1)
    states[0, :, 0] += [60.0, 0.0, 20.0]  # best step 0, last step 1 (blind: agent term only)
    assert GoalCost(goal, block=False, last_weight=0.5)(states)[0] == pytest.approx(0.5)
    assert GoalCost(goal, block=False, last_weight=0.0)(states)[0] == pytest.approx(0.0)
    policy = PushTMPCPolicy(model=GymPushTModel(), goal=goal, config=SMALL, combine="max", last_weight=0.5)
    assert (policy.cost.combine, policy.cost.last_weight) == ("max", 0.5)
    assert (NEAR_GOAL_COST.combine, NEAR_GOAL_COST.last_weight) == ("sum", 1.0)


def test_near_goal_cost_uses_the_task_tolerances_and_rewards_approaching_the_block():
    from rlvr_sim.policies.pusht import NearGoalTask

    assert NEAR_GOAL_COST.position_tolerance == NearGoalTask.position_tol
    assert np.degrees(NEAR_GOAL_COST.angle_tolerance) == pytest.approx(NearGoalTask.angle_tol_deg)
    still = np.array([300.0, 300.0, 100.0, 100.0, 0.5])  # the block never moves in either sequence
    away, toward = np.repeat(still[None, None], 2, 1), np.repeat(still[None, None], 2, 1)
    toward[0, 1, :2] = [150.0, 150.0]
    costs = NEAR_GOAL_COST(np.concatenate([away, toward]))
    unshaped = GoalCost(NEAR_GOAL_COST.goal, agent=False, block=True)(np.concatenate([away, toward]))
    assert costs[1] < costs[0] and unshaped[1] == unshaped[0]  # only the approach term tells them apart


def test_goal_less_policy_brings_a_far_agent_to_the_block(real):
    """NearGoalTask's start: the agent at least 110 units from the T. The first plan of the gym-pusht planner with
    the goal-less cost ends nearer the block than it started."""
    from rlvr_sim.policies.pusht import NearGoalTask

    state = NearGoalTask().sample_start(np.random.default_rng(5))
    policy = GymPushTMPCPolicy(seed=0, config=SMALL, replan_every=1)
    real.reset(options={"reset_to_state": state})
    policy.act(real._render(), state=np.array([*real.agent.position, *real.block.position, real.block.angle]))
    gaps = np.hypot(*(policy.plan.predicted[:, :2] - policy.plan.predicted[:, 2:4]).T)
    assert gaps.min() < 0.6 * np.hypot(*(state[:2] - state[2:4]))


def test_mpc_policy_is_a_frame_policy_that_real2sim_builds(real):
    from rlvr_sim.evaluations.real2sim_episodes import checked_action, make_policy

    policy = make_policy("rlvr_sim.policies.pusht_mpc:GymPushTMPCPolicy", seed=3)
    assert isinstance(policy, GymPushTMPCPolicy)
    policy.planner.config = SMALL  # keep the test short
    policy.config = SMALL
    frame, _ = real.reset(seed=1)
    policy.reset(3)
    first = checked_action(policy, frame, "mpc")
    assert first.shape == (2,) and first.dtype == np.float32 and len(policy.decision_seconds) == 1
    policy.reset(3)
    assert np.array_equal(checked_action(policy, frame, "mpc"), first)  # reset(seed) replays


def test_coloured_noise_drifts_along_the_horizon_and_elites_are_kept():
    """noise_beta 2 (brown): neighbouring actions' noise correlates (white: not), unit variance per sample and
    seeded; keep_elites: CEM scores last iteration's best sequences again, so its best cost never rises."""
    white = MPCPlanner(GymPushTModel(), PlannerConfig(), seed=0).noise(4000, 6)
    brown = MPCPlanner(GymPushTModel(), PlannerConfig(noise_beta=2.0), seed=0).noise(4000, 6)
    lag = lambda n: np.corrcoef(n[:, :-1].ravel(), n[:, 1:].ravel())[0, 1]  # noqa: E731
    assert abs(lag(white)) < 0.05 and lag(brown) > 0.3
    np.testing.assert_allclose(brown.std(axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(brown, MPCPlanner(GymPushTModel(), PlannerConfig(noise_beta=2.0), seed=0).noise(4000, 6))
    config = PlannerConfig(samples=8, iterations=3, elites=4, horizon=3, keep_elites=0.5, noise_beta=1.0)
    start, cost = PlanStart(state=[100.0, 300.0, 250.0, 250.0, 0.3]), GoalCost([200.0, 300.0, 260.0, 250.0, 0.3])
    history = MPCPlanner(GymPushTModel(), config, seed=1).plan(start, cost).costs_per_iteration
    assert all(later <= earlier + 1e-9 for earlier, later in zip(history, history[1:]))
    for bad in ({"noise_beta": -1.0}, {"keep_elites": 1.5}):
        with pytest.raises(ValueError, match="noise_beta must be >= 0 and keep_elites"):
            PlannerConfig(**bad)


def test_policy_hands_its_recent_frames_and_actions_to_the_model_as_context():
    """context_steps=2: the first plan starts from the frame alone; later plans get the last two frames the
    policy saw before the current one and the actions it returned for them (replanning every action)."""

    class Recorder:
        name, frame_skip = "recorder", 4

        def __init__(self):
            self.contexts = []

        def rollout(self, start, actions):
            self.contexts.append(start.context)
            return np.zeros((*actions.shape[:2], 5))

    model = Recorder()
    policy = PushTMPCPolicy(model=model, goal=np.zeros(5), config=SMALL, replan_every=1, context_steps=2)
    frames = [np.full((64, 64, 3), i, np.uint8) for i in range(4)]
    returned = []
    for frame in frames:
        seen = len(model.contexts)
        returned.append(policy.act(frame, state=np.array([100.0, 100.0, 200.0, 200.0, 0.0])))
        context = model.contexts[seen]  # the context of this decision's plan
        if frame[0, 0, 0] == 0:
            assert context is None
        else:
            past, actions = context
            i = int(frame[0, 0, 0])
            assert [int(f[0, 0, 0]) for f in past] == list(range(max(0, i - 2), i))
            np.testing.assert_allclose(actions, np.stack(returned[max(0, i - 2) : i]))
    with pytest.raises(ValueError, match="context_steps"):
        PushTMPCPolicy(model=model, goal=np.zeros(5), config=SMALL, context_steps=-1)


def test_named_learned_planners_read_pose_tokens_with_context():
    """The Real2Sim classes plan the way the planning table's best learned row does (LEARNED_READOUT)."""
    from rlvr_sim.policies.pusht_mpc import LEARNED_READOUT, GymPushTMPCPolicy, LearnedOrdinalMPCPolicy

    learned = LearnedOrdinalMPCPolicy(seed=0)
    assert learned.model.readout == LEARNED_READOUT["readout"] == "pose"
    assert learned.context_steps == LEARNED_READOUT["context_steps"] == 3
    assert GymPushTMPCPolicy(seed=0).context_steps == 0
