"""First steps print no sound-library noise: `check_env` on the video env (whose render check opens a pygame
"human" window, and pygame an audio device) prints no ALSA errors, because `import rlvr_sim` selects SDL's dummy
audio driver unless the user chose one. On a machine with a sound card ALSA stays quiet either way."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

CHECK = """
import gymnasium as gym
from gymnasium.utils.env_checker import check_env
import rlvr_sim
import os
assert os.environ["SDL_AUDIODRIVER"] == "dummy"
check_env(gym.make("RLVRWorld-Video-v0", render_mode="rgb_array").unwrapped)
"""


@pytest.mark.skipif(importlib.util.find_spec("gym_pusht") is None, reason="the [video] extra is not installed")
def test_check_env_on_the_video_env_prints_no_alsa_errors(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SDL_AUDIODRIVER"}
    proc = subprocess.run([sys.executable, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**env, "SDL_VIDEODRIVER": "dummy", "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ALSA" not in proc.stderr, proc.stderr[-3000:]
