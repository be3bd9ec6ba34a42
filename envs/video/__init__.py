"""Video world-model environments: the gym-pusht data collector and `RLVRWorld-Video-v0`."""
