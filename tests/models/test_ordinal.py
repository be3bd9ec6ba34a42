"""Value-linear input embeddings for ordered token bins (`rlvr_sim.models.ordinal`, `ordinal_embeddings: true`).

Pins: the projection makes each group's rows exactly `a + v * b` (circular: `a + cos v * b + sin v * c`) and leaves
every other row alone; it is idempotent; the parametrisation the trainer uses starts from that projection, trains a
group's coefficients from any one of its bins (every row moves) and leaves the free rows free, and its checkpoint
state is a plain model's; the relational PushT codec declares exactly its bins (not the "unknown" codes); a run
asking for it on a task without ordered bins is refused (the PushT run and its resume: tests/tasks/
test_video_relational.py)."""

import numpy as np
import pytest
import torch

from rlvr_sim.models.ordinal import (
    OrdinalGroup,
    check_groups,
    parametrise_ordinal,
    plain_state_dict,
    project_ordinal,
)
from rlvr_sim.tasks.video import VideoCodec


def _is_linear(rows: torch.Tensor, circular: bool = False) -> bool:
    basis = OrdinalGroup(0, len(rows), circular).basis()
    coef = torch.linalg.lstsq(basis, rows.double()).solution
    return bool(torch.allclose(basis @ coef, rows.double(), atol=1e-5))


def test_projection_makes_groups_value_linear_and_leaves_other_rows():
    torch.manual_seed(0)
    weight = torch.randn(40, 6)
    before = weight.clone()
    groups = [OrdinalGroup(2, 10), OrdinalGroup(20, 12, circular=True)]
    change = project_ordinal(weight, groups)
    assert change > 0.1
    assert _is_linear(weight[2:12]) and _is_linear(weight[20:32], circular=True)
    assert not _is_linear(before[2:12])
    untouched = torch.ones(40, dtype=torch.bool)
    untouched[2:12] = untouched[20:32] = False
    assert torch.equal(weight[untouched], before[untouched])
    assert project_ordinal(weight, groups) < 1e-5  # idempotent


def test_projection_keeps_a_table_that_already_is_linear():
    values = torch.linspace(-1, 1, 9)[:, None]
    weight = torch.cat([torch.zeros(1, 3), 0.5 + values * torch.tensor([[1.0, -2.0, 3.0]])])
    expected = weight.clone()
    assert project_ordinal(weight, [OrdinalGroup(1, 9)]) < 1e-6
    assert torch.allclose(weight, expected, atol=1e-6)


def _tiny_lm(vocab: int = 48):  # noqa: ANN202 - a transformers model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                        num_attention_heads=2, num_key_value_heads=2, bos_token_id=0,
                                        eos_token_id=1, pad_token_id=1, tie_word_embeddings=False))


def test_parametrised_table_starts_at_the_projection_and_trains_a_group_from_one_bin():
    model = _tiny_lm()
    groups = [OrdinalGroup(2, 10), OrdinalGroup(20, 12, circular=True)]
    before = model.get_input_embeddings().weight.detach().clone()
    projected = before.clone()
    project_ordinal(projected, groups)
    parametrise_ordinal(model, groups)
    assert torch.allclose(model.get_input_embeddings().weight, projected, atol=1e-5)
    optimiser = torch.optim.SGD(model.parameters(), 0.5)
    model(torch.tensor([[0, 5, 25]])).logits.square().sum().backward()  # bin 3 of the first group, bin 5 of the angle
    optimiser.step()
    after = model.get_input_embeddings().weight.detach()
    moved = (after - projected).abs().amax(1) > 1e-4
    # every bin of both groups moved with their a, b (, c); under SGD the angle bin opposite the one in the batch
    # (bin 11 of 12, index 31) changes by 1 + cos(pi) = 0 times the gradient
    assert moved[2:12].all() and moved[20:31].all() and not moved[31]
    assert moved[0] and not moved[[1, 12, 19, 40]].any()  # free rows: only the one in the batch
    assert _is_linear(after[2:12]) and _is_linear(after[20:32], circular=True)
    with pytest.raises(ValueError, match="already parametrised"):
        parametrise_ordinal(model, groups)


def test_parametrised_model_saves_as_a_plain_model():
    model = _tiny_lm()
    parametrise_ordinal(model, [OrdinalGroup(2, 10)])
    state = plain_state_dict(model)
    plain = _tiny_lm()
    assert set(state) == set(plain.state_dict())
    plain.load_state_dict(state)
    ids = torch.tensor([[0, 3, 7, 30]])
    assert torch.allclose(plain(ids).logits, model(ids).logits, atol=1e-6)


def test_bad_groups_are_refused_by_name():
    with pytest.raises(ValueError, match="overlap"):
        check_groups([OrdinalGroup(0, 10), OrdinalGroup(5, 10)], 100)
    with pytest.raises(ValueError, match="past the model's 12 embeddings"):
        check_groups([OrdinalGroup(5, 10)], 12)
    with pytest.raises(ValueError, match="at least 3 bins"):
        OrdinalGroup(0, 2)


def test_relational_codec_declares_its_bins_and_not_the_unknown_codes():
    codec = VideoCodec(645, 2, 5, 5, 256, relational=True, action_low=[0.0, 0.0], action_high=[512.0, 512.0])
    groups = codec.ordinal_groups(pose_codes=True)
    check_groups(groups, codec.vocab_size)
    covered = np.zeros(codec.vocab_size, bool)
    for g in groups:
        covered[g.start : g.start + g.size] = True
    assert [g.circular for g in groups].count(True) == 1 and groups[4].circular  # the T's angle
    for lo, hi in codec.slot_ranges()[2:]:  # displacement slots: bins yes, the last ("unknown") no
        assert covered[lo : hi - 1].all() and not covered[hi - 1]
    assert covered[codec.action_tokens([0, 0])].all() and covered[codec.action_tokens([255, 255])].all()
    for k in range(codec.rel_slots):
        lo = codec.rel_offset + k * codec.rel_size
        assert covered[lo : lo + codec.rel_size - 1].all() and not covered[lo + codec.rel_size - 1]
    assert not covered[[codec.pad_id, codec.bos_id]].any()
    assert not covered[[128, 2 * 129 - 1]].any()  # the pose slots' "not visible" codes
    with pytest.raises(ValueError, match="ordinal embeddings need the PushT pose tokenizer"):
        codec.ordinal_groups(pose_codes=False)


def test_ordinal_embeddings_need_a_task_with_ordered_bins(tmp_path):
    from rlvr_sim.config import load_config
    from rlvr_sim.rl.trainer import Trainer

    config = load_config(None, [], task="addition", steps=1, batch_size=2, micro_batch_size=2, eval_examples=0,
                         output_dir=str(tmp_path / "run"), progress=False, ordinal_embeddings=True,
                         model={"preset": "tiny-5m", "hidden_size": 32, "intermediate_size": 64,
                                "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2})
    with pytest.raises(ValueError, match="declares no ordered token bins"):
        Trainer(config, "sft")
