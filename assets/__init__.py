"""assets of rlvr-sim (installed as rlvr_sim.assets)."""
