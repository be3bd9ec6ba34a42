"""Play a text game in the terminal beside its learned simulator (`rlvr-sim play textgame`).

You type an action; the real game takes it, and the world model predicts the next state from the same
(real) current state. The screen shows, per object and property that changed in either, the value
before, the real value after and the predicted one, with mismatches in red; then the score record and
the step's exact-match verdict (all checks of `rlvr_sim.metrics.textgame.compare_states`). The model
is re-synchronised with the real game every step, so each verdict is a one-step prediction.

Commands besides game actions: `:actions` (valid actions), `:expert` (the scripted expert's next
action), `:state` (the full current state), `:reset`, `:help`, `:quit`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rlvr_sim.envs.lm_env import Prediction
from rlvr_sim.metrics.textgame import compare_states, contains_equal, split_state, values_equal

MISSING = "—"
COMMANDS = {
    ":actions": "list the actions the game understands now",
    ":expert": "take the scripted expert's next action",
    ":state": "show the full current state",
    ":reset": "restart the game (next seed)",
    ":help": "this list",
    ":quit": "leave",
}


class StatePredictor(Protocol):
    """Predicts the next state (RLVR-World layout {"game_state": [...]}) of one of our games, as the
    world-model envs' `Prediction` (the answer's text, the decoded state or None, and why not)."""

    name: str

    def predict(
        self, game: str, current_state: dict, action: str, uuid_base: int, task: str
    ) -> Prediction: ...


@dataclass
class DiffRow:
    """One (object, field) that the real game or the model changed: before, real after, predicted after."""

    object_name: str
    field: str
    before: Any
    real: Any
    predicted: Any

    @property
    def correct(self) -> bool:
        return _same(self.real, self.predicted, self.field)


def _field_value(obj: dict | None, field: str) -> Any:
    if obj is None:
        return MISSING
    if field == "contains":
        return obj.get("contains", [])
    properties = obj.get("properties")
    return properties.get(field, MISSING) if isinstance(properties, dict) else MISSING


def _same(a: Any, b: Any, field: str) -> bool:
    """Equal values of one field (`contains` as a multiset); a missing value equals only a missing one."""
    if a is MISSING or b is MISSING:
        return a is b
    return contains_equal(a, b) if field == "contains" else values_equal(a, b)


def diff_rows(current_state: dict, real_state: dict, predicted_state: dict | None) -> list[DiffRow]:
    """Every (object, field) changed by the real game or by the model, plus created/removed objects and
    the score record; `predicted_state` None (unparseable answer) predicts nothing at all."""
    current, current_score = split_state(current_state)
    real, real_score = split_state(real_state)
    predicted, predicted_score = split_state(predicted_state) if predicted_state is not None else ({}, None)
    rows = []
    for uuid in dict.fromkeys([*current, *real, *predicted]):
        before, after, guess = current.get(uuid), real.get(uuid), predicted.get(uuid)
        if predicted_state is None:
            guess = None
        name = str(next(o for o in (after, before, guess) if o is not None).get("name", uuid))
        if before is None or after is None or guess is None:
            exists = [o is not None for o in (before, after, guess)]
            if len(set(exists)) > 1:
                rows.append(DiffRow(name, "(exists)", exists[0], exists[1], exists[2]))
            if after is None and guess is None:
                continue  # removed in both: the (exists) row says it all
        fields: dict[str, None] = {}
        for obj in (before, after, guess):
            if obj is not None and isinstance(obj.get("properties"), dict):
                fields.update(dict.fromkeys(obj["properties"]))
        fields["contains"] = None
        for field in fields:
            values = [_field_value(o, field) for o in (before, after, guess)]
            if not (_same(values[0], values[1], field) and _same(values[0], values[2], field)):
                rows.append(DiffRow(name, field, *values))
    for key in dict.fromkeys([*(current_score or {}), *(real_score or {})]):
        values = [(score or {}).get(key, MISSING) for score in (current_score, real_score, predicted_score)]
        if not (_same(values[0], values[1], key) and _same(values[0], values[2], key)):
            rows.append(DiffRow("score", key, *values))
    return rows


def _show(value: Any) -> str:
    if value is MISSING:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def diff_table(rows: list[DiffRow], model_name: str) -> Table:
    """The real game's changes beside the model's, mismatches in red."""
    table = Table(title=f"What changed: real game vs {model_name}", show_lines=False, expand=False)
    for column, justify in (("object", "left"), ("field", "left"), ("before", "right")):
        table.add_column(column, justify=justify)
    table.add_column("real game", justify="right", style="bold")
    table.add_column("predicted", justify="right")
    table.add_column("", justify="center")
    if not rows:
        table.add_row("(nothing changed, in the game or the prediction)", "", "", "", "", Text("✓", "green"))
    for row in rows:
        style = "green" if row.correct else "bold red"
        table.add_row(
            Text(row.object_name),  # Text, not str: values like "[water]" must not be read as rich markup
            Text(row.field),
            Text(_show(row.before)),
            Text(_show(row.real)),
            Text(_show(row.predicted), style=style),
            Text("✓" if row.correct else "✗", style=style),
        )
    return table


def state_table(state: dict) -> Table:
    """The full state: one row per object, its properties and contents, then the score record."""
    objects, score = split_state(state)
    table = Table(title="State", show_lines=False)
    table.add_column("uuid", justify="right")
    table.add_column("object")
    table.add_column("properties")
    table.add_column("contains")
    for uuid, obj in objects.items():
        properties = obj.get("properties") if isinstance(obj.get("properties"), dict) else {}
        table.add_row(
            Text(str(uuid)),
            Text(str(obj.get("name", ""))),
            Text(", ".join(f"{k}={_show(v)}" for k, v in properties.items())),
            Text(_show(obj.get("contains", []))),
        )
    if score is not None:
        table.add_row("", "score", Text(", ".join(f"{k}={_show(v)}" for k, v in score.items())), "")
    return table


class TextGamePlayer:
    """The real game and a predictor, stepped together from the real state; renders each step with rich."""

    def __init__(
        self, game_id: str, predictor: StatePredictor, seed: int = 0, console: Console | None = None
    ) -> None:
        from rlvr_sim.envs.textgame.games import make_game

        self.make_game: Callable[[str, int], Any] = make_game
        self.game_id = game_id
        self.predictor = predictor
        self.seed = seed
        self.console = console or Console()
        self.steps = 0
        self.exact = 0
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = self.seed + 1 if seed is None else seed
        self.game = self.make_game(self.game_id, self.seed)

    def current_state(self) -> dict:
        snapshot = self.game.snapshot()
        return {"game_state": snapshot["objects"] + [self.game.score_state()]}

    def step(self, action: str) -> tuple[list[DiffRow], Prediction, bool]:
        """Real step and predicted step from the same state; returns the diff rows, the prediction and
        whether the predicted state is exactly right."""
        before = self.current_state()
        uuid_base = self.game.max_uuid
        prediction = self.predictor.predict(
            self.game_id, before, action, uuid_base, self.game.task_description
        )
        self.game.step(action)
        real = self.current_state()
        exact = prediction.state is not None and compare_states(prediction.state, real).all_correct
        self.steps += 1
        self.exact += int(exact)
        return diff_rows(before, real, prediction.state), prediction, exact

    def show_step(self, action: str) -> bool:
        """Step and print; returns whether the prediction was exact."""
        rows, prediction, exact = self.step(action)
        console = self.console
        console.print(Text(f"> {action}", style="bold cyan"))
        console.print(Text(self.game.observation, style="italic"))
        console.print(diff_table(rows, self.predictor.name))
        if prediction.error is not None:
            console.print(Text(f"model output could not be parsed: {prediction.error}", style="bold red"))
            console.print(Text(prediction.text[:500], style="dim"))
        verdict = Text(
            "exact prediction" if exact else "prediction differs", style="green" if exact else "red"
        )
        verdict.append(f"   ({self.exact}/{self.steps} exact this session)", style="dim")
        console.print(verdict)
        if self.game.game_over:
            console.print(
                Text("game over: " + ("won" if self.game.game_won else "lost"), style="bold yellow")
            )
        return exact

    def handle(self, line: str) -> bool:
        """One line of input: a command or an action. False to quit."""
        command = line.strip()
        if not command:
            return True
        if command in (":quit", ":q", ":exit"):
            return False
        if command == ":help":
            for name, text in COMMANDS.items():
                self.console.print(f"{name:10s} {text}")
        elif command == ":actions":
            self.console.print(Text(", ".join(self.game.all_actions())))
        elif command == ":state":
            self.console.print(state_table(self.current_state()))
        elif command == ":reset":
            self.reset()
            self.console.print(Text(f"new game (seed {self.seed})", style="bold yellow"))
            self.console.print(state_table(self.current_state()))
        elif command == ":expert":
            self.show_step(self.game.expert_action())
        elif command.startswith(":"):
            self.console.print(Text(f"unknown command {command!r}; :help lists them", style="red"))
        else:
            self.show_step(command)
        return True

    def run(self, lines: Iterable[str] | None = None) -> None:
        """Interactive loop over stdin (or over `lines`, for scripted runs and tests)."""
        console = self.console
        console.print(Text(f"{self.game_id}: {self.game.task_description}", style="bold"))
        console.print(f"world model: {self.predictor.name}. Type an action, or :help.")
        console.print(state_table(self.current_state()))
        source = iter(lines) if lines is not None else None
        while True:
            if source is None:
                try:
                    line = console.input("[bold cyan]action> [/]")
                except (EOFError, KeyboardInterrupt):
                    break
            else:
                line = next(source, None)
                if line is None:
                    break
            if not self.handle(line):
                break
        console.print(f"{self.exact}/{self.steps} steps predicted exactly.")


class WorldModelPredictor:
    """The text-game world model (`rlvr_sim.envs.textgame.world_model_env.TextGameWorldModel`: any
    checkpoint, default the embedded RLVR one) as a `StatePredictor`: its predictions are the ones the env
    and `evaluations/textgame.py` make (the same generation call), returned unchanged."""

    def __init__(self, checkpoint: str | None = None, temperature: float = 0.0, seed: int = 0) -> None:
        from rlvr_sim.envs.textgame.world_model_env import TextGameWorldModel

        self.model = TextGameWorldModel(checkpoint)
        self.name = Path(self.model.checkpoint).name
        self.temperature = temperature
        self.seed = seed
        self._calls = 0

    def predict(self, game: str, current_state: dict, action: str, uuid_base: int, task: str) -> Prediction:
        from rlvr_sim.data.bytesized32 import TextGameTransition

        transition = TextGameTransition(
            current_state=current_state,
            gold_state=current_state,  # not known yet, and not part of the prompt
            action=action,
            uuid_base=uuid_base,
            task_description=task,
            game=game,
        )
        (prediction,) = self.model.predict([transition], self.temperature, seeds=[self.seed + self._calls])
        self._calls += 1
        return prediction


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlvr-sim play textgame",
        description="Play a text game; see the world model's predicted state change beside the real one.",
    )
    parser.add_argument("--game", default="boil-water", help="one of our games (see --list-games)")
    parser.add_argument("--list-games", action="store_true", help="list the games and exit")
    parser.add_argument("--checkpoint", help="text-game world-model checkpoint (default: the embedded one)")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0: greedy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--actions", help="scripted run: actions separated by ';' (commands allowed)")
    return parser


def main(argv: Sequence[str] | None = None, predictor: StatePredictor | None = None) -> int:
    """Entry point of `rlvr-sim play textgame`; `predictor` replaces the world model (tests, other models)."""
    from rlvr_sim.envs.textgame.games import GAMES

    args = build_parser().parse_args(argv)
    if args.list_games:
        for game_id, cls in sorted(GAMES.items()):
            print(f"{game_id:20s} {cls.task_description}")
        return 0
    if args.game not in GAMES:
        raise SystemExit(f"unknown game {args.game!r}; known: {', '.join(sorted(GAMES))}")
    if predictor is None:
        predictor = WorldModelPredictor(args.checkpoint, temperature=args.temperature, seed=args.seed)
    player = TextGamePlayer(args.game, predictor, seed=args.seed)
    player.run(args.actions.split(";") if args.actions is not None else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
