"""policies of rlvr-sim (installed as rlvr_sim.policies)."""
