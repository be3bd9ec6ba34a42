"""envs of rlvr-sim (installed as rlvr_sim.envs)."""
