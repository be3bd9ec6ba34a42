"""rlvr-sim: trained world models as Gymnasium environments, post-trained with RLVR (RLVR-World)."""

from rlvr_sim.registration import register_envs

__version__ = "0.1.0"

register_envs()
