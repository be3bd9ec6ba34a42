"""evaluations of rlvr-sim (installed as rlvr_sim.evaluations)."""
