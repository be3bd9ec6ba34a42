"""RLVRSim/PushT-MuJoCo-v0, the hand-built PushT: API contract, placement read back by the pixel judge,
gym-pusht's PD agent, pushing, a side-by-side run against gym-pusht, bad input and perturbations."""

import os

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # must precede the first `import mujoco` (headless rendering)
pytest.importorskip("mujoco")

import gymnasium as gym  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from rlvr_sim.envs.pusht_mujoco import MuJoCoPushTEnv, PushTPerturbation, goal_coverage  # noqa: E402

import rlvr_sim  # noqa: E402,F401  (registers the ids)
from rlvr_sim.metrics.pusht_pixels import GOAL_POSE, estimate_state  # noqa: E402

START = [120.0, 300.0, 300.0, 260.0, 0.6]  # agent x, y, block x, y, angle (gym-pusht reset_to_state order)


def _wrap_deg(angle: float) -> float:
    return float(np.degrees((angle + np.pi) % (2 * np.pi) - np.pi))


def _legacy_origin(state: list[float]) -> np.ndarray:
    """Where gym-pusht's reset_to_state puts the T (its angle is applied about the centre of gravity)."""
    x, y, angle = state[2], state[3], state[4]
    return np.array([x + 45 * np.sin(angle), y + 45 * (1 - np.cos(angle)), angle])


def _state_for_pose(agent: tuple[float, float], pose: np.ndarray) -> list[float]:
    """The reset_to_state that lands the T at `pose` (inverse of the legacy quirk)."""
    x, y, angle = pose
    return [*agent, x - 45 * np.sin(angle), y - 45 * (1 - np.cos(angle)), angle]


def test_check_env_and_registration():
    env = gym.make("RLVRSim/PushT-MuJoCo-v0")
    assert env.spec.max_episode_steps == 300
    check_env(env.unwrapped, skip_render_check=False)
    assert env.observation_space.shape == (96, 96, 3) and env.observation_space.dtype == np.uint8
    assert env.action_space.shape == (2,) and np.all(env.action_space.high == 512)
    env.close()


def test_import_rlvr_sim_does_not_import_mujoco():
    import subprocess
    import sys


    code = "import sys, rlvr_sim, gymnasium as g; g.spec('RLVRSim/PushT-MuJoCo-v0'); assert 'mujoco' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_same_seed_same_frames_and_gym_pusht_start_states():
    runs = []
    for _ in range(2):
        env = MuJoCoPushTEnv(observation_size=64)
        obs, info = env.reset(seed=7)
        frames = [obs] + [env.step(np.array([200.0 + 20 * t, 250.0], np.float32))[0] for t in range(5)]
        runs.append(np.stack(frames))
        env.close()
    assert np.array_equal(runs[0], runs[1])
    gym_pusht = pytest.importorskip("gym_pusht")  # noqa: F841  (registers gym_pusht/PushT-v0)
    ref = gym.make("gym_pusht/PushT-v0").unwrapped
    for seed in (0, 1, 2):  # the seeded draw is gym-pusht's: same seed, same start
        _, ref_info = ref.reset(seed=seed)
        _, info = MuJoCoPushTEnv(observation_size=64).reset(seed=seed)
        np.testing.assert_allclose(info["pos_agent"], ref_info["pos_agent"])
        # seed 1 starts the T in the bottom wall: each engine's settling step pushes it out its own way
        np.testing.assert_allclose(info["block_pose"], ref_info["block_pose"], atol=0.5)


@pytest.mark.parametrize("size", [64, 96])
def test_reset_to_state_places_bodies_where_the_pixel_judge_reads_them(size):
    env = MuJoCoPushTEnv(observation_size=size)
    pixel = 512.0 / size
    for state in (START, [400.0, 100.0, 220.0, 330.0, -2.0], [256.0, 450.0, 150.0, 150.0, 3.0]):
        obs, info = env.reset(options={"reset_to_state": state})
        np.testing.assert_allclose(info["pos_agent"], state[:2])
        np.testing.assert_allclose(info["block_pose"], _legacy_origin(state), atol=1e-6)
        judged = estimate_state(obs)
        assert np.linalg.norm(judged["pos_agent"] - state[:2]) < 1.0 * pixel
        assert np.linalg.norm(judged["block_pose"][:2] - info["block_pose"][:2]) < 1.5 * pixel
        assert abs(_wrap_deg(judged["block_pose"][2] - info["block_pose"][2])) < 4.0
    env.close()


def test_reset_to_state_matches_gym_pusht_legacy_placement():
    pytest.importorskip("gym_pusht")
    ref = gym.make("gym_pusht/PushT-v0").unwrapped
    _, ref_info = ref.reset(options={"reset_to_state": START})
    _, info = MuJoCoPushTEnv(observation_size=64).reset(options={"reset_to_state": START})
    np.testing.assert_allclose(info["block_pose"], ref_info["block_pose"], atol=1e-6)


def test_holding_a_target_for_12_steps_puts_the_agent_on_it():
    env = MuJoCoPushTEnv(observation_size=64)
    env.reset(options={"reset_to_state": [100.0, 100.0, 400.0, 400.0, 0.0]})
    target = np.array([300.0, 150.0], np.float32)
    for _ in range(12):
        _, _, _, _, info = env.step(target)
    assert np.linalg.norm(info["pos_agent"] - target) < 0.5
    assert np.linalg.norm(info["vel_agent"]) < 1.0
    env.close()


