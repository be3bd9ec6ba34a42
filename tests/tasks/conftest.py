"""Fixtures shared by the video tests."""

import pytest


@pytest.fixture(scope="session")
def pose_setup(tmp_path_factory):
    """Real gym-pusht episodes (the object reward reads poses with the pixel judge) and the pose tokenizer."""
    pytest.importorskip("gym_pusht")
    from rlvr_sim.envs.video.collect import collect

    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    root = tmp_path_factory.mktemp("pose_task")
    collect(root / "data", episodes=4, seed=0, max_steps=40, mix="expert:1,random:1")
    PoseTokenizer().save(root / "tok")
    return dict(data_dir=str(root / "data"), tokenizer_dir=str(root / "tok"), horizon=4, test_fraction=0.25,
                train_stride=2, test_stride=2, lpips="st-lpips")
