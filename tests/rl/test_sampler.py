"""The sampler: greedy equals `generate`, seeded sampling replays, log-probs match a full forward,
interleaved (forced) tokens land where asked and stay out of the loss mask."""

import pytest
import torch

from rlvr_sim.models.lm import build_model
from rlvr_sim.rl.sampler import prompt_seeds, sample


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return build_model("tiny-5m", vocab_size=32, hidden_size=64, intermediate_size=128,
                       num_hidden_layers=2, num_attention_heads=2, max_positions=128).eval()


PROMPTS = [[1, 5, 6, 7], [1, 8, 9], [1, 10, 11, 12, 13]]


def full_logprobs(model, prompt, tokens):
    ids = torch.tensor([prompt + tokens])
    logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
    return torch.tensor([logp[len(prompt) - 1 + j, t] for j, t in enumerate(tokens)])


def test_greedy_matches_generate(model):
    out = sample(model, PROMPTS, max_new_tokens=6, temperature=0)
    for i, p in enumerate(PROMPTS):
        ref = model.generate(torch.tensor([p]), max_new_tokens=6, do_sample=False, pad_token_id=0, eos_token_id=None)
        assert out.tokens[i].tolist() == ref[0, len(p):].tolist()


def test_same_seed_same_samples_and_batch_independence(model):
    a = sample(model, PROMPTS, group_size=4, max_new_tokens=8, seed=3)
    b = sample(model, PROMPTS, group_size=4, max_new_tokens=8, seed=3)
    c = sample(model, PROMPTS, group_size=4, max_new_tokens=8, seed=4)
    assert torch.equal(a.tokens, b.tokens) and not torch.equal(a.tokens, c.tokens)
    # a prompt's samples do not depend on the other prompts in the batch (multi-process equivalence)
    alone = sample(model, PROMPTS[1:2], group_size=4, max_new_tokens=8, seeds=prompt_seeds(3, 3)[1:2])
    assert torch.equal(alone.tokens, a.tokens[4:8])


