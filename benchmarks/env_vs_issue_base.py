"""Batch-1 steps per second of the text-game and web world-model envs, the whole package as it stood when
the speed issue was filed (`--base-rev`) against the package you run, side by side in one run.

The env benchmarks beside this one (`textgame_env.py`, `web_env.py`) isolate one change each (the env
module on today's sampler; the lean decode step against transformers' forward). This one measures what
the issue's batch-1 target names, "today's steps/s" against now, with nothing held equal but the work:
the base revision is exported from git and installed into a private folder (`pip install --target`, no
dependencies), and two worker processes, one importing that copy and one importing the installed
package, each build the env with `gym.make(id, checkpoint=...)` on the same checkpoint files (this
checkout's) and step it greedily from the same seeds with the same actions (the text game: its start
state's valid actions in turn; the web: clicks on the start page's first links). Rounds alternate between
the workers, so load from other processes hits both; the ratio is the median of per-round ratios. Both
decode greedily: the workers set the world model's and the env's temperature to 0 (the web env samples at
temperature 1 by default, and the base's web env reads it from its world model, not from a keyword). The
run checks whether both sides predicted identical text (equal work) and counts the answer tokens each side
generated (the checkpoint's tokenizer), so that should a greedy near-tie flip between the two samplers'
arithmetic, the ratio of answer tokens per second still compares equal work.

    python benchmarks/env_vs_issue_base.py --out benchmarks/results/env_vs_issue_base.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rlvr_sim.reporting import emit_json, machine_record
from rlvr_sim.resources import asset_path, display_path

REPO = Path(__file__).resolve().parents[1]
BASE_REV = "5dfad7d"  # HEAD when the speed issue (#17) was filed: its "today"

ENVS = {
    "textgame": {"id": "RLVRWorld-TextGame-v0", "checkpoint": "textgame_rlvr_task_specific",
                 "kwargs": {"game": "boil-water"}, "text_key": "raw_output"},
    "web": {"id": "RLVRWorld-Web-v0", "checkpoint": "web_rlvr", "kwargs": {}, "text_key": "raw_prediction"},
}

# Runs in each worker process: reads one JSON request per line, answers one JSON line.
WORKER = r"""
import json, re, sys, time
import gymnasium as gym, torch
import rlvr_sim
torch.set_num_threads(int(sys.argv[1]))
envs = {}
def actions_of(name, obs, info):
    if name == "textgame":
        return list(info["valid_actions"])
    links = re.findall(r"\[(\d+)\] link ", obs)[:3] or ["1"]
    return [f"click [{link}]" for link in links]
