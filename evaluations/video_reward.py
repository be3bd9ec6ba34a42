"""Does the learned PushT simulator's reward track gym-pusht's, and does it end where gym-pusht ends?

`RLVRWorld-Video-v0` returns gym-pusht's goal-coverage reward and terminates on its success rule, computed
from the model's own predicted pose (`rlvr_sim.metrics.pusht_reward`). This evaluation drives gym-pusht
and the learned env with the same action sequences from the same start frames and compares them step by
step.

Sequences: held-out episodes played here in gym-pusht (never in any training set): `NearGoalTask` start
states (the Real2Sim task: the T 30-90 world units and 20-70 degrees off the goal) drawn from seed
`[seed, i]`, scripted policies of graded skill (expert, good, mediocre, poor in turn) acting on the true
state, each decision held 4 env steps (one model step), 48 decisions. From each episode one window of
`--steps` decisions: where gym-pusht succeeds, a window that holds its first success at a seeded
position, otherwise a seeded window. gym-pusht's reward per decision is its reward at the last of the
4 env steps (the state the frame shows); it *terminates* in a decision when any of the 4 env steps
succeeds. The learned env starts from gym-pusht's 64x64 frame of the window's first state, served as
users get it (`gym.make`, default temperature and decoding), and is stepped with the same actions.

Reported per checkpoint, with bootstrap 95% intervals over sequences: Pearson of the two rewards over
every (sequence, step) and over the steps up to gym-pusht's termination (an episode's steps), Pearson of
the reward *changes* from the start (what the actions did, without the level each start sets), mean
absolute error, and termination agreement (same step, within one step, confusion counts). Beside them:
copy-start (the start frame's reward held: how much of the Pearson the start alone explains), the pixel
judge on the true frames and the pose tokens of the true frames (what a perfect model of each kind scores).
A pose read off a frame (the judge's, a visual model's) succeeds above `FRAME_SUCCESS_COVERAGE`, one of
pose tokens above `POSE_SUCCESS_COVERAGE`, as the env ends (`rlvr_sim.metrics.pusht_reward`).

`--calibrate` measures those two thresholds instead: on sequences of another seed, for each readout (the
judge on gym-pusht's true frames, and the pose-token bin centres of that reading) and each candidate
threshold, how often its first success falls in gym-pusht's terminating decision (or both never end), and
the counts of ends each side misses.

    python evaluations/video_reward.py                          # writes runs/video_reward/
    python evaluations/video_reward.py --out evaluations/results/video_reward
    python evaluations/video_reward.py --calibrate --seed 7 --sequences 192 --out evaluations/results/video_reward_calibration
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlvr_sim.metrics.pusht_reward import FRAME_SUCCESS_COVERAGE, POSE_SUCCESS_COVERAGE, SUCCESS_COVERAGE
from rlvr_sim.reporting import add_out_argument

SKILLS = ("expert", "good", "mediocre", "poor")
EPISODE_DECISIONS = 48  # NearGoalTask's horizon
DEFAULT_CHECKPOINTS = "pusht_pose_base,pusht_pose_rlvr"
CALIBRATION_THRESHOLDS = (0.95, 0.94, 0.93, 0.92, 0.91, 0.90, 0.88, 0.85, 0.82, 0.80)


def play_episode(index: int, seed: int, frame_skip: int = 4, size: int = 64) -> dict[str, np.ndarray]:
    """One held-out gym-pusht episode: frames (D + 1, S, S, 3), actions (D, 2), and per decision gym-pusht's
    reward and coverage at its last env step and whether any of its env steps succeeded (terminated)."""
    from rlvr_sim.envs.worlds import make_ground_truth
    from rlvr_sim.policies.pusht import NearGoalTask, PushTPolicy

    env = make_ground_truth(size, size)  # frames as the models' training frames are made
    start = NearGoalTask().sample_start(np.random.default_rng([seed, index]))
    frame, info = env.reset(seed=int(seed * 100_003 + index), options={"reset_to_state": start})
    policy = PushTPolicy(SKILLS[index % len(SKILLS)], seed=int(seed * 100_003 + index))
    out: dict[str, list] = {"frames": [frame], "actions": [], "reward": [], "coverage": [], "terminated": []}
    for _ in range(EPISODE_DECISIONS):  # played on past a success, so every window is whole
        action = policy.act(info)
        terminated = False
        for _ in range(frame_skip):
            frame, reward, done, _, info = env.step(action)
            terminated = terminated or bool(done)
        for key, value in (("frames", frame), ("actions", action), ("reward", reward),
                           ("coverage", info["coverage"]), ("terminated", terminated)):  # fmt: skip
            out[key].append(value)
    env.close()
    return {key: np.asarray(value) for key, value in out.items()}


def pick_window(episode: dict[str, np.ndarray], steps: int, rng: np.random.Generator) -> int:
    """The window's first decision: its first success at a seeded position inside it, else a seeded start."""
    last_start = len(episode["actions"]) - steps
    hits = np.flatnonzero(episode["terminated"])
    if len(hits):
        return int(np.clip(hits[0] - rng.integers(0, steps), 0, last_start))
    return int(rng.integers(0, last_start + 1))


