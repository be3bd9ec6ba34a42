"""Fixtures and settings shared by the whole suite.

`addition_sft`: a briefly SFT-trained tiny model on the addition task (the rl/ and models/ tests start from it).
`examples_digest`: a task's examples and rewards as a hash, which pins a task's codec across refactors.
Tests marked `browser` run under a deadline (`BROWSER_TEST_DEADLINE_S`, env `RLVR_SIM_BROWSER_TEST_DEADLINE`):
a Chromium that stops answering (seen once under heavy CPU load, renderers spinning) fails that test with a
message instead of hanging the suite (Playwright's page.evaluate and CDP calls have no timeout of their own).

Hypothesis profiles for the property-based tests of the parsers (the `test_fuzz_*.py` files, each beside the
tests of the module it fuzzes; docs/fuzzing.md). `ci` (the default) is deterministic: 200 examples a test,
derandomized (the same examples every run, so CI cannot flake), no deadline (the CPU is shared with training
jobs), no example database written into the checkout (nor failing-example patches: Hypothesis' storage goes to
the temp folder unless HYPOTHESIS_STORAGE_DIRECTORY says otherwise). `deep` draws fresh random examples, 20x as
many; select it with HYPOTHESIS_PROFILE=deep and replay a run with `--hypothesis-seed N`.
"""

import contextlib
import hashlib
import json
import os
import signal
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

from rlvr_sim.config import load_config
from rlvr_sim.rl.trainer import run_training

if os.environ.get("PYTEST_XDIST_WORKER"):  # `-n N` (scripts/test.sh): the cores are shared among the N workers
    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))))

if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "rlvr_sim_hypothesis")

settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=4000, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TINY_MODEL = {"preset": "tiny-5m", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 2, "max_positions": 32}


@pytest.fixture(scope="session")
def addition_sft(tmp_path_factory):
    """20 SFT steps on 1-digit addition: greedy accuracy well under 0.3, a warm start for GRPO."""
    out = tmp_path_factory.mktemp("addition_sft")
    config = load_config(None, [], task="addition", task_args={"digits": 1}, model=TINY_MODEL, steps=20, lr=3e-3,
                         batch_size=32, micro_batch_size=32, eval_examples=100, output_dir=str(out), progress=False)
    summary = run_training("sft", config)
    return out / "final", summary


@pytest.fixture(scope="session")
def examples_digest():
    """(count, hash) of a task split's examples and of the rewards of gold, half and empty completions."""

    def digest_of(task, split):
        examples = task.examples(split)
        digest = hashlib.sha256()
        for e in examples:
            digest.update(json.dumps([e.prompt_ids, e.answer_ids, e.metadata], sort_keys=True).encode())
        completions = ([e.answer_ids for e in examples] + [e.answer_ids[: len(e.answer_ids) // 2] for e in examples]
                       + [[task.eos_token_id] for _ in examples])
        rewards = task.reward([e.prompt_ids for e in examples] * 3, completions, [e.metadata for e in examples] * 3)
        digest.update(json.dumps([round(r, 9) for r in rewards]).encode())
        return len(examples), digest.hexdigest()[:16]

    return digest_of


BROWSER_TEST_DEADLINE_S = int(os.environ.get("RLVR_SIM_BROWSER_TEST_DEADLINE", "600"))


@contextlib.contextmanager
def deadline(seconds: int, what: str):
    """Raise TimeoutError in the main thread when the block runs past `seconds` (SIGALRM; a no-op where
    there is no SIGALRM or off the main thread)."""
    if seconds <= 0 or not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"{what} ran past {seconds} s: Chromium stopped answering (seen under heavy CPU load, "
                           "renderers spinning); rerun on a less loaded machine, or raise RLVR_SIM_BROWSER_TEST_DEADLINE")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def _browser_test_deadline(request):
    if request.node.get_closest_marker("browser") is None:
        yield
        return
    with deadline(BROWSER_TEST_DEADLINE_S, request.node.nodeid):
        yield