print(json.dumps({"ready": rlvr_sim.__file__}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    name = request["name"]
    if name not in envs:
        envs[name] = gym.make(request["id"], checkpoint=request["checkpoint"], **request["kwargs"])
        # greedy on both sides (the web env samples at temperature 1 by default, and the base's reads the
        # temperature from its world model, not from a keyword)
        unwrapped = envs[name].unwrapped
        unwrapped.world_model.temperature = 0.0
        if hasattr(unwrapped, "temperature"):
            unwrapped.temperature = 0.0
    env = envs[name]
    obs, info = env.reset(seed=request["seed"])
    actions = actions_of(name, obs, info)
    texts = []
    start = time.perf_counter()
    for t in range(request["steps"]):
        obs, _, terminated, truncated, info = env.step(actions[t % len(actions)])
        texts.append(info.get(request["text_key"]))
        if terminated or truncated:
            obs, info = env.reset()
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "texts": texts}), flush=True)
"""


class Worker:
    """A process importing rlvr_sim from `site` (None: the installed package) that runs env rounds."""

    def __init__(self, site: Path | None, threads: int) -> None:
        env = dict(os.environ)
        if site is not None:
            env["PYTHONPATH"] = str(site)
        self.process = subprocess.Popen([sys.executable, "-c", WORKER, str(threads)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env, cwd=tempfile.gettempdir())
        self.package = Path(self._read()["ready"]).parent

    def _read(self) -> dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"benchmark worker exited with {self.process.wait()}")
        return json.loads(line)

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def install_base(rev: str, folder: Path) -> Path:
    """`rev` exported from git and installed (no dependencies) into `folder`/site; returns that site."""
    source, site = folder / "source", folder / "site"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(source)], check=True, capture_output=True)
    return site


def answer_tokens(texts: list[str | None], tokenizer: Any) -> int:
    return sum(len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts if t)


def compare(name: str, base: Worker, current: Worker, args: argparse.Namespace) -> dict[str, Any]:
    from tokenizers import Tokenizer

    spec = ENVS[name]
    tokenizer = Tokenizer.from_file(str(asset_path(spec["checkpoint"]) / "tokenizer.json"))
    request = {"name": name, "id": spec["id"], "checkpoint": str(asset_path(spec["checkpoint"])),
               "kwargs": spec["kwargs"], "text_key": spec["text_key"], "steps": args.steps, "seed": args.seed}
    base.run({**request, "steps": 1})  # warm-up: load the model, first forward
    current.run({**request, "steps": 1})
    base_seconds, current_seconds, identical_steps = [], [], []
    for _ in range(args.rounds):
        old, new = base.run(request), current.run(request)
        base_seconds.append(old["seconds"])
        current_seconds.append(new["seconds"])
        identical_steps = [a == b for a, b in zip(old["texts"], new["texts"])]
        tokens = answer_tokens(old["texts"], tokenizer), answer_tokens(new["texts"], tokenizer)
    ratios = [b / c for b, c in zip(base_seconds, current_seconds)]
    token_ratios = [(tokens[1] / c) / (tokens[0] / b) for b, c in zip(base_seconds, current_seconds)]
    return {
        "env_id": spec["id"], "checkpoint": display_path(request["checkpoint"]), "steps_per_round": args.steps,
        "base_seconds": [round(s, 4) for s in base_seconds],
        "current_seconds": [round(s, 4) for s in current_seconds],
        "base_steps_per_s": round(args.steps / statistics.median(base_seconds), 3),
        "current_steps_per_s": round(args.steps / statistics.median(current_seconds), 3),
        "speedup_current_vs_base": round(statistics.median(ratios), 2),
        "identical_predictions": all(identical_steps),
        "identical_steps": f"{sum(identical_steps)}/{len(identical_steps)}",
        "answer_tokens_per_round": {"base": tokens[0], "current": tokens[1]},
        "answer_tokens_per_s_ratio_current_vs_base": round(statistics.median(token_ratios), 2),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", choices=sorted(ENVS), default=sorted(ENVS))
    parser.add_argument("--steps", type=int, default=12, help="env steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating base/current rounds per env")
    parser.add_argument("--threads", type=int, default=1, help="torch threads in each worker")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base-rev", default=BASE_REV)
    parser.add_argument("--out", default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rlvr_base_") as folder:
        base = Worker(install_base(args.base_rev, Path(folder)), args.threads)
        current = Worker(None, args.threads)
        if base.package == current.package:
            raise RuntimeError(f"both workers imported {current.package}: the base copy was not used")
        try:
            results = {name: compare(name, base, current, args) for name in args.envs}
        finally:
            base.close()
            current.close()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    result = {
        "benchmark": "env_vs_issue_base",
        "command": "python benchmarks/env_vs_issue_base.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "base_rev": args.base_rev,
        "current": {"head": head.stdout.strip(), "package": display_path(current.package)},
        "torch_threads": args.threads,
        "decoding": "greedy (temperature 0), the env default",
        "envs": results,
        "machine": machine_record("2 shared cores: ratios are meaningful, absolute rates are not"),
    }
    emit_json(result, args.out)
    return result


if __name__ == "__main__":
    main()
