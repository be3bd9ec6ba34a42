"""The pygame viewer driven headless (SDL_VIDEODRIVER=dummy) with synthetic events in every mode."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"

import gymnasium as gym
import imageio.v2 as imageio
import numpy as np
import pygame
import pytest

from rlvr_sim.viewer import app
from rlvr_sim.viewer.session import FrameScorer, ViewerSession
from rlvr_sim.viewer.worlds import EnvHandle, ground_truth_available, make_ground_truth

SIZE = 64


class DotWorld(gym.Env):
    """A stand-in learned simulator: a dot moves halfway to the target each step over the start frame,
    with seeded noise scaled by `temperature` (so sampling temperature visibly matters)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, render_mode=None):
        self.observation_space = gym.spaces.Box(0, 255, (SIZE, SIZE, 3), np.uint8)
        self.action_space = gym.spaces.Box(0.0, 512.0, (2,), np.float32)
        self.render_mode = render_mode
        self.temperature = 1.0
        self.model_name = "dot-world"

    def _frame(self):
        frame = self.background.copy()
        x, y = np.clip((self.position * SIZE / 512).astype(int), 0, SIZE - 3)
        frame[y : y + 3, x : x + 3] = (40, 80, 255)
        return frame

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        frame = (options or {}).get("frame")
        self.background = np.full((SIZE, SIZE, 3), 255, np.uint8) if frame is None else np.array(frame)
        self.position = self.np_random.uniform(100, 400, size=2)
        return self._frame(), {}

    def step(self, action):
        action = np.asarray(action, dtype=np.float64)
        if action.shape != (2,) or not np.isfinite(action).all():
            raise ValueError(f"bad action {action!r}")
        noise = self.np_random.normal(0, 3.0 * self.temperature, size=2)
        self.position = self.position + 0.5 * (action - self.position) + noise
        return self._frame(), 0.0, False, False, {}

    def render(self):
        return self._frame()


gym.register("ViewerDotWorld-v0", entry_point=DotWorld)


def make_session(mode="play", truth=False, episode=None, policy=None, scorer=None):
    def world_factory():
        return gym.make("ViewerDotWorld-v0")

    world = EnvHandle(world_factory(), world_factory, "dot world")
    truth_handle = None
    if truth:
        truth_handle = EnvHandle(
            make_ground_truth(SIZE, SIZE), lambda: make_ground_truth(SIZE, SIZE), "gym-pusht"
        )
    return ViewerSession(
        world, truth_handle, mode=mode, policy=policy, episode=episode, scorer=scorer, seed=3
    )


def make_viewer(session, tmp_path, **kwargs):
    return app.Viewer(session, model_label="dot-world", scale=3, fps=0, horizon=4, out_dir=tmp_path, **kwargs)


def post_key(key):
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode="", scancode=0))


def post_mouse(viewer, fx, fy, panel=0):
    left, top = viewer.layout.panels[panel]
    width, height = viewer.frame_pixels
    position = (int(left + fx * width), int(top + fy * height))
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=position, rel=(0, 0), buttons=(0, 0, 0)))


def dot_position(frame):
    ys, xs = np.nonzero((frame[..., 2] == 255) & (frame[..., 0] == 40))
    return xs.mean(), ys.mean()


def test_play_mode_mouse_steers_and_frames_change(tmp_path):
    viewer = make_viewer(make_session("play"), tmp_path)
    first = viewer.capture().copy()
    post_mouse(viewer, 0.9, 0.1)
    for _ in range(6):
        assert viewer.tick()
    x, y = dot_position(viewer.session.world_frame)
    assert x > 45 and y < 20, "the dot should move to the mouse target (top right)"
    np.testing.assert_allclose(viewer.session.target, [0.9 * 512, 0.1 * 512], atol=10)
    assert not np.array_equal(first, viewer.capture())
    # pause: no steps; n: exactly one step
    post_key(pygame.K_SPACE)
    viewer.tick()
    paused_at = viewer.session.step_index
    viewer.tick()
    assert viewer.session.step_index == paused_at
    post_key(pygame.K_n)
    viewer.tick()
    assert viewer.session.step_index == paused_at + 1
    # temperature keys reach the env
    post_key(pygame.K_UP)
    viewer.tick()
    assert viewer.session.world.env.unwrapped.temperature == pytest.approx(1.1)
    # reset starts a new rollout from step 0
    post_key(pygame.K_r)
    viewer.tick()
    assert viewer.session.step_index == 0
    post_key(pygame.K_ESCAPE)
    assert viewer.tick() is False
    viewer.close()
    assert not pygame.display.get_init()


