"""Nine small games in the spirit of the ByteSized32 suite (heating, circuits, growth, cooking, mixing,
measuring, cleaning, freezing, refrigerating). States are kept to a handful of objects with short
properties so that a prompt fits ~512 tokens of a small BPE vocabulary. Initial values are drawn from the
game's seeded generator so that every game produces many distinct states.
"""

from __future__ import annotations

from rlvr_sim.envs.textgame.engine import TextGame


class BoilWater(TextGame):
    game_id = "boil-water"
    task_description = "Boil the water in the pot."

    def setup(self) -> None:
        self.add("stove", "Stove", {"on": False})
        self.add("pot", "Pot", {})
        self.add("water", "Water", {"temperature": self.rng.choice([10, 15, 20, 25, 30, 35, 40])}, "pot")

    def valid_actions(self) -> list[str]:
        return ["turn on stove", "turn off stove", "put pot on stove", "take pot"]

    def act(self, action: str) -> str:
        stove = self.props("stove")
        if action in ("turn on stove", "turn off stove"):
            want = action == "turn on stove"
            if stove["on"] == want:
                return f"The stove is already {'on' if want else 'off'}."
            stove["on"] = want
            return f"You turn {'on' if want else 'off'} the stove."
        if action == "put pot on stove":
            if self.is_in("pot", "stove"):
                return "The pot is already on the stove."
            self.move("pot", "stove")
            return "You put the pot on the stove."
        if not self.is_in("pot", "stove"):
            return "The pot is not on the stove."
        self.move("pot", None)
        return "You take the pot off the stove."

    def tick(self) -> None:
        water = self.find("water")
        if water is None or not (self.props("stove")["on"] and self.is_in("pot", "stove")):
            return
        water["properties"]["temperature"] = min(100, water["properties"]["temperature"] + 20)
        if water["properties"]["temperature"] >= 100:
            self.remove("water")
            self.add("steam", "Steam", {"temperature": 100}, "pot")

    def compute_score(self) -> tuple[int, bool, bool]:
        steam = self.find("steam") is not None
        score = int(self.is_in("pot", "stove")) + int(self.props("stove")["on"]) + 2 * steam
        return score, steam, steam

    def expert_action(self) -> str:
        if not self.is_in("pot", "stove"):
            return "put pot on stove"
        return "turn on stove" if not self.props("stove")["on"] else "wait"


class LitLightbulb(TextGame):
    game_id = "lit-lightbulb"
    task_description = "Make the light bulb shine."

    def setup(self) -> None:
        self.add("battery", "Battery", {})
        self.add("wire", "Wire", {"battery": self.rng.random() < 0.3, "bulb": False})
        self.add("switch", "Switch", {"on": self.rng.random() < 0.3})
        self.add("bulb", "LightBulb", {"on": False})

    def valid_actions(self) -> list[str]:
        return [
            "connect wire to battery", "disconnect wire from battery", "connect wire to bulb",
            "disconnect wire from bulb", "turn on switch", "turn off switch",
        ]

    def act(self, action: str) -> str:
        if "switch" in action:
            want = action == "turn on switch"
            if self.props("switch")["on"] == want:
                return "Nothing happens."
            self.props("switch")["on"] = want
            return f"You turn {'on' if want else 'off'} the switch."
        end = "battery" if action.endswith("battery") else "bulb"
        want = action.startswith("connect")
        if self.props("wire")[end] == want:
            return "Nothing happens."
        self.props("wire")[end] = want
        return f"You {'connect' if want else 'disconnect'} the wire {'to' if want else 'from'} the {end}."

    def tick(self) -> None:
        wire = self.props("wire")
        self.props("bulb")["on"] = wire["battery"] and wire["bulb"] and self.props("switch")["on"]

    def compute_score(self) -> tuple[int, bool, bool]:
        wire = self.props("wire")
        lit = self.props("bulb")["on"]
        return int(wire["battery"]) + int(wire["bulb"]) + int(self.props("switch")["on"]) + 2 * lit, lit, lit

    def expert_action(self) -> str:
        wire = self.props("wire")
        if not wire["battery"]:
            return "connect wire to battery"
        if not wire["bulb"]:
            return "connect wire to bulb"
        return "turn on switch" if not self.props("switch")["on"] else "wait"