def held_out_sequences(count: int, steps: int, seed: int, progress: bool = True) -> dict[str, np.ndarray]:
    """`count` windows of `steps` decisions (one per episode): start frames, actions and gym-pusht's
    reward, coverage and termination per decision, plus the true frames the actions led to."""
    from tqdm.auto import tqdm

    if not 1 <= steps <= EPISODE_DECISIONS:
        raise ValueError(f"--steps must lie in [1, {EPISODE_DECISIONS}], got {steps}")
    rng = np.random.default_rng([seed, 1])
    windows: dict[str, list] = {"start": [], "actions": [], "reward": [], "coverage": [], "terminated": [], "future": []}
    for index in tqdm(range(count), desc="gym-pusht episodes", unit="episode", disable=not progress):
        episode = play_episode(index, seed)
        lo = pick_window(episode, steps, rng)
        windows["start"].append(episode["frames"][lo])
        windows["future"].append(episode["frames"][lo + 1 : lo + 1 + steps])
        for key in ("actions", "reward", "coverage", "terminated"):
            windows[key].append(episode[key][lo : lo + steps])
    return {key: np.stack(value) for key, value in windows.items()}


def learned_signal(checkpoint: str, sequences: dict[str, np.ndarray], seed: int,
                   progress: bool = True) -> dict[str, np.ndarray]:  # fmt: skip
    """The served env's reward, termination and coverage along every sequence's actions from its start frame
    (stepped on past a termination, so every step compares)."""
    from rlvr_sim.envs.worlds import make_world_model
    from tqdm.auto import tqdm

    env = make_world_model(checkpoint=checkpoint)
    count, steps = sequences["actions"].shape[:2]
    out = {"reward": np.zeros((count, steps)), "terminated": np.zeros((count, steps), bool),
           "coverage": np.zeros((count, steps))}  # fmt: skip
    for i in tqdm(range(count), desc=f"learned env {checkpoint}", unit="sequence", disable=not progress):
        env.reset(seed=seed + i, options={"frame": sequences["start"][i]})
        for t, action in enumerate(sequences["actions"][i]):
            _, reward, terminated, _, info = env.step(action.astype(np.float32))
            out["reward"][i, t], out["terminated"][i, t] = reward, terminated
            out["coverage"][i, t] = info.get("coverage", np.nan)
    env.close()
    return out


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")



def _first(flags: np.ndarray) -> np.ndarray:
    """Per row, the first True column, or -1."""
    return np.where(flags.any(axis=1), flags.argmax(axis=1), -1)


