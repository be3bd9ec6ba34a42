"""Bad settings and missing checkpoints give clear errors (and exit status 2 from the scripts)."""

import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_sim.config import ConfigError, apply_overrides, load_config
from rlvr_sim.models.lm import CheckpointError, load_model
from rlvr_sim.rl.cli import main as train_main

REPO = Path(__file__).resolve().parents[2]


def test_overrides_parse_yaml_values_and_dotted_keys():
    settings = apply_overrides({"model": {"preset": "tiny-5m"}}, ["lr=3e-3", "model.hidden_size=64", "dual_clip=null"])
    assert settings == {"model": {"preset": "tiny-5m", "hidden_size": 64}, "lr": 0.003, "dual_clip": None}


@pytest.mark.parametrize("override, message", [
    ("lr", "not of the form key=value"),
    ("learning_rate=1", "unknown settings"),
    ("steps=0", "steps must be"),
    ("clip_eps=2", "clip_eps"),
    ("batch_size=7 mini_batches=2", "divisible"),
])
def test_bad_overrides(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, override.split())


def test_malformed_and_missing_presets(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps: [1, 2\n")
    with pytest.raises(ConfigError, match="malformed preset"):
        load_config(bad)
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(listed)
    with pytest.raises(ConfigError, match="preset not found"):
        load_config(tmp_path / "nope.yaml")


def test_every_shipped_preset_loads():
    presets = sorted((REPO / "training" / "configs").glob("*.yaml"))
    assert presets
    for preset in presets:
        load_config(preset)


def test_missing_and_corrupt_checkpoints(tmp_path):
    with pytest.raises(CheckpointError, match="not found"):
        load_model(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="not a model directory"):
        load_model(tmp_path / "empty")
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "config.json").write_text('{"model_type": "llama", "vocab_size": 8}')
    (corrupt / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(CheckpointError, match="could not load"):
        load_model(corrupt)


def test_scripts_exit_2_with_message(tmp_path, capsys):
    assert train_main("grpo", ["--task", "addition", "nonsense_key=1"]) == 2
    assert "unknown settings" in capsys.readouterr().err
    assert train_main("sft", ["--task", "addition", f"model.name_or_path={tmp_path}/nothing"]) == 2
    assert "checkpoint not found" in capsys.readouterr().err
    proc = subprocess.run([sys.executable, "training/grpo.py", "--preset", str(tmp_path / "x.yaml")], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "preset not found" in proc.stderr


def test_gpu_settings_default_to_the_cpu_behaviour():
    config = load_config(None)
    assert (config.mixed_precision, config.gradient_checkpointing, config.fsdp) == (None, False, None)
    assert load_config(None, ["mixed_precision=no"]).mixed_precision == "no"  # YAML 1.1 reads `no` as false
    assert load_config(None, ["mixed_precision=bf16", "gradient_checkpointing=true"]).mixed_precision == "bf16"


@pytest.mark.parametrize("override, message", [
    ("mixed_precision=fp8", "mixed_precision must be"),
    ("gradient_checkpointing=2", "gradient_checkpointing must be"),
    ("fsdp=1", "fsdp must be"),
    ("fsdp=true lora.rank=8", "fsdp with lora"),
    ("fsdp=true mixed_precision=fp16", "fsdp needs mixed_precision"),
])
def test_bad_gpu_settings(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, override.split())


def test_shipped_accelerate_configs_name_what_the_trainer_reads():
    import yaml

    folder = REPO / "training" / "configs" / "accelerate"
    fsdp = yaml.safe_load((folder / "fsdp.yaml").read_text())
    assert fsdp["distributed_type"] == "FSDP" and fsdp["fsdp_config"]["fsdp_version"] == 2
    assert fsdp["fsdp_config"]["fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer"
    multi = yaml.safe_load((folder / "multi_gpu.yaml").read_text())
    assert multi["distributed_type"] == "MULTI_GPU" and multi["mixed_precision"] == "bf16"
