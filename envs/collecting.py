"""What the three collectors (`envs/{textgame,web,video}/collect.py`, run as `python training/collect.py
--task T`) share.

- `collector_parser`: the flags every collector takes, spelled alike: `--out` (the output directory) and
  `--seed`, then each collector's own.
- `load_class`: the class named "package.module:Class". A collector that plays an agent's policy (web: the
  MPC agent's proposal policy, for on-policy data; PushT: the scripted pushers) takes the policy class by
  name, so collectors and policies never import each other (`python -m pytest tests/core -k contract`).
- `key_split`: a transition filed by its key alone, a seedless hash, so the same key lands on the same side
  in every data set collected with it. Split rules, each chosen so that no test transition has its answer
  in training: web by this hash of the transition's key (page + action); text game by current state, a
  coarser key (every action of a state on one side; a seeded draw per game, kept so the documented data
  sets and the embedded models trained on them stay as they are); PushT writes whole episodes, which the
  video task splits by episode.
- `key_twins`: how many test keys occur among the training keys (each collector's `count_twins`).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
from collections.abc import Iterable, Sequence

from rlvr_sim.reporting import add_out_argument


def collector_parser(description: str, out_default: str | None = None, seed_default: int = 0,
                     epilog: str | None = None) -> argparse.ArgumentParser:
    """A collector's command line with the shared flags: `--out DIR` (required unless `out_default`) and `--seed`."""
    parser = argparse.ArgumentParser(description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    out = add_out_argument(parser, default=out_default, aliases=(),
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


def key_twins(train_keys: Iterable[str], test_keys: Sequence[str]) -> int:
    """How many of `test_keys` (with repeats) occur among `train_keys`."""
    seen = set(train_keys)
    return sum(key in seen for key in test_keys)


__all__ = ["collector_parser", "key_digest", "key_split", "key_twins", "load_class"]
