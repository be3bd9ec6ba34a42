"""Hypothesis profiles for the parser fuzz tests.

`ci` (the default) is deterministic: 200 examples a test, derandomized (the same examples every run, so
CI cannot flake), no deadline (the CPU is shared with training jobs), no example database written into
the checkout (nor failing-example patches: Hypothesis' storage goes to the temp folder unless
HYPOTHESIS_STORAGE_DIRECTORY says otherwise). `deep` draws fresh random examples, 20x as many; select it with HYPOTHESIS_PROFILE=deep
and replay a run with `--hypothesis-seed N` (see docs/fuzzing.md).
"""

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "rlvr_sim_hypothesis")

settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=4000, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
