"""Write docs/images/viewer.png: the viewer after a few steps of the expert PushT policy, headless.

The embedded video world model runs beside gym-pusht with the same actions, the filmstrip shows the
next frames predicted for the policy's plan, and the help overlay is on, as a user first sees it.

    python scripts/screenshot_viewer.py                      # embedded model
    python scripts/screenshot_viewer.py --checkpoint DIR --out docs/images/viewer.png
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/images/viewer.png")
    parser.add_argument("--steps", type=int, default=12, help="policy steps before the screenshot")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--checkpoint", help="world-model checkpoint (default: the embedded one)")
    parser.add_argument(
        "--env-id", help="Gymnasium id of the learned simulator (default: RLVRWorld-Video-v0)"
    )
    args = parser.parse_args(argv)
    from rlvr_sim.viewer.app import build_parser, build_viewer

    viewer_argv = [
        "--mode",
        "policy",
        "--policy",
        "expert",
        "--filmstrip",
        "--fps",
        "0",
        "--seed",
        str(args.seed),
    ]
    viewer_argv += ["--checkpoint", args.checkpoint] if args.checkpoint else []
    viewer_argv += ["--env-id", args.env_id] if args.env_id else []
    viewer = build_viewer(build_parser().parse_args(viewer_argv))
    try:
        viewer.run(max_steps=args.steps)
        path = viewer.screenshot(args.out)
    finally:
        viewer.close()
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
