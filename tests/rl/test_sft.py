"""SFT keeps forced tokens (e.g. the true actions between video frames) out of the loss unless asked."""

import pytest

from rlvr_sim.config import ConfigError, load_config
from rlvr_sim.rl.sft import answer_loss_mask
from rlvr_sim.tasks.base import Example


def test_forced_chunks_are_masked_between_generated_tokens():
    example = Example([1], [10, 11, 20, 21, 12, 13, 22, 23, 14, 15], [[20, 21], [22, 23]])
    assert answer_loss_mask(example, 2).tolist() == [1, 1, 0, 0, 1, 1, 0, 0, 1, 1]
    assert answer_loss_mask(example, None).tolist() == [1] * 10  # learn_forced: everything is a target
    assert answer_loss_mask(Example([1], [5, 6, 7]), 2).tolist() == [1, 1, 1]  # no forced chunks


def test_learn_forced_is_a_validated_setting():
    assert load_config(None).learn_forced is False
    assert load_config(None, ["learn_forced=true"]).learn_forced is True
    with pytest.raises(ConfigError, match="learn_forced"):
        load_config(None, ["learn_forced=3"])
