"""The deadline browser tests run under (tests/conftest.py): a hung call fails the test instead of the suite."""

import time

import pytest

from tests.conftest import deadline


def test_a_block_past_its_deadline_raises_with_a_message():
    with pytest.raises(TimeoutError, match="ran past 1 s: Chromium stopped answering"):
        with deadline(1, "a hung call"):
            time.sleep(5)


def test_a_block_within_its_deadline_is_untouched_and_the_alarm_is_cleared():
    import signal

    with deadline(5, "a quick call"):
        time.sleep(0.05)
    assert signal.alarm(0) == 0  # nothing left pending
