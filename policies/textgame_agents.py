"""Agents for the text games: random, scripted (each game's expert) and an epsilon mix of the two.

They act on a `TextGame` (the ground-truth engine); in the Gymnasium env use `env.unwrapped.game` or the
`valid_actions` listed in `info`. The data collector explores as `EpsilonTextGameAgent` does, with its
own copy of the rule (`rlvr_sim.envs.textgame.collect.explore_action`): collectors import no policy.
"""

from __future__ import annotations

import random

from rlvr_sim.envs.textgame.engine import TextGame


class RandomTextGameAgent:
    """Uniform over the game's valid actions (look and wait included)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def act(self, game: TextGame) -> str:
        return self.rng.choice(game.all_actions())


class ScriptedTextGameAgent:
    """Follows the game's expert plan; wins every game it is given."""

    def act(self, game: TextGame) -> str:
        return game.expert_action()


class EpsilonTextGameAgent:
    """Scripted with probability 1 - epsilon, random otherwise: mixes expert and exploratory transitions."""

    def __init__(self, epsilon: float, seed: int = 0) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        self.epsilon = epsilon
        self.rng = random.Random(seed)
        self.random_agent = RandomTextGameAgent(seed + 1)
        self.scripted_agent = ScriptedTextGameAgent()

    def act(self, game: TextGame) -> str:
        agent = self.random_agent if self.rng.random() < self.epsilon else self.scripted_agent
        return agent.act(game)
