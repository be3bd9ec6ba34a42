"""Faults of long jobs: a run killed while writing a checkpoint resumes from the last complete one, and
an output directory that cannot be written fails before any training."""

import shutil

import pytest
import torch
from safetensors.torch import load_file

from rlvr_sim.config import ConfigError, load_config
from rlvr_sim.models.lm import CheckpointError
from rlvr_sim.rl.checkpointing import read_resumable
from rlvr_sim.rl.trainer import Trainer

TINY = {"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 2, "max_positions": 32}


def grpo_config(out, **overrides):
    settings = dict(task="addition", task_args={"digits": 1}, model=TINY, steps=4, save_every=2, lr=1e-3,
                    batch_size=4, micro_batch_size=4, group_size=2, eval_examples=0, output_dir=str(out),
                    progress=False, seed=3)
    return load_config(None, [], **(settings | overrides))


def weights_of(trainer):
    return {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """6 GRPO steps in one go: the reference the resumed run must reproduce."""
    torch.set_num_threads(1)
    trainer = Trainer(grpo_config(tmp_path_factory.mktemp("full"), steps=6), "grpo")
    trainer.run()
    return weights_of(trainer)


def crashed_run(out):
    """4 steps with checkpoints at steps 2 and 4, then the debris of a crash while writing step 6."""
    Trainer(grpo_config(out), "grpo").run()
    checkpoints = out / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["step-000002", "step-000004"]
    partial = checkpoints / "step-000006"  # e.g. copied by hand or written by an older, non-atomic version
    partial.mkdir()
    data = (checkpoints / "step-000004" / "model_state.safetensors").read_bytes()
    (partial / "model_state.safetensors").write_bytes(data[: len(data) // 2])
    (checkpoints / "step-000008.tmp").mkdir()  # an atomic write killed before its rename
    (checkpoints / "step-000008.tmp" / "model_state.safetensors").write_bytes(data)
    return checkpoints


def test_resume_auto_skips_a_partial_newest_checkpoint(tmp_path, uninterrupted):
    checkpoints = crashed_run(tmp_path)
    with pytest.warns(UserWarning, match="step-000006"):
        trainer = Trainer(grpo_config(tmp_path, steps=6, resume="auto"), "grpo")
    assert trainer.step == 4
    assert same(weights_of(trainer), load_file(str(checkpoints / "step-000004" / "model_state.safetensors")))
    trainer.run()
    assert same(weights_of(trainer), uninterrupted)  # as if never interrupted
    # the step-6 checkpoint is rewritten whole, through a temporary directory renamed into place
    assert read_resumable(checkpoints / "step-000006")[1]["step"] == 6
    assert not (checkpoints / "step-000006.tmp").exists()


def test_resume_auto_skips_a_corrupt_trainer_state(tmp_path):
    checkpoints = crashed_run(tmp_path)
    shutil.copy(checkpoints / "step-000004" / "model_state.safetensors", checkpoints / "step-000006")
    (checkpoints / "step-000006" / "trainer_state.pt").write_bytes(b"\x80\x02truncated")
    with pytest.warns(UserWarning, match="corrupt checkpoint"):
        trainer = Trainer(grpo_config(tmp_path, steps=6, resume="auto"), "grpo")
    assert trainer.step == 4


def test_an_explicit_corrupt_checkpoint_is_an_error_and_no_complete_one_starts_fresh(tmp_path):
    checkpoints = crashed_run(tmp_path)
    with pytest.raises(CheckpointError, match="not a resumable checkpoint"):
        Trainer(grpo_config(tmp_path, steps=6, resume=str(checkpoints / "step-000006")), "grpo")
    for name in ("step-000002", "step-000004"):
        (checkpoints / name / "trainer_state.pt").unlink()
    with pytest.warns(UserWarning, match="resume=auto skips"):
        trainer = Trainer(grpo_config(tmp_path, steps=6, resume="auto"), "grpo")
    assert trainer.step == 0


def test_unwritable_output_dir_fails_before_training(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match="output_dir .* is not writable"):
        Trainer(grpo_config(blocker / "run"), "grpo")

    def refuse(*args, **kwargs):  # a read-only mount (chmod does not stop root, who runs CI here)
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr("pathlib.Path.write_text", refuse)
    built = []
    monkeypatch.setattr("rlvr_sim.rl.trainer.build_model", lambda *a, **k: built.append(1))
    with pytest.raises(ConfigError, match="Read-only file system"):
        Trainer(grpo_config(tmp_path / "ro"), "grpo")
    assert not built  # no model was built, no step was taken


def test_full_disk_fails_before_training_with_the_sizes(tmp_path, monkeypatch):
    """A disk without room for one checkpoint is named before the first step, not at the first save."""
    real = shutil.disk_usage

    def nearly_full(path):
        usage = real(path)
        return usage._replace(free=1024)

    monkeypatch.setattr("rlvr_sim.rl.checkpointing.shutil.disk_usage", nearly_full)
    with pytest.raises(ConfigError, match=r"has 0\.0 MiB free; a checkpoint of this model needs about [0-9.]+ MiB"):
        Trainer(grpo_config(tmp_path / "run"), "grpo")
    monkeypatch.setattr("rlvr_sim.rl.checkpointing.shutil.disk_usage", real)
    assert Trainer(grpo_config(tmp_path / "run"), "grpo").step == 0  # with room, the same run starts
