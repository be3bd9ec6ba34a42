"""What the three collectors (`envs/{textgame,web,video}/collect.py`, run as `python training/collect.py
--task T`) share.

- `collector_parser`: the flags every collector takes, spelled alike: `--out` (the output directory) and
  `--seed`, then each collector's own.
- `load_class`: the class named "package.module:Class". A collector that plays an agent's policy (web: the
  MPC agent's proposal policy, for on-policy data; PushT: the scripted pushers) takes the policy class by
  name, so collectors and policies never import each other (`python -m pytest tests/test_contract.py`).
- `key_split`: a transition filed by its key alone, a seedless hash, so the same key lands on the same side
  in every data set collected with it. Split rules, each chosen so that no test transition has its answer
  in training: web by this hash of the transition's key (page + action); text game by current state, a
  coarser key (every action of a state on one side; a seeded draw per game, kept so the documented data
  sets and the embedded models trained on them stay as they are); PushT writes whole episodes, which the
  video task splits by episode.
- `transition_key`'s form: every collector files a transition under `key_digest` of the text its answer is
  a function of (text game: game, objects, score, action; web: page and action).
- `split_transitions` and `count_key_twins`: a data file's transitions (or a data directory's split file),
  and how many test transitions have a training twin, a transition with the same key (each collector's
  `count_twins`, which adds its own near-twin counts).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from rlvr_sim.reporting import add_out_argument
from rlvr_sim.tasks.text_transition import resolve_split_file

Transition = TypeVar("Transition")


def collector_parser(description: str, out_default: str | None = None, seed_default: int = 0,
                     epilog: str | None = None) -> argparse.ArgumentParser:
    """A collector's command line with the shared flags: `--out DIR` (required unless `out_default`) and `--seed`."""
    parser = argparse.ArgumentParser(description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    out = add_out_argument(parser, default=out_default, removed=(),
                           help="output directory" + (f" (default {out_default})" if out_default else ""))
    out.required = out_default is None
    parser.add_argument("--seed", type=int, default=seed_default)
    return parser


def load_class(spec: str, what: str = "class") -> type:
    """The class named "package.module:Class" (`what` names it in the error)."""
    module_name, _, cls_name = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError, ValueError) as err:
        raise ValueError(f"cannot load {what} {spec!r} (expected package.module:Class): {err}") from err


def key_digest(text: str) -> str:
    """The hex digest a transition's key text is filed by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_split(key: str, test_fraction: float) -> str:
    """"test" when the hex key, read as a number in [0, 1), is below `test_fraction`, else "train"."""
    return "test" if int(key[:15], 16) / 16 ** 15 < test_fraction else "train"


def split_transitions(paths: Iterable[str | Path], split: str, load: Callable[[Path], list[Transition]],
                      task: str) -> list[Transition]:
    """The transitions of data files, each given as a file or as a data directory whose `split` file
    (train.jsonl, test.jsonl, ...) is read; `load` reads one file, `task` names the collector in errors."""
    out: list[Transition] = []
    for path in map(Path, paths):
        out += load(resolve_split_file(path, split, task) if path.is_dir() else path)
    return out


def count_key_twins(train: Iterable[Transition], test: list[Transition],
                    key: Callable[[Transition], str]) -> dict[str, int]:
    """{"test": how many test transitions, "key_twins": how many of them (with repeats) have a training
    transition with the same `key`}."""
    seen = {key(t) for t in train}
    return {"test": len(test), "key_twins": sum(key(t) in seen for t in test)}


__all__ = ["collector_parser", "count_key_twins", "key_digest", "key_split", "load_class", "split_transitions"]
