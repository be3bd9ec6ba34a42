"""`rlvr_sim.resources.resolve_checkpoint`, the one checkpoint resolver every loader uses."""

import pytest

from rlvr_sim.resources import asset_path, resolve_checkpoint


def test_a_path_wins_then_an_embedded_name_then_the_default(tmp_path):
    run = tmp_path / "final"
    run.mkdir()
    assert resolve_checkpoint(run, "pusht_bc") == run
    assert resolve_checkpoint("pusht_bc", "no-such-default") == asset_path("pusht_bc")
    assert resolve_checkpoint(None, "pusht_bc") == asset_path("pusht_bc")


def test_a_directory_without_the_required_file_is_not_a_checkpoint(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="BC checkpoint .*empty"):
        resolve_checkpoint(tmp_path / "empty", "pusht_bc", required_file="model.safetensors", what="BC checkpoint")
    (tmp_path / "empty" / "model.safetensors").write_bytes(b"")
    assert resolve_checkpoint(tmp_path / "empty", "pusht_bc", required_file="model.safetensors") == tmp_path / "empty"


def test_the_bc_policy_loads_through_it():
    from rlvr_sim.policies.pusht_bc import BCPolicy

    assert BCPolicy.load().net.width > 0
    with pytest.raises(FileNotFoundError, match="BC checkpoint 'no-such-checkpoint' not found"):
        BCPolicy.load("no-such-checkpoint")
