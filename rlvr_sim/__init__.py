"""rlvr-sim: trained world models as Gymnasium environments, post-trained with RLVR (RLVR-World)."""

import os

# Nothing here plays sound, but pygame (the PushT renderer, the viewer) opens an audio device on init and,
# on a machine without one, ALSA prints a screen of errors; a user's own SDL_AUDIODRIVER still wins.
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

from rlvr_sim.registration import register_envs  # noqa: E402  (after the audio setting, before any pygame import)

__version__ = "0.1.0"

register_envs()
