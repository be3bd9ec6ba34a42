"""Interactive viewers of learned simulators: a pygame window for video world models (`rlvr-sim view`)
and a terminal player for text-game world models (`rlvr-sim play textgame`)."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """`rlvr-sim view`: see `rlvr_sim.viewer.app` (imported lazily, so pygame loads only when used)."""
    from rlvr_sim.viewer.app import main as app_main

    return app_main(argv)


__all__ = ["main"]