class GrowPlant(TextGame):
    game_id = "grow-plant"
    task_description = "Grow the seed into a flower."

    def setup(self) -> None:
        self.add("pot", "Pot", {})
        self.add("seed", "Seed", {"water": self.rng.choice([0, 0, 1, 2]), "growth": self.rng.choice([0, 0, 1])}, "pot")

    def valid_actions(self) -> list[str]:
        return ["water seed"] if self.find("seed") is not None else []

    def act(self, action: str) -> str:
        seed = self.props("seed")
        seed["water"] = min(4, seed["water"] + 2)
        return "You water the seed."

    def tick(self) -> None:
        seed = self.find("seed")
        if seed is None or seed["properties"]["water"] <= 0:
            return
        seed["properties"]["water"] -= 1
        seed["properties"]["growth"] += 1
        if seed["properties"]["growth"] >= 3:
            self.remove("seed")
            self.add("flower", "Flower", {"height": 1}, "pot")

    def compute_score(self) -> tuple[int, bool, bool]:
        if self.find("flower") is not None:
            return 4, True, True
        return self.props("seed")["growth"], False, False

    def expert_action(self) -> str:
        return "water seed" if self.props("seed")["water"] <= 1 else "wait"


class CookPotato(TextGame):
    game_id = "cook-potato"
    task_description = "Slice the potato and fry it until cooked, then turn off the stove."

    def setup(self) -> None:
        self.add("stove", "Stove", {"on": False})
        self.add("pan", "Pan", {}, "stove")
        self.add("potato", "Potato", {"sliced": self.rng.random() < 0.3, "cook": 0})

    def valid_actions(self) -> list[str]:
        return ["slice potato", "put potato in pan", "turn on stove", "turn off stove"]

    def act(self, action: str) -> str:
        potato = self.props("potato")
        if action == "slice potato":
            if potato["sliced"]:
                return "The potato is already sliced."
            potato["sliced"] = True
            return "You slice the potato."
        if action == "put potato in pan":
            if not potato["sliced"] or self.is_in("potato", "pan"):
                return "You can't do that."
            self.move("potato", "pan")
            return "You put the potato in the pan."
        want = action == "turn on stove"
        if self.props("stove")["on"] == want:
            return "Nothing happens."
        self.props("stove")["on"] = want
        return f"You turn {'on' if want else 'off'} the stove."

    def tick(self) -> None:
        if self.props("stove")["on"] and self.is_in("potato", "pan"):
            self.props("potato")["cook"] += 1

    def compute_score(self) -> tuple[int, bool, bool]:
        potato = self.props("potato")
        cooked = 3 <= potato["cook"] <= 4
        score = int(potato["sliced"]) + int(self.is_in("potato", "pan")) + 2 * cooked
        if potato["cook"] >= 5:
            return score, True, False
        won = cooked and not self.props("stove")["on"]
        return score, won, won

    def expert_action(self) -> str:
        potato = self.props("potato")
        if not potato["sliced"]:
            return "slice potato"
        if not self.is_in("potato", "pan"):
            return "put potato in pan"
        if potato["cook"] >= 3:
            return "turn off stove"
        return "turn on stove" if not self.props("stove")["on"] else "wait"


class MixPaint(TextGame):
    game_id = "mix-paint"
    recipes = {"purple": ("red", "blue"), "orange": ("red", "yellow"), "green": ("blue", "yellow")}

    def setup(self) -> None:
        self.target = self.rng.choice(sorted(self.recipes))
        self.task_description = f"Make {self.target} paint in the cup."
        self.add("cup", "Cup", {})
        for color in ("red", "blue", "yellow"):
            self.add(f"{color} paint", "Paint", {"color": color})

    def valid_actions(self) -> list[str]:
        pours = [f"pour {c} paint into cup" for c in ("red", "blue", "yellow") if self.find(f"{c} paint") is not None]
        return pours + ["mix cup"]

    def act(self, action: str) -> str:
        cup = self.get("cup")
        if action == "mix cup":
            colors = sorted(self.props(name)["color"] for name in cup["contains"])
            mixed = next((c for c, pair in self.recipes.items() if sorted(pair) == colors), None)
            if mixed is None:
                return "Nothing to mix."
            for name in list(cup["contains"]):
                self.remove(name)
            self.add(f"{mixed} paint", "Paint", {"color": mixed}, "cup")
            return f"The paints mix into {mixed} paint."
        name = action[len("pour ") : -len(" into cup")]
        if self.is_in(name, "cup"):
            return f"The {name} is already in the cup."
        self.move(name, "cup")
        return f"You pour the {name} into the cup."

    def compute_score(self) -> tuple[int, bool, bool]:
        cup = self.get("cup")["contains"]
        if f"{self.target} paint" in cup:
            return 3, True, True
        if any(self.props(n)["color"] in self.recipes for n in cup):
            return 0, True, False
        return sum(c.split()[0] in self.recipes[self.target] for c in cup), False, False

    def expert_action(self) -> str:
        for color in self.recipes[self.target]:
            if not self.is_in(f"{color} paint", "cup"):
                return f"pour {color} paint into cup"
        return "mix cup"