def compare(real: dict[str, np.ndarray], predicted: dict[str, np.ndarray], start_reward: np.ndarray,
            boot: int = 2000, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """Reward tracking and termination agreement of one predicted signal against gym-pusht's (module docstring)."""
    ours, theirs = predicted["reward"], real["reward"]
    real_end, our_end = _first(real["terminated"]), _first(predicted["terminated"])
    steps = np.arange(ours.shape[1])
    in_episode = (real_end[:, None] < 0) | (steps[None] <= real_end[:, None])  # up to gym-pusht's termination
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(ours), size=(boot, len(ours)))

    def with_interval(metric: Any) -> dict[str, Any]:
        samples = np.array([metric(rows) for rows in draws])
        samples = samples[np.isfinite(samples)]
        interval = [float(np.percentile(samples, 2.5)), float(np.percentile(samples, 97.5))] if len(samples) else None
        return {"value": metric(np.arange(len(ours))), "ci95": interval}

    changes = lambda r: (ours[r] - start_reward[r, None], theirs[r] - start_reward[r, None])  # noqa: E731
    both = (real_end >= 0) & (our_end >= 0)
    return {
        "pearson_all_steps": with_interval(lambda r: _pearson(ours[r], theirs[r])),
        "pearson_episode_steps": with_interval(lambda r: _pearson(ours[r][in_episode[r]], theirs[r][in_episode[r]])),
        "pearson_reward_change": with_interval(lambda r: _pearson(*changes(r))),
        "mean_abs_error": with_interval(lambda r: float(np.abs(ours[r] - theirs[r]).mean())),
        "termination": {
            "same_step": float(np.mean(real_end == our_end)),
            "within_one_step": float(np.mean((real_end == our_end) | (both & (np.abs(real_end - our_end) <= 1)))),
            "both_terminate": int(both.sum()), "only_gym_pusht": int(((real_end >= 0) & (our_end < 0)).sum()),
            "only_learned": int(((real_end < 0) & (our_end >= 0)).sum()), "neither": int(((real_end < 0) & (our_end < 0)).sum()),
            "gym_pusht_rate": float(np.mean(real_end >= 0)), "learned_rate": float(np.mean(our_end >= 0)),
            # gym-pusht also ends inside a model step (any of its 4 env steps); a frame shows only the last
            "same_as_frame_success": float(np.mean(_first(real["coverage"] > SUCCESS_COVERAGE) == our_end)),
        },
    }  # fmt: skip


