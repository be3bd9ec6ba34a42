"""`tokenizer:<checkpoint>`: gym-pusht's own dynamics, every frame shown as the checkpoint's tokenizer draws it back
over the frame the served env would draw over. Its success rates are the most a simulator with that tokenizer can
show; a pose tokenizer (which reads the state and paints it) keeps the real outcome, and a keypoint tokenizer is
drawn over the same anchors as the env rolls them."""

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.envs.video.world_model_env import anchor_index  # noqa: E402
from rlvr_sim.evaluations.real2sim_episodes import EpisodeSpec, TokenizerView, run_episode  # noqa: E402


def test_the_env_draws_over_the_frames_anchor_index_names():
    """`anchor_index` is the env's own schedule: at every step the served world's anchor is the frame it names."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    world = VideoWorldModel("pusht_visual_mixed")
    world.start(world.start_frames[:1], [0])
    frames = [world.start_frames[:1]]
    for step in range(1, 14):
        frames.append(world.step(np.array([[100.0 + 20 * step, 300.0]]), temperature=0.0, median=True))
        assert np.array_equal(world.anchor, frames[anchor_index(step, world.horizon)]), f"step {step}"


def test_the_view_draws_over_the_anchors_the_env_rolls_to():
    view = TokenizerView("pusht_visual_mixed")
    assert view.horizon == 8
    # steps 1-8 over the start frame, then each roll's anchor: frame 4 for steps 9-12, frame 8 for 13-16, ...
    assert [anchor_index(t, view.horizon) for t in (0, 1, 8, 9, 12, 13, 16, 17)] == [0, 0, 0, 4, 4, 8, 8, 12]
    frames = np.zeros((3, 64, 64, 3), np.uint8) + 255
    frames[:, 10:15, 10:15] = (65, 105, 225)
    shown = [view.show(f) for f in frames]
    assert all(s.shape == (64, 64, 3) and s.dtype == np.uint8 for s in shown) and len(view.frames) == 3


def test_a_bare_tokenizer_folder_is_measured_without_a_world_model():
    """A tokenizer folder alone (no world model trained on it yet) is a `tokenizer:` simulator too, rolled as a world
    model of its training horizon would be; it draws exactly what the world model wrapping it draws."""
    from rlvr_sim.resources import asset_path

    folder = asset_path("pusht_visual_mixed") / "tokenizer"
    bare, wrapped = TokenizerView(str(folder)), TokenizerView("pusht_visual_mixed")
    assert bare.horizon == 8 and type(bare.tokenizer) is type(wrapped.tokenizer)
    frames = np.zeros((2, 64, 64, 3), np.uint8) + 255
    frames[:, 20:25, 30:35] = (65, 105, 225)
    frames[1, 20:25, 30:35] = 255
    frames[1, 40:45, 10:15] = (65, 105, 225)
    assert all(np.array_equal(bare.show(f), wrapped.show(f)) for f in frames)
    result = run_episode(EpisodeSpec(f"tokenizer:{folder}", "expert", episode=0, seed=0, horizon=2))
    assert result["steps"] <= 2


def test_a_pose_tokenizer_keeps_the_real_outcome_and_the_episode_replays():
    real = run_episode(EpisodeSpec("real", "expert", episode=0, seed=0, horizon=12))
    spec = EpisodeSpec("tokenizer:pusht_pose_base", "expert", episode=0, seed=0, horizon=12)
    seen = run_episode(spec)
    assert seen == run_episode(spec)
    assert real["success"] and seen["success"]  # the expert reaches the goal in gym-pusht, and it shows
    assert seen["true_success"] is not None  # the physics is gym-pusht's: its true state is judged against too
