"""A small text-game engine in the spirit of ByteSized32: objects, containment, actions, time ticks, score.

A game is a set of objects ``{name, uuid, type, properties, contains}`` (``contains`` lists object names)
plus a score record ``{score, gameOver, gameWon}``. One step is "full" as in the ByteSized32
state-prediction data: the action's effect, then the environment tick, then the score update. Every
step is recorded in the ByteSized32 jsonl schema, so the engine is also the data generator.
"""

from __future__ import annotations

import copy
import random
from typing import Any

UNKNOWN_ACTION = "I don't understand that."


class TextGame:
    """Base class of a game: subclasses set the texts and implement setup/valid_actions/act/score/expert.
    A game's rules text (the prompt's rule block) is `rlvr_sim.tasks.textgame.GAME_RULES[game_id]`."""

    game_id = ""
    task_description = ""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.objects: dict[int, dict] = {}
        self.max_uuid = 0
        self.score = 0
        self.game_over = False
        self.game_won = False
        self.num_steps = 0
        self.last_action = ""
        self.observation = ""
        self.setup()
        self.score, self.game_over, self.game_won = self.compute_score()
        self.observation = self.task_description

    # ---------------------------------------------------------------- objects
    def add(self, name: str, obj_type: str, properties: dict[str, Any], container: str | None = None) -> dict:
        """Create an object with the next free uuid (ByteSized32's max_UUID), optionally inside a container."""
        if self.find(name) is not None:
            raise ValueError(f"{self.game_id}: object name {name!r} already exists")
        obj = {"name": name, "uuid": self.max_uuid, "type": obj_type, "properties": dict(properties), "contains": []}
        self.objects[self.max_uuid] = obj
        self.max_uuid += 1
        if container is not None:
            self.get(container)["contains"].append(name)
        return obj

    def remove(self, name: str) -> None:
        """Delete an object and take it out of whatever holds it."""
        obj = self.get(name)
        holder = self.holder(name)
        if holder is not None:
            holder["contains"].remove(name)
        del self.objects[obj["uuid"]]

    def find(self, name: str) -> dict | None:
        return next((obj for obj in self.objects.values() if obj["name"] == name), None)

    def get(self, name: str) -> dict:
        obj = self.find(name)
        if obj is None:
            raise KeyError(f"{self.game_id}: no object named {name!r}")
        return obj

    def props(self, name: str) -> dict[str, Any]:
        return self.get(name)["properties"]

    def holder(self, name: str) -> dict | None:
        """The object whose ``contains`` lists name (None: lying in the room)."""
        return next((obj for obj in self.objects.values() if name in obj["contains"]), None)

    def is_in(self, name: str, container: str) -> bool:
        holder = self.holder(name)
        return holder is not None and holder["name"] == container

    def move(self, name: str, container: str | None) -> None:
        """Move an object into a container (None: into the room)."""
        holder = self.holder(name)
        if holder is not None:
            holder["contains"].remove(name)
        if container is not None:
            self.get(container)["contains"].append(name)

    # ---------------------------------------------------------------- game API
    def setup(self) -> None:
        raise NotImplementedError

    def valid_actions(self) -> list[str]:
        """Every command the game understands in this state (the random agent samples from these)."""
        raise NotImplementedError

    def all_actions(self) -> list[str]:
        """valid_actions plus the commands every game has (look, wait)."""
        return self.valid_actions() + ["look", "wait"]

    def act(self, action: str) -> str:
        """Apply the action's direct effect; return the observation text."""
        raise NotImplementedError

    def tick(self) -> None:
        """Environment-driven change after every action (heating, growth, ...); default none."""

    def compute_score(self) -> tuple[int, bool, bool]:
        """(score, gameOver, gameWon) of the current objects."""
        raise NotImplementedError

    def expert_action(self) -> str:
        """The scripted agent's next action towards winning."""
        raise NotImplementedError

    # ---------------------------------------------------------------- stepping
    def step(self, action: str) -> tuple[dict, dict]:
        """Run one full transition; returns (action_state, tick_state) in the ByteSized32 schema."""
        action = action.strip().lower()
        self.last_action = action
        self.num_steps += 1
        if self.game_over:
            self.observation = "The game is over."
            state = self.snapshot()
            return state, state
        if action in ("look", "look around"):
            self.observation = self.look()
        elif action == "wait":
            self.observation = "Time passes."
        elif action in self.valid_actions():
            self.observation = self.act(action)
        else:
            self.observation = UNKNOWN_ACTION
        action_state = self.snapshot()
        self.tick()
        self.score, self.game_over, self.game_won = self.compute_score()
        return action_state, self.snapshot()

    def look(self) -> str:
        parts = []
        for obj in self.objects.values():
            desc = ", ".join(f"{k}={v}" for k, v in obj["properties"].items())
            inside = f" containing {', '.join(obj['contains'])}" if obj["contains"] else ""
            parts.append(f"a {obj['name']}" + (f" ({desc})" if desc else "") + inside)
        return "You see: " + "; ".join(parts) + "."

    def inventory(self) -> str:
        agent = self.find("agent")
        if agent is None or not agent["contains"]:
            return "Your inventory is empty."
        return "You carry: " + ", ".join(agent["contains"]) + "."

    def snapshot(self) -> dict:
        """The state in ByteSized32's schema (observation, look, inventory, taskDesc, lastAction, objects, max_UUID)."""
        return {
            "observation": self.observation,
            "look": self.look(),
            "inventory": self.inventory(),
            "taskDesc": self.task_description,
            "lastAction": self.last_action,
            "objects": copy.deepcopy(list(self.objects.values())),
            "max_UUID": self.max_uuid,
        }

    def score_state(self) -> dict:
        return {"score": self.score, "gameOver": self.game_over, "gameWon": self.game_won}
