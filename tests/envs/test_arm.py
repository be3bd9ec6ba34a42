"""RLVRSim/ArmReach-v0, the MuJoCo arm scene: API contract, seeded determinism, the controller's arrival,
the camera projection and the colour-mask judges against MuJoCo's ground truth, pushing, bad input, and
the collector behind `python training/collect.py --task arm`."""

import json
import os

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # must precede the first `import mujoco` (headless rendering)
pytest.importorskip("mujoco")

import gymnasium as gym  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from rlvr_sim.envs.arm.collect import collect, parse_mix  # noqa: E402
from rlvr_sim.envs.arm.env import (  # noqa: E402
    BASE,
    PUCK_HIGH,
    PUCK_LOW,
    REACH_MAX,
    REACH_MIN,
    ArmReachEnv,
    arrival_errors,
    forward_kinematics,
    inverse_kinematics,
    reachable,
)

import rlvr_sim  # noqa: E402,F401  (registers the ids)
from rlvr_sim.data.episodes import load_episodes  # noqa: E402
from rlvr_sim.metrics.arm_pixels import LABELS, colour_labels, judge_puck, judge_tip, world_to_px  # noqa: E402


def test_check_env_and_registration():
    env = gym.make("RLVRSim/ArmReach-v0")
    assert env.spec.max_episode_steps == 100
    check_env(env.unwrapped, skip_render_check=False)
    assert env.observation_space.shape == (64, 64, 3) and env.observation_space.dtype == np.uint8
    assert env.action_space.shape == (2,) and np.all(env.action_space.high == 512)
    env.close()


def test_same_seed_same_frames_different_seed_differs():
    runs = []
    for seed in (5, 5, 6):
        env = ArmReachEnv()
        obs, info = env.reset(seed=seed)
        frames, tips = [obs], [info["tip"]]
        for target in [(100.0, 300.0), (300.0, 120.0), (250.0, 250.0)]:
            obs, _, _, _, info = env.step(np.array(target, np.float32))
            frames.append(obs)
            tips.append(info["tip"])
        runs.append((np.stack(frames), np.stack(tips)))
        env.close()
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0][0], runs[2][0][0])


def test_kinematics_round_trip_and_unreachable_targets():
    rng = np.random.default_rng(0)
    for _ in range(200):
        radius = rng.uniform(REACH_MIN + 1, REACH_MAX - 1)
        angle = rng.uniform(-np.pi, np.pi)
        target = BASE + radius * np.array([np.cos(angle), np.sin(angle)])
        joints = inverse_kinematics(target, shoulder_now=rng.uniform(-10, 10))
        assert 0 <= joints[1] <= np.pi
        np.testing.assert_allclose(forward_kinematics(joints), target, atol=1e-6)
    # too far: the nearest reachable point lies on the outer circle, along the same ray
    far = reachable(np.array([512.0, 256.0]))
    np.testing.assert_allclose(far, [256.0 + REACH_MAX, 256.0], atol=1e-2)
    near = reachable(BASE + np.array([0.0, 3.0]))
    np.testing.assert_allclose(np.hypot(*(near - BASE)), REACH_MIN, atol=1e-2)


def test_far_targets_are_reached_within_three_steps():
    """PushT's agent semantics: a far target held 3 model steps puts the tip on it (here < 0.5 px at 64x64)."""
    errors = arrival_errors(runs=60, steps=3, seed=1)
    assert np.median(errors[:, 0]) > 5.0  # one step is not enough for a far target: the arm has dynamics
    assert errors[:, 2].max() < 0.5


def test_tip_site_projects_onto_the_tip_marker_pixels():
    for size in (64, 256):
        env = ArmReachEnv(observation_size=size)
        rng = np.random.default_rng(size)
        obs, info = env.reset(seed=3)
        for _ in range(10):
            obs, _, _, _, info = env.step(rng.uniform(0, 512, size=2).astype(np.float32))
            np.testing.assert_allclose(info["tip_px"], world_to_px(info["tip"], size), atol=1e-9)
            column, row = np.floor(info["tip_px"]).astype(int)
            assert colour_labels(obs)[0, row, column] == LABELS["tip"]
            assert np.linalg.norm(judge_tip(obs)[0] - info["tip_px"]) < 0.5 * size / 64
        env.close()


def test_judges_on_collected_frames(tmp_path):
    """Tip and puck judges against MuJoCo's projected sites: median error under 1 px on true frames."""
    paths = collect(tmp_path, episodes=3, seed=0, max_steps=60)
    tip_errors, puck_errors = [], []
    for path in paths:
        data = np.load(path)
        tip_errors.append(np.linalg.norm(judge_tip(data["image"]) - data["tip_px"], axis=1))
        puck_errors.append(np.linalg.norm(judge_puck(data["image"]) - data["puck_px"], axis=1))
    tip_errors, puck_errors = np.concatenate(tip_errors), np.concatenate(puck_errors)
    assert np.median(tip_errors) < 1.0 and tip_errors.max() < 1.0
    assert np.nanmedian(puck_errors) < 1.0


