"""Collect transitions (s, a, s') from a ground-truth world.

    python training/collect.py --task textgame --out data/textgame ...
    python training/collect.py --task pusht --out data/pusht ...
    python training/collect.py --task web --out data/web ...
    python training/collect.py --task arm --out data/arm ...

Each task's collector lives next to its world (rlvr_sim.envs.<world>.collect) and takes its own flags;
`python training/collect.py --task T --help` lists them.
"""

from __future__ import annotations

import importlib
import sys

COLLECTORS = {
    "textgame": "rlvr_sim.envs.textgame.collect",
    "pusht": "rlvr_sim.envs.video.collect",
    "web": "rlvr_sim.envs.web.collect",
    "arm": "rlvr_sim.envs.arm.collect",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    task = None
    for i, arg in enumerate(argv):
        if arg == "--task" and i + 1 < len(argv):
            task = argv[i + 1]
            del argv[i : i + 2]
            break
        if arg.startswith("--task="):
            task = arg.split("=", 1)[1]
            del argv[i]
            break
    if task not in COLLECTORS:
        print(f"usage: collect.py --task {{{','.join(COLLECTORS)}}} [task flags]; got task {task!r}", file=sys.stderr)
        return 2
    result = importlib.import_module(COLLECTORS[task]).main(argv)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
