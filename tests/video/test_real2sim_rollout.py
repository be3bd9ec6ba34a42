"""Real2Sim rollout harness: seeded tasks give the same rates under Ray and in-process; SIMPLER skips cleanly."""

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.evaluations.real2sim import EpisodeSpec, rollout_specs, run_episodes, summarise  # noqa: E402

POLICIES = ["expert", "poor"]


def _rates(results):
    return {(r["sim"], r["policy"], r["episode"]): (r["success"], r["steps"]) for r in results}


def test_ray_and_in_process_runs_agree():
    pytest.importorskip("ray")
    import ray

    specs = rollout_specs(["real"], POLICIES, episodes=2, seed=3, horizon=6)
    local = run_episodes(specs, use_ray=False, progress=False)
    try:
        remote = run_episodes(specs, use_ray=True, num_cpus=2, progress=False)
    finally:
        ray.shutdown()
    assert _rates(local) == _rates(remote)
    assert [r["policy"] for r in remote] == [s.policy for s in specs]  # results come back in spec order
    summary = summarise(local + [dict(r, sim="copy") for r in local], ["real", "copy"], POLICIES, boot=50)
    assert summary["metrics"]["copy"]["mmrv"] == 0.0
    assert summary["judge_vs_truth"]["real"]["mean_position_error"] < 6.0


def test_episodes_replay_exactly():
    from rlvr_sim.evaluations.real2sim import run_episode

    spec = EpisodeSpec("real", "good", episode=1, seed=5, horizon=4)
    assert run_episode(spec) == run_episode(spec)


def test_episode_log_resumes_without_rerunning(tmp_path):
    log = tmp_path / "episodes.jsonl"
    specs = rollout_specs(["real"], ["random"], episodes=2, seed=1, horizon=3)
    first = run_episodes(specs[:1], use_ray=False, progress=False, log=log)
    both = run_episodes(specs, use_ray=False, progress=False, log=log)
    assert both[0] == first[0] and len(log.read_text().splitlines()) == 2
    assert run_episodes(specs, use_ray=False, progress=False, log=log) == both
    assert len(log.read_text().splitlines()) == 2


def test_summary_needs_real_first_and_complete_rollouts():
    results = [{"sim": "real", "policy": "expert", "episode": 0, "success": True, "true_success": True}]
    with pytest.raises(ValueError, match="first simulator"):
        summarise(results, ["mujoco", "real"], ["expert"])
    with pytest.raises(ValueError, match="missing rollouts"):
        summarise(results, ["real"], ["expert", "poor"])


@pytest.mark.skipif(importlib.util.find_spec("mani_skill") is not None, reason="ManiSkill3 installed: no skip")
def test_simpler_skips_with_a_clear_message(tmp_path):
    done = subprocess.run(
        [sys.executable, "evaluations/real2sim.py", "--simpler", "PutCarrotOnPlateInScene-v1"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "SIMPLER skipped: ManiSkill3 is not importable" in done.stdout


def test_rollout_command_writes_table_json_and_plot(tmp_path):
    pytest.importorskip("mujoco")
    done = subprocess.run(
        [sys.executable, "evaluations/real2sim.py", "--rollout", "--no-ray", "--quiet", "--sims", "real,mujoco",
         "--policies", "expert,random", "--episodes", "2", "--horizon", "4", "--out-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "real2sim.json").read_text())
    assert set(report["rates"]) == {"real", "mujoco"} and report["episodes"] == 2
    assert "| expert |" in (tmp_path / "real2sim.md").read_text()
    assert np.isfinite(report["metrics"]["mujoco"]["mmrv"])
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "real2sim_pusht.png").stat().st_size > 0
