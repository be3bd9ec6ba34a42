"""Fixtures shared by the env tests."""

import pytest


@pytest.fixture
def recorded_completions(monkeypatch):
    """Every completion the shared sampler returns, as token ids (to compare paths token by token)."""
    import rlvr_sim.rl.sampler as sampler

    calls, real_sample = [], sampler.sample

    def recording_sample(*args, **kwargs):
        out = real_sample(*args, **kwargs)
        calls.append(out.completions())
        return out

    monkeypatch.setattr(sampler, "sample", recording_sample)
    return calls
