"""gym-pusht as the ground truth shows frames made the way the models' training frames were: its own 96x96
observation resized by the pipeline's `resize_frames`, not gym-pusht's direct (differently drawn) 64x64 picture.
A learned visual tokenizer started on the direct picture misread the agent and left a ghost of it in every later
frame (docs/real2sim.md, "Start frames")."""

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
import gymnasium as gym  # noqa: E402
from rlvr_sim.envs.worlds import DATA_FRAME_SIZE, make_ground_truth  # noqa: E402

from rlvr_sim.data.episodes import resize_frames  # noqa: E402

STATE = np.array([83.0, 153.0, 207.0, 297.0, 0.3])


def _native(state):
    env = gym.make("gym_pusht/PushT-v0", obs_type="pixels")
    frame, _ = env.reset(options={"reset_to_state": state})
    env.close()
    assert frame.shape == (DATA_FRAME_SIZE, DATA_FRAME_SIZE, 3)
    return frame


def test_ground_truth_frames_are_the_data_frames_resized():
    env = make_ground_truth(64, 64)
    frame, info = env.reset(options={"reset_to_state": STATE})
    assert env.observation_space.shape == (64, 64, 3) and env.observation_space.contains(frame)
    np.testing.assert_array_equal(frame, resize_frames(_native(STATE)[None], 64)[0])
    frame, *_, info = env.step(np.array([300.0, 300.0]))
    assert frame.shape == (64, 64, 3) and "block_pose" in info  # the true state stays in info
    env.close()


def test_the_direct_gym_pusht_picture_is_a_different_picture():
    """What the wrapper exists for: at 64x64 gym-pusht draws other pixels than the data's resize (so a test
    comparing the two would catch a revert)."""
    direct = gym.make("gym_pusht/PushT-v0", obs_type="pixels", observation_width=64, observation_height=64)
    frame, _ = direct.reset(options={"reset_to_state": STATE})
    direct.close()
    difference = np.abs(frame.astype(int) - resize_frames(_native(STATE)[None], 64)[0].astype(int)).max(-1)
    assert (difference > 30).sum() > 100


def test_native_size_is_gym_pusht_itself_and_non_square_is_refused():
    env = make_ground_truth(DATA_FRAME_SIZE, DATA_FRAME_SIZE)
    frame, _ = env.reset(options={"reset_to_state": STATE})
    np.testing.assert_array_equal(frame, _native(STATE))
    with pytest.raises(ValueError, match="square"):
        make_ground_truth(64, 48)


def test_real2sim_starts_a_learned_sim_on_that_frame():
    """The one start frame a learned simulator gets from gym-pusht in Real2Sim is the data-made frame."""
    from rlvr_sim.evaluations import real2sim_episodes as episodes

    seen = {}

    class Learned:
        observation_space = gym.spaces.Box(0, 255, (64, 64, 3), np.uint8)

        def reset(self, seed=None, options=None):
            seen["frame"] = options["frame"]
            return options["frame"], {}

    spec = episodes.EpisodeSpec("learned:any", "expert", episode=0)
    episodes._start_frame(Learned(), STATE, spec, world_seed=0)
    np.testing.assert_array_equal(seen["frame"], resize_frames(_native(STATE)[None], 64)[0])