def test_filmstrip_predicts_ahead_without_moving_the_live_rollout(tmp_path):
    viewer = make_viewer(make_session("play"), tmp_path)
    post_mouse(viewer, 0.1, 0.9)
    post_key(pygame.K_SPACE)
    post_key(pygame.K_f)
    viewer.tick()
    live = viewer.session.world_frame.copy()
    strip = viewer.strip.world
    assert len(strip) == 4
    assert not np.array_equal(strip[0], strip[-1])
    np.testing.assert_array_equal(viewer.session.world_frame, live)
    # the branch is exact: stepping the live env with the same actions reproduces the look-ahead
    post_key(pygame.K_n)
    viewer.tick()
    np.testing.assert_array_equal(viewer.session.world_frame, strip[0])
    viewer.close()


def test_recording_key_writes_a_video_with_one_frame_per_step(tmp_path):
    viewer = make_viewer(make_session("play"), tmp_path, record_format="gif")
    post_key(pygame.K_v)
    for _ in range(5):
        viewer.tick()
    post_key(pygame.K_v)
    viewer.tick()  # this tick steps once more before the recorder is closed by the key
    paths = list(tmp_path.glob("viewer_*.gif"))
    assert len(paths) == 1
    frames = imageio.mimread(paths[0])
    # the first frame is captured when recording starts, then one per step (5 ticks after the key)
    assert len(frames) == 1 + 5
    assert frames[0].shape[:2] == (viewer.layout.size[1], viewer.layout.size[0])
    post_key(pygame.K_s)
    viewer.tick()
    assert len(list(tmp_path.glob("viewer_*.png"))) == 1
    viewer.close()


class SweepPolicy:
    """A policy for the dot world: walks the target along a diagonal, one stride per call."""

    def __init__(self, seed=0):
        self.calls = 0

    def reset(self, seed=None):
        self.calls = 0

    def act(self, info):
        self.calls += 1
        return np.array([40.0 * self.calls, 30.0 * self.calls], dtype=np.float32) % 512


def test_policy_mode_and_taking_control(tmp_path):
    viewer = make_viewer(make_session("policy", policy=SweepPolicy()), tmp_path)
    frames = []
    for _ in range(3):
        viewer.tick()
        frames.append(viewer.session.world_frame.copy())
    assert viewer.session.policy.calls == 3
    assert not np.array_equal(frames[0], frames[-1])
    post_key(pygame.K_c)
    post_mouse(viewer, 0.95, 0.05)
    for _ in range(5):
        viewer.tick()
    assert viewer.session.human_control
    assert viewer.session.policy.calls == 3, "the policy must not act while the user drives"
    x, y = dot_position(viewer.session.world_frame)
    assert x > 45 and y < 20
    post_key(pygame.K_c)
    viewer.tick()
    assert viewer.session.policy.calls == 4
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert viewer.tick() is False
    viewer.close()


def write_episode(path, steps=6):
    frames = np.full((steps, 96, 96, 3), 255, np.uint8)
    for t in range(steps):
        frames[t, 10 + 8 * t : 16 + 8 * t, 40:46] = (200, 30, 30)
    actions = np.stack([np.linspace(100, 400, steps), np.full(steps, 256.0)], axis=1).astype(np.float32)
    np.savez(path, image=frames, action=actions)
    return path


def test_replay_mode_scores_frames_and_stops_at_episode_end(tmp_path):
    from rlvr_sim.viewer.worlds import load_episode

    episode = load_episode(write_episode(tmp_path / "ep.npz"), SIZE, SIZE)
    session = make_session("replay", episode=episode, scorer=FrameScorer(with_lpips=False))
    viewer = make_viewer(session, tmp_path)
    np.testing.assert_array_equal(session.world.env.unwrapped.background, episode.frames[0])
    steps = viewer.run(max_steps=50)
    assert steps == len(episode) - 1
    assert session.steps_left == 0
    np.testing.assert_array_equal(session.truth_frame, episode.frames[-1])
    assert session.readout.ssim is not None and -100 <= session.readout.ssim <= 100
    np.testing.assert_allclose(session.world.actions, episode.actions)
    viewer.close()


@pytest.mark.skipif(not ground_truth_available(), reason="gym-pusht not installed")
def test_side_by_side_with_gym_pusht_gets_the_same_actions(tmp_path):
    viewer = make_viewer(make_session("play", truth=True), tmp_path)
    session = viewer.session
    # the model starts from the ground truth's first frame
    np.testing.assert_array_equal(session.world.env.unwrapped.background, session.truth_frame)
    post_mouse(viewer, 0.25, 0.75, panel=1)  # the truth panel steers too
    for _ in range(4):
        viewer.tick()
    np.testing.assert_allclose(session.truth.actions, session.world.actions)
    np.testing.assert_allclose(session.truth.actions[-1], [128, 384], atol=10)
    np.testing.assert_allclose(session.truth_info["pos_agent"], [128, 384], atol=60)
    post_key(pygame.K_f)
    viewer.tick()
    assert len(viewer.strip.truth) == 4 and len(viewer.strip.world) == 4
    viewer.close()