class MeasureVolume(TextGame):
    game_id = "measure-volume"
    task_description = "Find the volume of the stone with the measuring cylinder and answer it."
    answers = (10, 20, 30, 40)

    def setup(self) -> None:
        self.add("agent", "Agent", {})
        self.add("cylinder", "Cylinder", {"level": self.rng.choice([30, 40, 50, 60, 70])})
        self.add("stone", "Stone", {"volume": self.rng.choice(self.answers)}, "agent")
        self.answered: int | None = None

    def valid_actions(self) -> list[str]:
        return ["put stone in cylinder", "take stone"] + [f"answer {v}" for v in self.answers]

    def act(self, action: str) -> str:
        cylinder, stone = self.props("cylinder"), self.props("stone")
        if action.startswith("answer"):
            self.answered = int(action.split()[1])
            return f"You answer {self.answered} ml."
        if action == "put stone in cylinder":
            if self.is_in("stone", "cylinder"):
                return "The stone is already in the cylinder."
            self.move("stone", "cylinder")
            cylinder["level"] += stone["volume"]
            return f"The water rises to {cylinder['level']} ml."
        if not self.is_in("stone", "cylinder"):
            return "The stone is not in the cylinder."
        self.move("stone", "agent")
        cylinder["level"] -= stone["volume"]
        return f"The water falls to {cylinder['level']} ml."

    def compute_score(self) -> tuple[int, bool, bool]:
        if self.answered is not None:
            won = self.answered == self.props("stone")["volume"]
            return (3 if won else 0), True, won
        return int(self.is_in("stone", "cylinder")), False, False

    def expert_action(self) -> str:
        if not self.is_in("stone", "cylinder"):
            return "put stone in cylinder"
        return f"answer {self.props('stone')['volume']}"


class SweepFloor(TextGame):
    game_id = "sweep-floor"
    task_description = "Sweep all the dirt off the floor into the dustpan."

    def setup(self) -> None:
        self.add("agent", "Agent", {})
        self.add("floor", "Floor", {"dirt": self.rng.choice([2, 3, 4, 5, 6])})
        self.add("broom", "Broom", {})
        self.add("dustpan", "Dustpan", {"dust": 0})

    def valid_actions(self) -> list[str]:
        return ["take broom", "drop broom", "sweep floor"]

    def act(self, action: str) -> str:
        holding = self.is_in("broom", "agent")
        if action == "take broom":
            if holding:
                return "You already have the broom."
            self.move("broom", "agent")
            return "You take the broom."
        if action == "drop broom":
            if not holding:
                return "You don't have the broom."
            self.move("broom", None)
            return "You drop the broom."
        if not holding:
            return "You need the broom."
        if self.props("floor")["dirt"] == 0:
            return "The floor is already clean."
        self.props("floor")["dirt"] -= 1
        self.props("dustpan")["dust"] += 1
        return "You sweep some dirt into the dustpan."

    def compute_score(self) -> tuple[int, bool, bool]:
        clean = self.props("floor")["dirt"] == 0
        return self.props("dustpan")["dust"], clean, clean

    def expert_action(self) -> str:
        return "sweep floor" if self.is_in("broom", "agent") else "take broom"


