"""Are a keypoint tokenizer's points attached to what they mark? PushT: each point read in the T's own frame.

A world model can learn a push as a rigid motion of the T's points only if each point stays on the same place of the
T as it moves and turns. This reads, on held-out frames, every point of the tokenizer (its codes) in the body frame
of the T that gym-pusht's pixel judge reads off the same frame, and reports how far each point wanders there: the
median and 90th percentile distance (px at the frame's size) from its median place. A point attached to the T
wanders by about the judge's and the codes' rounding (under 1 px); a point defined in the image ("the T's top
end") slides over the T as it turns. The agent's point is reported as its distance to the judged agent.

    python evaluations/keypoint_attachment.py --tokenizer assets/pusht_visual/tokenizer_border --data data/pusht2
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rlvr_sim.metrics.pusht_pixels import WORLD_SIZE  # noqa: E402  (gym-pusht world units across the frame)


def attachment(codes: np.ndarray, states: np.ndarray, bins: int, size: int) -> list[dict[str, Any]]:
    """Per point: where it sits in the T's frame and how far it wanders there (px), or its distance to the agent.

    `codes` (N, 2K) keypoint codes of N frames (levels 0..bins-1 across the frame), `states` (N, 5) the judged
    gym-pusht state of the same frames (agent x, y, T x, y, angle; world units); frames the judge cannot read
    (NaN) are left out."""
    ok = np.isfinite(states).all(1)
    if not ok.any():
        raise ValueError("the pixel judge read no frame (no agent or no T visible in any)")
    per_px = size / WORLD_SIZE
    points = (np.asarray(codes, np.float64)[ok].reshape(ok.sum(), -1, 2) + 0.5) / bins * WORLD_SIZE  # world units
    st = states[ok]
    c, s = np.cos(st[:, 4])[:, None], np.sin(st[:, 4])[:, None]
    d = points - st[:, None, 2:4]
    body = np.stack([c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]], -1)  # (N, K, 2)
    out = []
    for k in range(points.shape[1]):
        to_agent = np.linalg.norm(points[:, k] - st[:, :2], axis=-1) * per_px
        centre = np.median(body[:, k], 0)
        wander = np.linalg.norm(body[:, k] - centre, axis=-1) * per_px
        marks = "agent" if np.median(to_agent) < np.median(wander) else "T"
        spread = to_agent if marks == "agent" else wander
        out.append({"point": k, "marks": marks, "median_px": float(np.median(spread)),
                    "p90_px": float(np.percentile(spread, 90)),
                    "place_in_T_frame": [round(float(v) * per_px, 2) for v in centre] if marks == "T" else None})
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True, help="keypoint tokenizer folder")
    parser.add_argument("--data", required=True, help="PushT episode folder")
    parser.add_argument("--frames", type=int, default=800, help="held-out frames to read (drawn, seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/eval/keypoint_attachment", help="output path without extension")
    args = parser.parse_args(argv)

    from rlvr_sim.data.episodes import episode_paths, load_episode, split_paths
    from rlvr_sim.metrics.pusht_pixels import judge_states
    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer
    from rlvr_sim.models.pose_tokenizer import load_frame_tokenizer

    tok = load_frame_tokenizer(args.tokenizer)
    if not isinstance(tok, KeypointTokenizer):
        raise ValueError(f"{args.tokenizer} holds a {type(tok).__name__}, not a keypoint tokenizer")
    size = tok.config.image_size
    held = split_paths(episode_paths(args.data))["test"]  # the world models' held-out episodes (same split)
    frames = np.concatenate([load_episode(p, size).images for p in held])
    rng = np.random.default_rng(args.seed)
    frames = frames[rng.choice(len(frames), min(args.frames, len(frames)), replace=False)]
    codes = tok.encode(frames)
    rows = attachment(codes, judge_states(frames), tok.config.bins, size)
    report = {"tokenizer": args.tokenizer, "data": args.data, "frames": len(frames), "points": rows,
              "command": "python evaluations/keypoint_attachment.py " + " ".join(argv or sys.argv[1:])}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# Keypoint attachment: {args.tokenizer} on {len(frames)} frames of {args.data}", "",
             "| point | marks | median px | p90 px | place in the T's frame (px) |", "|---|---|---|---|---|"]
    lines += [f"| {r['point']} | {r['marks']} | {r['median_px']:.2f} | {r['p90_px']:.2f} | {r['place_in_T_frame'] or '-'} |"
              for r in rows]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    main()
