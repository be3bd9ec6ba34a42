"""How predictable is the pushed T from what a world model sees, in absolute vs T-body-frame coordinates?

The diagnostic behind the relational token layout (docs/video.md, "The T's motion in its own body frame"):
per model step (`--frame-skip` env steps) of recorded PushT episodes with gym-pusht's `state`, an MLP predicts
the T's displacement (position and angle) from the previous and current states and the commanded target,
quantised as the pose tokenizer quantises them, either in absolute arena coordinates or in the current T's
body frame. Held-out R^2 over held-out episodes (every 10th), overall and on the steps where the T moved.

    python evaluations/video_predictability.py --data data/pusht2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

POSITION_BIN, ANGLE_BINS = 4.0, 128  # the pose tokenizer's quantisation (512 / 128 world units, 128 angles)


def transitions(data: str | Path, frame_skip: int) -> dict[str, np.ndarray]:
    """(previous, current, action, next) states per model step of every episode that records `state`."""
    from rlvr_sim.data.episodes import episode_paths

    rows: dict[str, list] = {"episode": [], "prev": [], "cur": [], "action": [], "next": []}
    for index, path in enumerate(episode_paths(data)):
        with np.load(path) as episode:
            if "state" not in episode.files:
                continue
            state, action = episode["state"].astype(np.float64), episode["action"].astype(np.float64)
        steps = np.arange(0, len(state), frame_skip)
        for k in range(1, len(steps) - 1):
            for key, value in (("episode", index), ("prev", state[steps[k - 1]]), ("cur", state[steps[k]]),
                               ("action", action[steps[k]]), ("next", state[steps[k + 1]])):
                rows[key].append(value)
    if not rows["cur"]:
        raise ValueError(f"no episode under {data} records gym-pusht's `state` (needed for this diagnostic)")
    return {key: np.asarray(value) for key, value in rows.items()}


def features(t: dict[str, np.ndarray], quantised: bool = True) -> dict[str, np.ndarray]:
    """Inputs in both coordinate systems, quantised as the pose tokens are (or exact: `quantised=False`), and the
    targets (T displacement, absolute and body frame)."""
    def quantise(states: np.ndarray) -> np.ndarray:
        if not quantised:
            return states.copy()
        out = (np.floor(states / POSITION_BIN) + 0.5) * POSITION_BIN
        if states.shape[-1] == 5:
            step = 2 * np.pi / ANGLE_BINS
            out[:, 4] = (np.floor((states[:, 4] + np.pi) / step) + 0.5) * step - np.pi
        return out

    prev, cur, action = quantise(t["prev"]), quantise(t["cur"]), quantise(t["action"])
    c, s = np.cos(cur[:, 4]), np.sin(cur[:, 4])

    def body(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        dx, dy = x - cur[:, 2], y - cur[:, 3]
        return np.stack([c * dx + s * dy, -s * dx + c * dy], 1)

    trig = np.stack([c, s], 1)
    absolute = np.concatenate([prev[:, :2], cur[:, :4], action, prev[:, 2:4]], 1) / 256.0 - 1.0
    absolute = np.concatenate([absolute, trig, np.cos(prev[:, 4:5]), np.sin(prev[:, 4:5])], 1)
    relative = np.concatenate([body(prev[:, 0], prev[:, 1]), body(cur[:, 0], cur[:, 1]),
                               body(action[:, 0], action[:, 1])], 1) / 128.0
    relative = np.concatenate([relative, cur[:, 2:4] / 256.0 - 1.0, trig], 1)
    dxy = t["next"][:, 2:4] - t["cur"][:, 2:4]
    dtheta = (t["next"][:, 4] - t["cur"][:, 4] + np.pi) % (2 * np.pi) - np.pi
    dbody = np.stack([c * dxy[:, 0] + s * dxy[:, 1], -s * dxy[:, 0] + c * dxy[:, 1]], 1)
    return {"absolute": absolute, "relative": relative, "dxy": dxy, "dtheta": dtheta, "dbody": dbody,
            "cos": c, "sin": s}


def fit_predict(x: np.ndarray, y: np.ndarray, train: np.ndarray, seed: int, steps: int) -> np.ndarray:
    """A 3-layer MLP (256 wide) fitted by Adam on standardised targets; predictions for every row."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    xt, yt = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    scale = yt[torch.tensor(train)].std(0) + 1e-6
    width = 256
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], width), torch.nn.GELU(), torch.nn.Linear(width, width),
                              torch.nn.GELU(), torch.nn.Linear(width, width), torch.nn.GELU(),
                              torch.nn.Linear(width, y.shape[1]))
    optimiser = torch.optim.Adam(net.parameters(), 1e-3)
    rows = np.flatnonzero(train)
    for _ in range(steps):
        batch = torch.tensor(rng.choice(rows, min(512, len(rows))))
        loss = ((net(xt[batch]) - yt[batch] / scale) ** 2).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        return (net(xt) * scale).numpy()