def test_pushing_the_t_moves_it_in_the_push_direction():
    env = MuJoCoPushTEnv(observation_size=64)
    # T upright (angle 0) with its bar at y in [230, 260]; the agent starts left of the bar and pushes +x.
    _, info = env.reset(options={"reset_to_state": [150.0, 245.0, 256.0, 230.0, 0.0]})
    start = info["block_pose"].copy()
    for x in np.linspace(180.0, 330.0, 8):
        _, _, _, _, info = env.step(np.array([x, 245.0], np.float32))
    moved = info["block_pose"] - start
    assert moved[0] > 30.0  # pushed right
    assert abs(moved[0]) > 3 * abs(moved[1])
    assert info["pos_agent"][0] < info["block_pose"][0] - 60.0  # the agent stayed outside the bar
    env.close()


def test_side_by_side_with_gym_pusht_from_the_same_states():
    """Same start states, same action sequence: the kinematic agents agree to float precision; the T
    poses differ only by what the engines do with contacts (printed; small, not zero)."""
    pytest.importorskip("gym_pusht")
    from rlvr_sim.policies.pusht import PushTPolicy

    ref = gym.make("gym_pusht/PushT-v0").unwrapped
    env = MuJoCoPushTEnv(observation_size=64)
    gaps, travel = [], []
    for seed in range(4):
        _, ref_info = ref.reset(seed=seed)
        _, info = env.reset(seed=seed)
        start = ref_info["block_pose"].copy()
        policy = PushTPolicy("expert", seed=0)
        for _ in range(32):
            action = policy.act(ref_info)
            _, _, _, _, ref_info = ref.step(action)
            _, _, _, _, info = env.step(action)
            np.testing.assert_allclose(info["pos_agent"], ref_info["pos_agent"], atol=1e-6)
        gaps.append((np.linalg.norm(info["block_pose"][:2] - ref_info["block_pose"][:2]),
                     abs(_wrap_deg(info["block_pose"][2] - ref_info["block_pose"][2]))))
        travel.append(np.linalg.norm(ref_info["block_pose"][:2] - start[:2]))
    gaps = np.array(gaps)
    print(f"T gap after 32 expert steps: {gaps[:, 0].mean():.2f} units, {gaps[:, 1].mean():.2f} deg "
          f"(gym-pusht's T travelled {np.mean(travel):.1f} units)")
    assert np.mean(travel) > 10.0  # the policy did push
    assert gaps[:, 0].mean() < 5.0 and gaps[:, 1].mean() < 3.0


def test_coverage_reward_and_success_match_gym_pusht():
    env = MuJoCoPushTEnv(observation_size=64)
    env.reset(options={"reset_to_state": _state_for_pose((450.0, 450.0), GOAL_POSE)})
    _, reward, terminated, truncated, info = env.step(np.array([450.0, 450.0], np.float32))
    assert info["coverage"] > 0.99 and info["is_success"] and terminated and not truncated and reward == 1.0
    gym_pusht = pytest.importorskip("gym_pusht")  # noqa: F841
    ref = gym.make("gym_pusht/PushT-v0").unwrapped
    ref.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        pose = np.array([*rng.uniform(180, 330, 2), rng.uniform(-np.pi, np.pi)])
        ref.block.angle = pose[2]  # angle first: pymunk turns about the centre of gravity
        ref.block.position = pose[:2].tolist()
        assert goal_coverage(pose) == pytest.approx(ref._get_coverage(), abs=1e-9)


@pytest.mark.parametrize(
    "call",
    [
        lambda env: env.step(np.array([np.nan, 10.0])),
        lambda env: env.step(np.array([1.0, 2.0, 3.0])),
        lambda env: env.step(5.0),
        lambda env: env.reset(options={"reset_to_state": [1.0, 2.0, 3.0]}),
        lambda env: env.reset(options={"reset_to_state": [1.0, 2.0, 3.0, 4.0, np.inf]}),
        lambda env: MuJoCoPushTEnv(perturb={"gravity": 1.0}),
        lambda env: MuJoCoPushTEnv(perturb={"damping": 2.0}),
        lambda env: MuJoCoPushTEnv(render_mode="human"),
    ],
)
def test_bad_inputs_raise_value_error(call):
    env = MuJoCoPushTEnv(observation_size=64)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        call(env)
    env.close()


def _rollout(perturb: dict | None) -> tuple[np.ndarray, np.ndarray]:
    env = MuJoCoPushTEnv(observation_size=64, perturb=perturb)
    _, info = env.reset(options={"reset_to_state": START})
    for x in np.linspace(170.0, 330.0, 10):
        obs, _, _, _, info = env.step(np.array([x, 300.0], np.float32))
    env.close()
    return obs, info["block_pose"]


def test_perturbations_change_the_outcome():
    base_frame, base_pose = _rollout(None)
    assert np.array_equal(_rollout({})[0], base_frame)  # an empty perturbation is none
    for physics in ({"friction": 0.8}, {"damping": 0.5}, {"block_mass": 20.0}):
        _, pose = _rollout(physics)
        gap = np.linalg.norm(pose[:2] - base_pose[:2]) + abs(_wrap_deg(pose[2] - base_pose[2]))
        assert gap > 2.0, physics
    frame, pose = _rollout({"colour_offset": (-40.0, 10.0, 0.0)})
    np.testing.assert_allclose(pose, base_pose)  # looks only
    assert np.abs(frame.astype(int) - base_frame.astype(int)).mean() > 5.0
    env = MuJoCoPushTEnv(observation_size=64, perturb=PushTPerturbation(camera_offset=(24.0, -16.0)))
    obs, info = env.reset(options={"reset_to_state": START})
    judged = estimate_state(obs)["pos_agent"]
    # the camera moved by (+24, -16): the agent appears shifted the other way
    np.testing.assert_allclose(judged - info["pos_agent"], [-24.0, 16.0], atol=8.0)
    env.close()