class MakeIce(TextGame):
    game_id = "make-ice"
    task_description = "Turn the water in the tray into ice."

    def setup(self) -> None:
        self.add("freezer", "Freezer", {"open": False})
        self.add("tray", "Tray", {})
        self.add("water", "Water", {"temperature": self.rng.choice([10, 20, 30])}, "tray")

    def valid_actions(self) -> list[str]:
        return ["open freezer", "close freezer", "put tray in freezer", "take tray"]

    def act(self, action: str) -> str:
        freezer = self.props("freezer")
        if action in ("open freezer", "close freezer"):
            want = action == "open freezer"
            if freezer["open"] == want:
                return "Nothing happens."
            freezer["open"] = want
            return f"You {'open' if want else 'close'} the freezer."
        if not freezer["open"]:
            return "The freezer is closed."
        inside = self.is_in("tray", "freezer")
        if action == "put tray in freezer" and not inside:
            self.move("tray", "freezer")
            return "You put the tray in the freezer."
        if action == "take tray" and inside:
            self.move("tray", None)
            return "You take the tray out."
        return "Nothing happens."

    def tick(self) -> None:
        name = "water" if self.find("water") is not None else "ice"
        props = self.props(name)
        cold = self.is_in("tray", "freezer") and not self.props("freezer")["open"]
        props["temperature"] = max(-10, props["temperature"] - 10) if cold else min(20, props["temperature"] + 10)
        if name == "water" and props["temperature"] <= 0:
            self.remove("water")
            self.add("ice", "Ice", {"temperature": props["temperature"]}, "tray")
        elif name == "ice" and props["temperature"] > 0:
            self.remove("ice")
            self.add("water", "Water", {"temperature": props["temperature"]}, "tray")

    def compute_score(self) -> tuple[int, bool, bool]:
        if self.find("ice") is not None:
            return 3, True, True
        inside = self.is_in("tray", "freezer")
        return int(inside) + int(inside and not self.props("freezer")["open"]), False, False

    def expert_action(self) -> str:
        freezer = self.props("freezer")
        if not self.is_in("tray", "freezer"):
            return "put tray in freezer" if freezer["open"] else "open freezer"
        return "close freezer" if freezer["open"] else "wait"


class RefrigerateMilk(TextGame):
    game_id = "refrigerate-milk"
    task_description = "Keep the milk fresh by cooling it to 5 degrees in the fridge."

    def setup(self) -> None:
        self.add("fridge", "Fridge", {"open": False})
        self.add("milk", "Milk", {"temperature": self.rng.choice([15, 20, 25]), "fresh": self.rng.choice([3, 4, 5])})

    def valid_actions(self) -> list[str]:
        return ["open fridge", "close fridge", "put milk in fridge", "take milk"]

    def act(self, action: str) -> str:
        fridge = self.props("fridge")
        if action in ("open fridge", "close fridge"):
            want = action == "open fridge"
            if fridge["open"] == want:
                return "Nothing happens."
            fridge["open"] = want
            return f"You {'open' if want else 'close'} the fridge."
        if not fridge["open"]:
            return "The fridge is closed."
        inside = self.is_in("milk", "fridge")
        if action == "put milk in fridge" and not inside:
            self.move("milk", "fridge")
            return "You put the milk in the fridge."
        if action == "take milk" and inside:
            self.move("milk", None)
            return "You take the milk out."
        return "Nothing happens."

    def tick(self) -> None:
        milk = self.props("milk")
        if self.is_in("milk", "fridge") and not self.props("fridge")["open"]:
            milk["temperature"] = max(5, milk["temperature"] - 5)
        else:
            milk["temperature"] = min(25, milk["temperature"] + 5)
            if milk["temperature"] > 10:
                milk["fresh"] = max(0, milk["fresh"] - 1)

    def compute_score(self) -> tuple[int, bool, bool]:
        milk = self.props("milk")
        inside = self.is_in("milk", "fridge")
        score = int(inside) + int(inside and not self.props("fridge")["open"])
        if milk["temperature"] <= 5:
            return 3, True, True
        if milk["fresh"] <= 0:
            return score, True, False
        return score, False, False

    def expert_action(self) -> str:
        fridge = self.props("fridge")
        if not self.is_in("milk", "fridge"):
            return "put milk in fridge" if fridge["open"] else "open fridge"
        return "close fridge" if fridge["open"] else "wait"


GAMES: dict[str, type[TextGame]] = {
    cls.game_id: cls
    for cls in (
        BoilWater, LitLightbulb, GrowPlant, CookPotato, MixPaint,
        MeasureVolume, SweepFloor, MakeIce, RefrigerateMilk,
    )
}


def make_game(game_id: str, seed: int = 0) -> TextGame:
    """A fresh game by id, its initial values drawn from seed."""
    if game_id not in GAMES:
        raise ValueError(f"unknown text game {game_id!r}; known: {', '.join(sorted(GAMES))}")
    return GAMES[game_id](seed=seed)
