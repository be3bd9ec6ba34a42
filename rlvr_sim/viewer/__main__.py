"""`python -m rlvr_sim.viewer`: the same as `rlvr-sim view`."""

from rlvr_sim.viewer import main

raise SystemExit(main())
