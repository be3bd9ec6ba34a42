"""Text games: a ByteSized32-style engine with ground-truth games, their Gymnasium env, the data
collector and the learned-simulator env RLVRWorld-TextGame-v0."""
