"""GRPO pieces against hand-computed values: group advantages, clipping, dual clip, k3 KL, SFT masking."""

import math

import pytest
import torch

from rlvr_sim.rl.losses import group_advantages, grpo_token_loss, sft_loss_sum


def test_group_advantages_hand_computed():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.5])
    adv = group_advantages(rewards, 4, eps=0.0)
    std = math.sqrt(1 / 3)  # unbiased std of [1, 0, 0, 1]
    assert torch.allclose(adv[:4], torch.tensor([0.5, -0.5, -0.5, 0.5]) / std)
    assert torch.all(group_advantages(rewards, 4)[4:] == 0)  # identical rewards: no signal
    with pytest.raises(ValueError):
        group_advantages(torch.ones(5), 4)


def test_ratio_one_gives_minus_advantage_token_mean():
    logp = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -0.5, -9.0]], requires_grad=True)
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]], dtype=torch.bool)
    adv = torch.tensor([2.0, -1.0])
    parts = grpo_token_loss(logp, logp.detach(), adv, mask, kl_coef=0.0)
    assert parts.tokens == 5
    assert torch.isclose(parts.loss_sum, torch.tensor(-(2.0 * 3) + 1.0 * 2))
    parts.loss_sum.backward()
    # d loss / d logp = -A on unmasked tokens (ratio 1), 0 on masked ones
    assert torch.allclose(logp.grad, torch.tensor([[-2.0, -2.0, -2.0], [1.0, 1.0, 0.0]]))


def test_clip_and_dual_clip():
    old = torch.zeros(1, 2)
    new = torch.tensor([[math.log(1.5), math.log(0.5)]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    pos = grpo_token_loss(new, old, torch.tensor([1.0]), mask, clip_eps=0.2, kl_coef=0)
    # A>0: min(1.5, 1.2) for the first token, min(0.5, 0.8) -> 0.5 for the second: loss -(1.2 + 0.5)
    assert torch.isclose(pos.loss_sum, torch.tensor(-1.7)) and pos.clipped_tokens == 1
    big = torch.tensor([[math.log(10.0), 0.0]])
    neg = grpo_token_loss(big, old, torch.tensor([-1.0]), mask, clip_eps=0.2, kl_coef=0)
    dual = grpo_token_loss(big, old, torch.tensor([-1.0]), mask, clip_eps=0.2, dual_clip=3.0, kl_coef=0)
    assert torch.isclose(neg.loss_sum, torch.tensor(10.0 + 1.0))
    assert torch.isclose(dual.loss_sum, torch.tensor(3.0 + 1.0))


def test_k3_kl_estimator():
    logp = torch.tensor([[-1.0, -2.0]])
    ref = torch.tensor([[-1.0, -1.5]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    parts = grpo_token_loss(logp, logp, torch.tensor([0.0]), mask, ref_logprobs=ref, kl_coef=1e-3)
    d = 0.5
    expected = math.exp(d) - d - 1
    assert parts.kl_sum == pytest.approx(expected, rel=1e-5)
    assert float(parts.loss_sum) == pytest.approx(1e-3 * expected, rel=1e-4)


def test_sft_loss_ignores_prompt_tokens():
    from rlvr_sim.models.lm import build_model

    torch.manual_seed(0)
    model = build_model("tiny-5m", vocab_size=16, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                        num_attention_heads=2)
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    attn = torch.ones_like(ids)
    answer_only = torch.tensor([[0, 0, 0, 1, 1]])
    loss = sft_loss_sum(model, ids, attn, answer_only)
    logp = torch.log_softmax(model(input_ids=ids).logits[0], -1)
    expected = -(logp[2, 4] + logp[3, 5])
    assert torch.isclose(loss, expected, atol=1e-5)


def test_forced_tokens_outside_the_sampling_range_keep_the_loss_finite():
    """Interleaved action tokens lie outside allowed_token_range; they must not turn the loss into NaN."""
    from rlvr_sim.models.lm import build_model
    from rlvr_sim.rl.losses import completion_logprobs
    from rlvr_sim.rl.sampler import left_pad, sample

    torch.manual_seed(0)
    model = build_model("tiny-5m", vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                        num_attention_heads=2)
    prompts = [[1, 2, 3], [1, 4, 5]]
    out = sample(model, prompts, group_size=2, max_new_tokens=4, forced=[[[30]], [[31]]], interleave_every=2,
                 allowed_token_range=(5, 20), seed=0)
    pid, pmask = left_pad(prompts, 0)
    logp = completion_logprobs(model, pid, pmask, out.tokens, out.attention_mask, 2, allowed_token_range=(5, 20))
    assert torch.isfinite(logp).all()
    assert torch.allclose(logp[out.loss_mask], out.logprobs[out.loss_mask], atol=1e-4)
    parts = grpo_token_loss(logp, out.logprobs, torch.tensor([1.0, -1.0, 0.5, -0.5]), out.loss_mask,
                            ref_logprobs=logp.detach(), kl_coef=1e-3)
    parts.loss_sum.backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