def test_logprobs_match_full_forward(model):
    out = sample(model, PROMPTS, group_size=2, max_new_tokens=7, seed=1, temperature=1.0)
    with torch.no_grad():
        for row, comp in enumerate(out.completions()):
            ref = full_logprobs(model, PROMPTS[row // 2], comp)
            assert torch.allclose(out.logprobs[row, : len(comp)], ref, atol=1e-4)


def test_stop_tokens_pad_and_mask(model):
    out = sample(model, PROMPTS, group_size=8, max_new_tokens=12, seed=0, stop_token_ids=[3, 4], pad_token_id=0)
    stopped = 0
    for row, comp in enumerate(out.completions()):
        n = len(comp)
        assert out.loss_mask[row, :n].all() and not out.loss_mask[row, n:].any()
        assert (out.tokens[row, n:] == 0).all()
        assert all(t not in (3, 4) for t in comp[:-1])
        stopped += comp[-1] in (3, 4)
    assert stopped > 0


def test_top_k_one_is_greedy_and_allowed_range(model):
    greedy = sample(model, PROMPTS, max_new_tokens=5, temperature=0)
    top1 = sample(model, PROMPTS, max_new_tokens=5, temperature=1.0, top_k=1, seed=9)
    nucleus = sample(model, PROMPTS, max_new_tokens=5, temperature=1.0, top_p=1e-6, seed=9)
    assert torch.equal(greedy.tokens, top1.tokens) and torch.equal(greedy.tokens, nucleus.tokens)
    ranged = sample(model, PROMPTS, group_size=4, max_new_tokens=10, allowed_token_range=(20, 25), seed=2)
    assert ((ranged.tokens >= 20) & (ranged.tokens < 25)).all()


def test_interleaving_appends_forced_chunks(model):
    forced = [[[30, 31], [29, 28]] for _ in PROMPTS]
    out = sample(model, PROMPTS, group_size=2, max_new_tokens=6, seed=5, forced=forced, interleave_every=2,
                 allowed_token_range=(5, 20))
    # layout: g g F F g g F F g g
    assert out.tokens.shape[1] == 10
    assert (out.tokens[:, 2:4] == torch.tensor([30, 31])).all() and (out.tokens[:, 6:8] == torch.tensor([29, 28])).all()
    expected_mask = torch.tensor([1, 1, 0, 0, 1, 1, 0, 0, 1, 1], dtype=torch.bool)
    assert (out.loss_mask == expected_mask).all()
    with torch.no_grad():
        for row, comp in enumerate(out.completions()):
            ref = full_logprobs(model, PROMPTS[row // 2], comp)
            # the cached continuation after forced tokens gives the same distribution as a full forward
            lo, hi = 5, 20
            ids = torch.tensor([PROMPTS[row // 2] + comp])
            logits = model(input_ids=ids).logits[0].float()
            restricted = torch.full_like(logits, float("-inf"))
            restricted[:, lo:hi] = logits[:, lo:hi]
            logp = torch.log_softmax(restricted, -1)
            start = len(PROMPTS[row // 2]) - 1
            for j in (0, 1, 4, 5, 8, 9):
                assert abs(out.logprobs[row, j] - logp[start + j, comp[j]]) < 1e-4
            assert ref.shape[0] == 10


def test_bad_arguments_are_named(model):
    with pytest.raises(ValueError, match="at least one token"):
        sample(model, [[]])
    with pytest.raises(ValueError, match="interleave_every"):
        sample(model, PROMPTS, forced=[[[1]]] * 3)
    with pytest.raises(ValueError, match="allowed_token_range"):
        sample(model, PROMPTS, allowed_token_range=(10, 99))


def test_in_place_cache_matches_concatenation_and_grows(model, monkeypatch):
    """The pre-allocated cache (written in place, grown by doubling) samples exactly what the concatenating
    cache samples: same tokens, same log-probs, with padding, groups, forced chunks and stop tokens."""
    from rlvr_sim.rl import sampler

    kwargs = dict(group_size=3, max_new_tokens=9, seed=7, forced=[[[30, 31], [29]] for _ in PROMPTS],
                  interleave_every=3, stop_token_ids=[4])
    fast = sample(model, PROMPTS, **kwargs)
    monkeypatch.setattr(sampler, "in_place_cache", lambda *a, **k: False)
    slow = sample(model, PROMPTS, **kwargs)
    assert torch.equal(fast.tokens, slow.tokens) and torch.equal(fast.loss_mask, slow.loss_mask)
    assert torch.allclose(fast.logprobs, slow.logprobs, atol=1e-5)
    monkeypatch.undo()

    # a session fed far past its reserve grows and keeps giving the logits of a full forward
    session = sampler.DecodeSession(model, PROMPTS, seeds=[1, 2, 3], group_size=2, reserve_tokens=1)
    assert session.in_place
    fed = [[] for _ in range(session.rows)]
    for _ in range(12):
        token, _ = session.draw(1.0)
        session.feed(token[:, None])
        for row, t in enumerate(token.tolist()):
            fed[row].append(t)
    assert session.cache.layers[0].capacity >= max(map(len, PROMPTS)) + 12
    with torch.no_grad():
        for row in range(session.rows):
            ids = torch.tensor([PROMPTS[row // 2] + fed[row]])
            ref = model(input_ids=ids).logits[0, -1].float()
            assert torch.allclose(session.logits[row], ref, atol=1e-4)


def test_dropping_finished_rows_changes_nothing(model):
    """Rows that stopped leave the batch; every sample, log-prob and mask stays what it was."""
    kwargs = dict(group_size=6, max_new_tokens=14, seed=11, stop_token_ids=[3, 4, 5, 6, 7, 8])
    dropped = sample(model, PROMPTS, drop_finished=True, **kwargs)
    kept = sample(model, PROMPTS, drop_finished=False, **kwargs)
    assert torch.equal(dropped.tokens, kept.tokens) and torch.equal(dropped.lengths, kept.lengths)
    assert torch.allclose(dropped.logprobs, kept.logprobs, atol=1e-5)
    assert (dropped.lengths < dropped.tokens.shape[1]).any()  # some rows did stop early
    for row, comp in enumerate(dropped.completions()):
        with torch.no_grad():
            ref = full_logprobs(model, PROMPTS[row // 6], comp)
        assert torch.allclose(dropped.logprobs[row, : len(comp)], ref, atol=1e-4)


def test_env_style_session_matches_sample(model):
    """Driving a DecodeSession step by step with given generators (as the learned-simulator envs do)
    draws exactly what `sample` draws from the same seeds."""
    from rlvr_sim.rl.sampler import DecodeSession

    seeds = [5, 6, 7]
    out = sample(model, PROMPTS, max_new_tokens=8, seeds=seeds, forced=[[[30], [31], [29]]] * 3,
                 interleave_every=2, stop_token_ids=())
    generators = [torch.Generator().manual_seed(s) for s in seeds]
    session = DecodeSession(model, PROMPTS, generators=generators, reserve_tokens=2)
    drawn = []
    for step in range(8):
        token, _ = session.draw(1.0)
        drawn.append(token)
        if step < 7:
            session.feed(token[:, None])
            if (step + 1) % 2 == 0 and (step + 1) // 2 <= 3:
                session.feed(torch.tensor([[(30, 31, 29)[(step + 1) // 2 - 1]]] * 3))
    generated = out.tokens[out.loss_mask].view(3, 8)
    assert torch.equal(torch.stack(drawn, 1), generated)


def test_unpadded_batch_runs_without_a_mask_and_stays_exact(model):
    """Equal-length prompts hold no padding, so decoding passes no attention mask (transformers derives the
    causal one from the cache); multi-token forced chunks must still see exactly a full forward's logits."""
    prompts = [[1, 5, 6, 7], [1, 8, 9, 10]]
    out = sample(model, prompts, group_size=2, max_new_tokens=6, seed=4, forced=[[[30, 31], [29, 28]]] * 2,
                 interleave_every=2)
    assert out.tokens.shape[1] == 10
    with torch.no_grad():
        for row, comp in enumerate(out.completions()):
            ref = full_logprobs(model, prompts[row // 2], comp)
            for j in (0, 1, 4, 5, 8, 9):
                assert abs(out.logprobs[row, j] - ref[j]) < 1e-4