def test_scripted_record_run_from_the_command_line(tmp_path):
    out = tmp_path / "run.mp4"
    shot = tmp_path / "shot.png"
    code = app.main(
        [
            "--env-id",
            "ViewerDotWorld-v0",
            "--ground-truth",
            "off",
            "--record",
            str(out),
            "--steps",
            "7",
            "--screenshot",
            str(shot),
            "--scale",
            "2",
            "--fps",
            "0",
            "--no-help",
        ]
    )
    assert code == 0
    reader = imageio.get_reader(out)
    assert reader.count_frames() == 8
    assert imageio.imread(shot).ndim == 3


def test_bad_arguments_fail_clearly(tmp_path):
    with pytest.raises(SystemExit):
        app.main(["--env-id", "ViewerDotWorld-v0", "--record", str(tmp_path / "x.mp4")])
    with pytest.raises(ValueError, match="needs --episode"):
        app.main(
            [
                "--env-id",
                "ViewerDotWorld-v0",
                "--mode",
                "replay",
                "--steps",
                "1",
                "--record",
                str(tmp_path / "x.gif"),
            ]
        )
    with pytest.raises(ValueError, match="record to .mp4 or .gif"):
        app.main(
            [
                "--env-id",
                "ViewerDotWorld-v0",
                "--ground-truth",
                "off",
                "--steps",
                "1",
                "--record",
                str(tmp_path / "x.avi"),
            ]
        )
    bad = tmp_path / "bad.npz"
    np.savez(bad, image=np.zeros((3, 8, 8, 3), np.uint8))
    with pytest.raises(ValueError, match="missing key"):
        app.main(
            [
                "--env-id",
                "ViewerDotWorld-v0",
                "--mode",
                "replay",
                "--episode",
                str(bad),
                "--steps",
                "1",
                "--record",
                str(tmp_path / "x.gif"),
            ]
        )


def test_fps_benchmark_reports_play_mode_rate(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "viewer_fps.py"
    spec = importlib.util.spec_from_file_location("viewer_fps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "fps.json"
    result = module.main(
        [
            "--frames",
            "15",
            "--warmup",
            "2",
            "--out",
            str(out),
            "--",
            "--env-id",
            "ViewerDotWorld-v0",
            "--ground-truth",
            "off",
        ]
    )
    assert result["frames_per_second"] > 1.0
    assert result["world_model_step_ms"] is not None and result["ground_truth_step_ms"] is None
    assert out.is_file()


@pytest.mark.skipif(not ground_truth_available(), reason="gym-pusht not installed")
def test_pusht_expert_policy_acts_on_the_ground_truth_state(tmp_path):
    from rlvr_sim.viewer.session import make_policy

    session = make_session("policy", truth=True, policy=make_policy("expert", seed=0))
    viewer = make_viewer(session, tmp_path, show_filmstrip=True)
    for _ in range(3):
        viewer.tick()
    assert len(session.world.actions) == 3
    np.testing.assert_allclose(session.truth.actions, session.world.actions)
    assert len(viewer.strip.truth) == 4 and len(viewer.strip.world) == 4
    viewer.close()


def test_pusht_policy_without_ground_truth_fails_clearly():
    from rlvr_sim.viewer.session import make_policy

    session = make_session("policy", policy=make_policy("expert", seed=0))
    with pytest.raises(ValueError, match="true state"):
        session.step()
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("grandmaster", seed=0)


def test_action_repeat_holds_the_action_for_the_models_frame_skip():
    def factory():
        env = gym.make("ViewerDotWorld-v0")
        env.unwrapped.temperature = 0.0
        return env

    handle = EnvHandle(factory(), factory, "dot world", action_repeat=3)
    handle.reset(seed=0)
    start = handle.env.unwrapped.position.copy()
    target = np.array([500.0, 20.0], np.float32)
    handle.step(target)
    np.testing.assert_allclose(handle.env.unwrapped.position, target + (start - target) / 8)
    frames, _ = handle.imagine(lambda k, info: target, 1, {})
    expected = target + (start - target) / 64
    np.testing.assert_allclose(
        dot_position(frames[0]), np.clip((expected * SIZE / 512).astype(int), 0, SIZE - 3) + 1
    )
    with pytest.raises(ValueError, match="action_repeat"):
        EnvHandle(factory(), factory, "dot world", action_repeat=0)


def test_capture_folder_is_out_and_out_dir_is_refused():
    parser = app.build_parser()
    assert parser.parse_args([]).out == "viewer_captures"
    assert parser.parse_args(["--out", "shots"]).out == "shots"
    with pytest.raises(SystemExit):  # the removed spelling: a usage error naming --out
        parser.parse_args(["--out-dir", "old"])