def reference_signals(sequences: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """Copy-start, the pixel judge on the true frames, and the pose tokens (bin centres) of the true frames."""
    from rlvr_sim.metrics.pusht_pixels import judge_states
    from rlvr_sim.metrics.pusht_reward import pose_reward
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    count, steps = sequences["actions"].shape[:2]
    states = judge_states(sequences["future"].reshape(-1, *sequences["future"].shape[2:]))
    tokenizer = PoseTokenizer()
    start_reward, start_success, _ = pose_reward(judge_states(sequences["start"])[:, 2:], FRAME_SUCCESS_COVERAGE)
    out = {"copy start (judge)": {"reward": np.repeat(start_reward[:, None], steps, 1),
                                  "terminated": np.repeat(start_success[:, None], steps, 1)}}  # fmt: skip
    tokens = tokenizer.codes_to_states(tokenizer.states_to_codes(states))
    for name, poses, threshold in (("judge on true frames", states, FRAME_SUCCESS_COVERAGE),
                                   ("pose tokens of true frames", tokens, POSE_SUCCESS_COVERAGE)):
        reward, success, _ = pose_reward(poses[:, 2:], threshold)
        out[name] = {"reward": reward.reshape(count, steps), "terminated": success.reshape(count, steps)}
    return out


READOUTS = ("judge", "pose tokens")  # how a learned env reads its predicted frame: the pixel judge, or pose bins


def calibrate_thresholds(sequences: dict[str, np.ndarray],
                         thresholds: Sequence[float] = CALIBRATION_THRESHOLDS) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
    """Per readout (the pixel judge on gym-pusht's true frames, and the pose-token bin centres of that reading)
    and per threshold, how its first success agrees with gym-pusht's own end."""
    from rlvr_sim.metrics.pusht_pixels import judge_states
    from rlvr_sim.metrics.pusht_reward import goal_coverage
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    count, steps = sequences["actions"].shape[:2]
    judged = judge_states(sequences["future"].reshape(-1, *sequences["future"].shape[2:]))
    tokenizer = PoseTokenizer()
    poses = {"judge": judged, "pose tokens": tokenizer.codes_to_states(tokenizer.states_to_codes(judged))}
    real_end = _first(sequences["terminated"])
    out = {}
    for readout in READOUTS:
        coverage = goal_coverage(poses[readout][:, 2:]).reshape(count, steps)
        rows = []
        for threshold in thresholds:
            end = _first(coverage > threshold)
            both = (real_end >= 0) & (end >= 0)
            rows.append({"threshold": float(threshold), "same_step": float(np.mean(real_end == end)),
                         "within_one_step": float(np.mean((real_end == end) | (both & (np.abs(real_end - end) <= 1)))),
                         "both_terminate": int(both.sum()), "only_gym_pusht": int(((real_end >= 0) & (end < 0)).sum()),
                         "only_readout": int(((real_end < 0) & (end >= 0)).sum())})  # fmt: skip
        out[readout] = rows
    return out


SHIPPED = {"judge": ("FRAME_SUCCESS_COVERAGE", FRAME_SUCCESS_COVERAGE),
           "pose tokens": ("POSE_SUCCESS_COVERAGE", POSE_SUCCESS_COVERAGE)}


def calibration_markdown(tables: dict[str, list[dict[str, Any]]], settings: dict[str, Any]) -> str:
    first = next(iter(tables.values()))[0]
    lines = [f"Success thresholds for a pose read off gym-pusht's true 64x64 frames: {settings['sequences']} sequences "
             f"of {settings['steps']} model steps, seed {settings['seed']}; gym-pusht terminates in "
             f"{first['both_terminate'] + first['only_gym_pusht']} of them. Readouts: the pixel judge (a visual "
             "model's frames), and the pose-token bin centres of the judge's reading (a pose-token model's "
             "prediction, were it perfect)."]  # fmt: skip
    for readout, rows in tables.items():
        best = max(rows, key=lambda row: (row["same_step"], row["within_one_step"]))
        name, shipped = SHIPPED[readout]
        lines += ["", f"### {readout}: shipped `{name}` = {shipped}; best here: {best['threshold']}", "",
                  "| coverage above | same end (step, or none) | within 1 step | ends: both / only gym-pusht / only readout |",
                  "|---:|---:|---:|---|"]  # fmt: skip
        for row in rows:
            lines.append(f"| {row['threshold']:.2f} | {row['same_step']:.3f} | {row['within_one_step']:.3f} | "
                         f"{row['both_terminate']} / {row['only_gym_pusht']} / {row['only_readout']} |")
    lines += ["", f"Command: `{settings['command']}` ({settings['seconds']:.0f} s)", ""]
    return "\n".join(lines)


def markdown(report: dict[str, Any]) -> str:
    """The rows as a markdown table, under the settings they were measured with."""
    s = report["settings"]
    lines = [f"Learned env reward vs gym-pusht along the same actions: {s['sequences']} held-out sequences of "
             f"{s['steps']} model steps (4 env steps each), seed {s['seed']}; gym-pusht terminates in "
             f"{100 * report['gym_pusht']['termination_rate']:.0f}% of them. Bootstrap 95% intervals over sequences.", "",
             "| signal | Pearson, all steps | Pearson, episode steps | Pearson, change from start | mean abs error "
             "| same end (step, or none) | within 1 step | same end as gym-pusht's success at the frame "
             "| ends: both / only gym-pusht / only learned / neither |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip

    def cell(entry: dict[str, Any]) -> str:
        ci = entry["ci95"]
        if not np.isfinite(entry["value"]):
            return "n/a (constant)"
        return f"{entry['value']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")

    for name, row in report["rows"].items():
        t = row["termination"]
        lines.append(f"| {name} | {cell(row['pearson_all_steps'])} | {cell(row['pearson_episode_steps'])} | "
                     f"{cell(row['pearson_reward_change'])} | {cell(row['mean_abs_error'])} | {t['same_step']:.3f} | "
                     f"{t['within_one_step']:.3f} | {t['same_as_frame_success']:.3f} | {t['both_terminate']} / {t['only_gym_pusht']} / "
                     f"{t['only_learned']} / {t['neither']} |")  # fmt: skip
    lines += ["", f"Command: `{s['command']}` ({s['seconds']:.0f} s)", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="Learned PushT env reward and termination vs gym-pusht's.")
    parser.add_argument("--checkpoints", default=DEFAULT_CHECKPOINTS, help="comma-separated checkpoints (paths or embedded names)")
    parser.add_argument("--sequences", type=int, default=96, help="held-out sequences (one per gym-pusht episode)")
    parser.add_argument("--steps", type=int, default=16, help="model steps per sequence")
    parser.add_argument("--seed", type=int, default=2024, help="episodes, windows and the env's sample seeds")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--calibrate", action="store_true",
                        help="measure the success thresholds of the pixel judge and of pose tokens on true frames instead (use another --seed)")
    add_out_argument(parser, help="output folder (default: runs/video_reward)", default="runs/video_reward")
    args = parser.parse_args(argv)
    if args.sequences < 2:
        raise SystemExit("--sequences must be at least 2 (a correlation needs several)")
    start = time.perf_counter()
    sequences = held_out_sequences(args.sequences, args.steps, args.seed, not args.quiet)
    command = " ".join(["python evaluations/video_reward.py", *(sys.argv[1:] if argv is None else argv)])
    out = Path(args.out)
    if args.calibrate:
        calibration = calibrate_thresholds(sequences)
        settings = {"sequences": args.sequences, "steps": args.steps, "seed": args.seed, "command": command,
                    "seconds": time.perf_counter() - start}  # fmt: skip
        out.mkdir(parents=True, exist_ok=True)
        (out / "calibration.json").write_text(json.dumps({"settings": settings, "rows": calibration}, indent=2) + "\n")
        (out / "calibration.md").write_text(calibration_markdown(calibration, settings))
        print(calibration_markdown(calibration, settings))
        return {"settings": settings, "rows": calibration}
    references = reference_signals(sequences)
    start_reward = references["copy start (judge)"]["reward"][:, 0]
    rows = {}
    for checkpoint in [c.strip() for c in args.checkpoints.split(",") if c.strip()]:
        rows[f"learned env: {checkpoint}"] = compare(sequences, learned_signal(checkpoint, sequences, args.seed,
                                                                               not args.quiet), start_reward)
    for name, signal in references.items():
        rows[name] = compare(sequences, signal, start_reward)
    report = {
        "settings": {"sequences": args.sequences, "steps": args.steps, "seed": args.seed, "skills": list(SKILLS),
                     "command": command,
                     "seconds": time.perf_counter() - start},
        "gym_pusht": {"termination_rate": float(sequences["terminated"].any(axis=1).mean()),
                      "reward_mean": float(sequences["reward"].mean()), "reward_std": float(sequences["reward"].std())},
        "rows": rows,
    }  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "video_reward.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "video_reward.md").write_text(markdown(report))
    print(markdown(report))
    print(f"wrote {out / 'video_reward.json'} and {out / 'video_reward.md'}")
    return report


if __name__ == "__main__":
    main()
