"""Fuzz the preset/override parser: presets are files users edit, overrides come from the command line.

`load_config` returns a validated `RunConfig` or raises `ConfigError` with the reason (never a bare
TypeError/ZeroDivisionError from validation, nor a ValueError from YAML's date resolver).
"""

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from rlvr_sim.config import ConfigError, RunConfig, apply_overrides, load_config

KEYS = ["steps", "lr", "batch_size", "micro_batch_size", "group_size", "mini_batches", "clip_eps", "dual_clip",
        "kl_coef", "schedule", "model", "model.preset", "model.name_or_path", "task_args", "task_args.digits",
        "lora", "lora.rank", "adam_betas", "seed", "output_dir", "unknown_key", "task", "temperature"]
values = st.sampled_from(["0", "1", "-3", "3e-3", "1e400", "nan", "null", "true", "cosine", "[0.9, 0.99]", "[1]",
                          "{a: 1}", "2024-13-45", "2024-01-01", "'quoted", "{", "!!python/object:os.system x", ""]) \
    | st.text(max_size=12)
overrides = st.builds(lambda key, value: f"{key}={value}", st.sampled_from(KEYS) | st.text(max_size=6), values) \
    | st.text(max_size=15)


@given(st.lists(overrides, max_size=4))
@example(["mini_batches=0"])  # found: ZeroDivisionError in validation
@example(["clip_eps=abc"])  # found: TypeError comparing text with numbers
@example(["adam_betas=3"])  # found: TypeError from tuple(3)
@example(["lr=2024-13-45"])  # found: ValueError from YAML's date resolver
def test_overrides_give_a_config_or_a_config_error(items: list[str]) -> None:
    try:
        config = load_config(None, items)
    except ConfigError:
        return
    assert isinstance(config, RunConfig) and config.steps >= 1 and config.batch_size % config.mini_batches == 0


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_config") / "preset.yaml"


yaml_scalars = st.none() | st.booleans() | st.integers(-3, 100) | st.floats(allow_nan=True) | st.text(max_size=6)
settings_maps = st.dictionaries(st.sampled_from([k for k in KEYS if "." not in k]) | st.integers(0, 3) | st.text(max_size=4),
                                yaml_scalars | st.lists(yaml_scalars, max_size=2)
                                | st.dictionaries(st.text(max_size=4), yaml_scalars, max_size=2), max_size=5)


@given(st.builds(yaml.safe_dump, settings_maps) | st.builds(yaml.safe_dump, yaml_scalars) | st.text(max_size=40)
       | st.binary(max_size=30), st.lists(overrides, max_size=2))
@example({1: 2, "steps": 3}, [])  # found: TypeError sorting unknown int and str keys
def test_presets_give_a_config_or_a_config_error(preset, content: object, items: list[str]) -> None:
    if isinstance(content, dict):
        content = yaml.safe_dump(content)
    preset.write_bytes(content if isinstance(content, bytes) else content.encode())
    try:
        config = load_config(preset, items)
    except ConfigError:
        return
    assert isinstance(config, RunConfig)


@given(st.dictionaries(st.sampled_from(["a", "b"]), yaml_scalars | st.dictionaries(st.sampled_from(["c"]), yaml_scalars)),
       st.lists(st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["a", "a.c", "b.c.d", "a..c", ".a"]), values), max_size=3))
def test_dotted_overrides_reach_into_mappings_or_refuse(settings: dict, items: list[str]) -> None:
    try:
        result = apply_overrides(settings, items)
    except ConfigError:
        return
    assert isinstance(result, dict)