def r2(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(1.0 - ((pred - truth) ** 2).sum() / max(((truth - truth.mean(0)) ** 2).sum(), 1e-12))


def run(data: str | Path, frame_skip: int = 4, seeds: tuple[int, ...] = (0, 1, 2), steps: int = 4000,
        ablations: bool = False, extra: str | Path | list[str | Path] | None = None) -> dict:
    """Per coordinate system and split: R^2 and MAE averaged over one MLP per seed (each seed's values kept).

    `ablations` adds body-frame rows that say what limits the fit: exact (unquantised) states, and half of the
    training episodes (a point of the learning curve); `extra`: a folder (or a list of folders) of more episodes,
    for training only (one row for all of them)."""
    t = transitions(data, frame_skip)
    test = t["episode"] % 10 == 0
    if test.all() or not test.any():
        raise ValueError("need at least two episodes on each side of the held-out split (every 10th episode)")
    n = len(test)
    extras = [] if extra is None else [extra] if isinstance(extra, (str, Path)) else list(extra)
    for folder in extras:  # more training transitions: appended after the held-out-split data, never held out
        more = transitions(folder, frame_skip)
        t = {key: np.concatenate([t[key], more[key] + (t["episode"].max() + 1 if key == "episode" else 0)])
             for key in t}
        test = np.concatenate([test, np.zeros(len(more["cur"]), bool)])
    f = features(t)
    moving = np.hypot(*f["dxy"].T) > 2.0
    own = np.arange(len(test)) < n  # the transitions of `data` (scored on its held-out episodes)
    out = {"transitions": int(own.sum()), "held_out": int(test.sum()), "moving_share": float(moving[own].mean()),
           "frame_skip": frame_skip, "seeds": list(seeds), "rows": {}}
    c, s = f["cos"], f["sin"]
    body = np.column_stack([f["dbody"], f["dtheta"]])
    rows = [("absolute", f["absolute"], np.column_stack([f["dxy"], f["dtheta"]]), own & ~test),
            ("body frame", f["relative"], body, own & ~test)]
    if ablations:
        train_episodes = np.unique(t["episode"][own & ~test])
        half = np.random.default_rng(0).choice(train_episodes, len(train_episodes) // 2, replace=False)
        rows += [("body frame, exact states", features(t, quantised=False)["relative"], body, own & ~test),
                 ("body frame, half the training episodes", f["relative"], body, own & ~test & np.isin(t["episode"], half))]
    if extras:
        names = " + ".join(Path(folder).name for folder in extras)
        rows.append((f"body frame, + {names} for training", f["relative"], body, ~test))
    for name, x, y, train in rows:
        per_seed: dict[str, dict[str, list[float]]] = {}
        for seed in seeds:
            pred = fit_predict(x, y, train, seed, steps)
            if name != "absolute":  # back to arena coordinates, so every row scores the same quantity
                pred = np.column_stack([c * pred[:, 0] - s * pred[:, 1], s * pred[:, 0] + c * pred[:, 1], pred[:, 2]])
            for split, mask in (("train", train), ("held_out", test), ("held_out_moving", test & moving)):
                values = {"position_r2": r2(pred[mask, :2], f["dxy"][mask]),
                          "angle_r2": r2(pred[mask, 2], f["dtheta"][mask]),
                          "position_mae": float(np.abs(pred[mask, :2] - f["dxy"][mask]).mean())}
                for key, value in values.items():
                    per_seed.setdefault(split, {}).setdefault(key, []).append(value)
        out["rows"][name] = {split: {**{key: float(np.mean(v)) for key, v in values.items()},
                                     "per_seed": values} for split, values in per_seed.items()}
    return out


def _span(values: list[float]) -> str:
    return f"[{min(values):.2f}-{max(values):.2f}]"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/pusht2")
    parser.add_argument("--frame-skip", type=int, default=4)
    parser.add_argument("--steps", type=int, default=4000, help="Adam steps per MLP")
    parser.add_argument("--seeds", type=int, default=3, help="MLPs per row (seeds 0..N-1), averaged")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ablations", action="store_true",
                        help="also body-frame rows from exact states and from half the training episodes")
    parser.add_argument("--extra-data", action="append", default=None,
                        help="more episodes for training only (repeatable; one row for all of them)")
    parser.add_argument("--out", default=None, help="JSON path (default: runs/eval/video_predictability.json; the committed "
                                                            "one: evaluations/results/video_predictability.json)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.time()
    result = run(args.data, args.frame_skip, tuple(range(args.seeds)), args.steps, args.ablations, args.extra_data)
    from rlvr_sim.resources import display_path, results_dir

    result["seconds"] = round(time.time() - start, 1)
    result["command"] = "python evaluations/video_predictability.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out = Path(args.out) if args.out else results_dir() / "video_predictability.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    for name, row in result["rows"].items():
        print(f"{name}: " + " | ".join(
            f"{split}: R2 position {v['position_r2']:.3f} {_span(v['per_seed']['position_r2'])} angle "
            f"{v['angle_r2']:.3f} {_span(v['per_seed']['angle_r2'])}" for split, v in row.items()))
    print(f"wrote {display_path(out)}")
    return result


if __name__ == "__main__":
    main()
