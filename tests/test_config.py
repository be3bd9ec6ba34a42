"""Bad settings and missing checkpoints give clear errors (and exit status 2 from the scripts)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rlvr_sim.config import ConfigError, apply_overrides, load_config
from rlvr_sim.models.lm import CheckpointError, load_model
from rlvr_sim.rl.cli import REMOVED_PRESETS
from rlvr_sim.rl.cli import main as train_main

REPO = Path(__file__).resolve().parents[1]


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


def runs_paths(value) -> list[str]:
    """Every `runs/...` string in a preset value (nested mappings and lists included)."""
    if isinstance(value, dict):
        return [p for v in value.values() for p in runs_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in runs_paths(v)]
    return [value] if isinstance(value, str) and value.startswith("runs/") else []


def test_every_runs_folder_a_preset_reads_is_written_by_a_shipped_preset():
    """A fresh clone has no runs/: a preset may start from a run only if another shipped preset writes it
    (its error then names that preset, `rlvr_sim.models.lm.missing_checkpoint_hint`)."""
    presets = {p.name: yaml.safe_load(p.read_text()) for p in sorted((REPO / "training" / "configs").glob("*.yaml"))}
    written = {settings["output_dir"] for settings in presets.values() if "output_dir" in settings}
    unwritten = {(name, path) for name, settings in presets.items()
                 for path in runs_paths({k: v for k, v in settings.items() if k != "output_dir"})
                 if not any(path == out or path.startswith(out + "/") for out in written)}
    assert unwritten == set()


def test_a_removed_preset_names_its_replacement(capsys):
    for name, replacement in REMOVED_PRESETS.items():
        assert not (REPO / "training" / "configs" / name).exists()
        assert (REPO / "training" / "configs" / replacement).is_file()
        assert train_main("sft", ["--preset", f"training/configs/{name}"]) == 2
        assert f"use training/configs/{replacement}" in capsys.readouterr().err


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
