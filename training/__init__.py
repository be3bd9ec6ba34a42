"""training of rlvr-sim (installed as rlvr_sim.training)."""
