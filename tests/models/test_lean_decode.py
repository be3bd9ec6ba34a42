"""The lean decode-step forward (rlvr_sim.models.lean_decode) against transformers' own Llama forward:
the same logits, the same sampled tokens, the fallbacks where it would not reproduce them, and fused
weights that follow training."""

import pytest
import torch

from rlvr_sim.models.lean_decode import LeanDecoder
from rlvr_sim.models.lm import build_model
from rlvr_sim.rl.sampler import DecodeSession, sample

SMALL = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4)
CONFIGS = {
    "mha": {},
    "gqa": {"num_key_value_heads": 2},
    "mqa_biases": {"num_key_value_heads": 1, "attention_bias": True, "mlp_bias": True},
    "tied": {"tie_word_embeddings": True},
}


def model_of(name: str, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = build_model("tiny-5m", vocab_size=50, max_positions=128, **SMALL, **CONFIGS[name]).eval()
    with torch.no_grad():  # non-trivial norms and biases, so a wrong term cannot hide behind ones and zeros
        for name_, p in model.named_parameters():
            if "norm" in name_ or name_.endswith("bias"):
                p.add_(0.3 * torch.randn_like(p))
    return model


def two_sessions(model, prompts, group_size=1):
    """The same prompts in a lean session and in one forced onto the transformers forward."""
    lean = DecodeSession(model, prompts, seeds=list(range(len(prompts))), group_size=group_size)
    plain = DecodeSession(model, prompts, seeds=list(range(len(prompts))), group_size=group_size)
    plain._lean = None
    assert lean._lean is not None
    return lean, plain


@pytest.mark.parametrize("name", list(CONFIGS))
def test_lean_decode_steps_give_the_transformers_logits(name):
    model = model_of(name)
    prompts = [[1, 2, 3, 4, 5, 6], [7, 8, 9], [10, 11, 12, 13]]  # unequal: left padding, 4-D masks
    lean, plain = two_sessions(model, prompts, group_size=2)
    gen = torch.Generator().manual_seed(0)
    for width in (1, 1, 3, 1, 2, 1):  # single tokens and forced chunks (causal among the new tokens)
        ids = torch.randint(1, 50, (lean.rows, width), generator=gen)
        lean.feed(ids)
        plain.feed(ids)
        assert torch.allclose(lean.logits, plain.logits, atol=1e-5, rtol=1e-5), name
    keep = torch.tensor([0, 2, 3, 5])  # dropped rows: the compacted cache is read the same way
    for session in (lean, plain):
        session.keep_rows(keep)
        session.feed(torch.full((4, 1), 7))
    assert torch.allclose(lean.logits, plain.logits, atol=1e-5, rtol=1e-5)


def test_sampled_tokens_are_the_same_with_and_without_it(monkeypatch):
    model = model_of("gqa")
    prompts = [[1, 2, 3, 4, 5], [6, 7, 8], [9] * 9]
    settings = [dict(group_size=3, max_new_tokens=20, temperature=1.0, stop_token_ids=(10, 11, 12), seed=3),
                dict(group_size=2, max_new_tokens=12, temperature=1.0, seed=4, interleave_every=4,
                     forced=[[[20, 21], [22, 23]], [[23, 1], [24, 25]], [[27, 3], [28, 4]]]),
                dict(max_new_tokens=12, temperature=0.0)]
    for kwargs in settings:
        monkeypatch.setenv("RLVR_SIM_LEAN_DECODE", "1")
        lean = sample(model, prompts, **kwargs)
        monkeypatch.setenv("RLVR_SIM_LEAN_DECODE", "0")
        plain = sample(model, prompts, **kwargs)
        assert torch.equal(lean.tokens, plain.tokens) and torch.equal(lean.lengths, plain.lengths)
        assert float((lean.logprobs - plain.logprobs).abs().max()) < 1e-5


def test_falls_back_where_it_would_not_reproduce_the_model(monkeypatch):
    assert LeanDecoder.for_model(model_of("mha")) is not None
    torch.manual_seed(0)
    eager = build_model("tiny-5m", vocab_size=50, attn_implementation="eager", **SMALL)
    scaled = build_model("tiny-5m", vocab_size=50, **SMALL,
                         rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0})
    gelu = build_model("tiny-5m", vocab_size=50, hidden_act="gelu", **SMALL)
    for model in (eager, scaled, gelu):
        assert LeanDecoder.for_model(model.eval()) is None
    peft = pytest.importorskip("peft")
    wrapped = peft.get_peft_model(model_of("mha"), peft.LoraConfig(r=2, target_modules=["q_proj"]))
    assert LeanDecoder.for_model(wrapped) is None
    monkeypatch.setenv("RLVR_SIM_LEAN_DECODE", "0")
    assert LeanDecoder.for_model(model_of("mha")) is None


def test_fused_weights_follow_an_optimizer_step():
    """The q|k|v and gate|up concatenations are cached per model: an in-place update must rebuild them."""
    model = model_of("gqa")
    prompts = [[1, 2, 3], [4, 5, 6]]
    before = sample(model, prompts, max_new_tokens=6, temperature=0.0)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    logits = model(input_ids=torch.tensor(prompts)).logits
    logits.logsumexp(-1).sum().backward()
    optimizer.step()
    model.eval()
    lean, plain = two_sessions(model, prompts)
    ids = before.tokens[:, :1]
    lean.feed(ids)
    plain.feed(ids)
    assert torch.allclose(lean.logits, plain.logits, atol=1e-5, rtol=1e-5)


def test_rotary_tables_and_norm_are_transformers_own():
    from rlvr_sim.models import lean_decode

    model = model_of("gqa")
    rotary = model.model.rotary_emb
    lean_decode._ROPE.pop(rotary, None)
    x = torch.zeros(1, 1, 16)
    for positions in (torch.tensor([[0, 5, 255]]), torch.tensor([[256, 300, 1023]])):  # the second grows the table
        cos, signed_sin = lean_decode._rope_tables(rotary, int(positions.max()) + 1, torch.float32)
        want_cos, want_sin = rotary(x, positions)
        assert torch.equal(cos[positions], want_cos)
        half = want_sin.shape[-1] // 2  # signed: rotating by half the head and multiplying gives rotate_half(.)*sin
        assert torch.equal(signed_sin[positions], torch.cat((-want_sin[..., :half], want_sin[..., half:]), -1))
    assert lean_decode._ROPE[rotary][1].shape[0] >= 1024
    norm = model.model.layers[0].input_layernorm
    hidden = torch.randn(3, 2, 64)
    assert torch.equal(lean_decode._rms_norm(hidden, norm.weight, norm.variance_epsilon), norm(hidden))
    with torch.no_grad():  # bf16 takes the spelled-out path, as transformers computes it
        half_norm = type(norm)(64, eps=norm.variance_epsilon).to(torch.bfloat16)
        half_norm.weight.copy_(norm.weight)
        assert torch.equal(lean_decode._rms_norm(hidden.bfloat16(), half_norm.weight, norm.variance_epsilon),
                           half_norm(hidden.bfloat16()))
