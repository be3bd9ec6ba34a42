"""ArmReach: a planar two-link arm and a puck in MuJoCo, seen from above (env, collector, MJCF scene)."""
