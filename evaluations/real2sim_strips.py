"""Look at Real2Sim episodes: the frames a policy saw in gym-pusht and in a learned simulator, side by side.

Each episode is replayed by `run_episode`, the function behind the Real2Sim tables, so the rows are exactly the
episodes those tables count (same start, same policy noise, same simulator seed). One pair of rows per episode:
gym-pusht on top, the simulator below; every `every`-th frame up to the judged success (framed green; the episode
ends there) or the horizon (framed red when it never succeeded).

    python evaluations/real2sim_strips.py --sim learned:pusht_visual_object --policy expert --episodes 0,1,2,3 \
        --out docs/images/real2sim_visual_object.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

GREEN, RED = (40, 170, 60), (200, 40, 40)


def episode_row(sim: str, policy: str, episode: int, seed: int, horizon: int, every: int) -> np.ndarray:
    """(S + 2, n * (S + 2), 3) uint8: every `every`-th frame of one episode, the last one framed by its outcome."""
    from rlvr_sim.evaluations.real2sim_episodes import EpisodeSpec, run_episode

    frames: list[np.ndarray] = []
    result = run_episode(EpisodeSpec(sim, policy, episode, seed, horizon), frames=frames)
    shown = frames[::every] if (len(frames) - 1) % every == 0 else [*frames[::every], frames[-1]]
    tiles = [np.pad(f, ((1, 1), (1, 1), (0, 0)), constant_values=255) for f in shown]
    colour, last = (GREEN if result["success"] else RED), np.pad(shown[-1], ((1, 1), (1, 1), (0, 0)))
    last[[0, -1], :] = colour
    last[:, [0, -1]] = colour
    tiles[-1] = last
    width = (horizon // every + 2) * tiles[0].shape[1]
    row = np.concatenate(tiles, 1)
    return np.pad(row, ((0, 0), (0, width - row.shape[1]), (0, 0)), constant_values=255)


def strips(sim: str, policy: str, episodes: list[int], seed: int = 0, horizon: int = 48, every: int = 4,
           scale: int = 3) -> np.ndarray:  # fmt: skip
    """Rows of gym-pusht and `sim` for each episode, upscaled `scale` times."""
    rows = []
    for episode in episodes:
        for source in ("real", sim):
            rows.append(episode_row(source, policy, episode, seed, horizon, every))
        rows.append(np.full((4, rows[-1].shape[1], 3), 255, np.uint8))
    return np.kron(np.concatenate(rows[:-1], 0), np.ones((scale, scale, 1), np.uint8))


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sim", default="learned:pusht_visual_object")
    parser.add_argument("--policy", default="expert")
    parser.add_argument("--episodes", default="0,1,2,3", help="comma-separated episode indices of the Real2Sim run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--horizon", type=int, default=48)
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--out", default="runs/eval/real2sim_strips.png")
    args = parser.parse_args(argv)
    import imageio.v2 as imageio

    image = strips(args.sim, args.policy, [int(e) for e in args.episodes.split(",")], args.seed, args.horizon, args.every)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(out, image)
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    main()