def test_judges_report_missing_objects_and_reject_bad_frames():
    blank = np.full((2, 64, 64, 3), 245, np.uint8)
    assert np.isnan(judge_tip(blank)).all() and np.isnan(judge_puck(blank)).all()
    with pytest.raises(ValueError, match="uint8"):
        judge_tip(np.zeros((2, 64, 64, 3), np.float32))
    with pytest.raises(ValueError, match="shape"):
        judge_tip(np.zeros((64, 64), np.uint8))


def test_tip_pushes_the_puck_and_the_walls_hold_it():
    env = ArmReachEnv()
    _, info = env.reset(seed=0, options={"joints": (0.0, 0.0), "puck": (256.0, 150.0)})
    start = info["puck"].copy()
    # sweep the tip through the puck's spot from left to right, then hold it beyond
    for target in [(180.0, 150.0)] * 3 + [(330.0, 150.0)] * 3:
        _, _, _, _, info = env.step(np.array(target, np.float32))
    assert np.hypot(*(info["puck"] - start)) > 20.0
    rng = np.random.default_rng(0)
    for _ in range(200):  # shove it around: it never leaves the walled square
        _, _, _, _, info = env.step(np.clip(info["puck"] + rng.normal(0, 60, 2), 0, 512).astype(np.float32))
        assert np.all(info["puck"] >= PUCK_LOW - 3) and np.all(info["puck"] <= PUCK_HIGH + 3)
    env.close()


def test_reward_and_success_follow_the_goal():
    env = ArmReachEnv()
    _, info = env.reset(seed=0, options={"goal": (256.0, 60.0)})
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step(np.array([256.0, 60.0], np.float32))
    assert info["is_success"] and not terminated and not truncated
    assert reward == pytest.approx(-info["distance"] / 512)
    env.close()


def test_bad_input_raises_clear_errors():
    env = ArmReachEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.step(np.array([np.nan, 1.0], np.float32))
    with pytest.raises(ValueError, match="finite"):
        env.step(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"block": (1, 2)})
    with pytest.raises(ValueError, match="inside the walls"):
        env.reset(options={"puck": (20.0, 20.0)})
    with pytest.raises(ValueError, match="render_mode"):
        ArmReachEnv(render_mode="human")
    env.close()


def test_collector_writes_loadable_seeded_episodes(tmp_path):
    first = collect(tmp_path / "a", episodes=2, seed=4, max_steps=20)
    again = collect(tmp_path / "b", episodes=2, seed=4, max_steps=20)
    for left, right in zip(first, again):
        a, b = np.load(left), np.load(right)
        assert np.array_equal(a["image"], b["image"]) and np.array_equal(a["action"], b["action"])
    data = np.load(first[0])
    assert data["image"].shape == (21, 64, 64, 3) and data["image"].dtype == np.uint8
    assert data["action"].shape == (21, 2) and data["action"].dtype == np.float32
    assert data["tip_px"].shape == (21, 2) and data["puck_px"].shape == (21, 2) and data["state"].shape == (21, 6)
    assert str(data["env_id"]) == "RLVRSim/ArmReach-v0" and int(data["action_repeat"]) == 1
    assert (data["action"] >= 0).all() and (data["action"] <= 512).all()
    episodes = load_episodes(tmp_path / "a", image_size=64)
    assert len(episodes) == 2 and episodes[0].actions.shape == (20, 2)


def test_mix_errors_and_command_line(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown segment"):
        parse_mix("far:1,dance:2")
    with pytest.raises(ValueError, match="positive integer"):
        parse_mix("far:0")
    from rlvr_sim.training.collect import main

    assert main(["--task", "arm", "--out", str(tmp_path), "--episodes", "1", "--max-steps", "5", "--seed", "2"]) == 0
    assert '"episodes": 1' in capsys.readouterr().out
    assert len(list(tmp_path.glob("arm_*.npz"))) == 1


def test_measure_reports_arrival_and_judge_accuracy(tmp_path, capsys):
    from rlvr_sim.envs.arm.measure import judge_accuracy, main

    collect(tmp_path, episodes=2, seed=1, max_steps=10)
    accuracy = judge_accuracy(tmp_path)
    assert accuracy["episodes"] == 2 and accuracy["tip_px"]["count"] == 22 and accuracy["tip_px"]["max"] < 1.0
    main(["--runs", "5", "--data", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert report["arrival"]["after_3_steps"]["max"] < 0.5 and report["judge"]["tip_px"]["missing"] == 0
    with pytest.raises(FileNotFoundError, match="no arm_"):
        judge_accuracy(tmp_path / "empty")
