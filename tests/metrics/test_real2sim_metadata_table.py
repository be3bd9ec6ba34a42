"""`--table` with a simpler-env JSON whose extra entries carry metadata with numbers among text: read, those
entries skipped and reported, a simulator that lists other policies still refused."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rlvr_sim.metrics.real2sim import load_success_table, read_success_table

REAL = {"google_robot_pick_coke_can": {"rt-1-converged": 0.853, "octo-base": 0.293, "rt-1-begin": 0.133}}
SIM = {"google_robot_pick_coke_can": {"rt-1-converged": 0.857, "octo-base": 0.17, "rt-1-begin": 0.027}}
METADATA = {
    "metadata": {"num_trials": 300, "date": "2024-05-16", "robot": "google_robot"},  # a count beside a date
    "num_episodes": {"google_robot_pick_coke_can": 24},  # per-task counts: numbers, not rates
    "ckpt_alias": {"rt-1-converged": "RT-1 (Converged)"},
    "version": "2024-05-16",
}


def test_metadata_with_numbers_is_skipped_and_listed(tmp_path):
    path = tmp_path / "simpler.json"
    path.write_text(json.dumps({"REAL_PERF": REAL, "SIMPLER_PERF": SIM, **METADATA}))
    read = read_success_table(path)
    (table,) = read.tasks
    assert table.task == "google_robot_pick_coke_can" and set(table.sims) == {"SIMPLER_PERF"}
    np.testing.assert_allclose(table.sims["SIMPLER_PERF"], [0.857, 0.17, 0.027])
    assert [entry.split(":")[0] for entry in read.skipped] == list(METADATA)
    assert load_success_table(path)[0].policies == table.policies


def test_per_task_layout_skips_metadata_beside_the_tasks(tmp_path):
    path = tmp_path / "per_task.json"
    task = {"real": REAL["google_robot_pick_coke_can"], "simpler": SIM["google_robot_pick_coke_can"],
            "trials": {"total": 300, "date": "2024-05-16"}}  # fmt: skip
    path.write_text(json.dumps({"pick_coke_can": task, "run_info": {"episodes": 24, "date": "2024-05-16"}}))
    read = read_success_table(path)
    assert [t.task for t in read.tasks] == ["pick_coke_can"] and set(read.tasks[0].sims) == {"simpler"}
    assert [entry.split(":")[0] for entry in read.skipped] == ["pick_coke_can.trials", "run_info"]


def test_a_simulator_naming_other_policies_is_still_refused(tmp_path):
    path = tmp_path / "mismatch.json"
    other = {"google_robot_pick_coke_can": {"rt-1-converged": 0.8, "octo-small": 0.1, "rt-1-begin": 0.0}}
    path.write_text(json.dumps({"REAL_PERF": REAL, "SIMPLER_PERF": other, **METADATA}))
    with pytest.raises(ValueError, match="missing in 'SIMPLER_PERF'"):
        load_success_table(path)
    alone = tmp_path / "metadata_only.json"
    alone.write_text(json.dumps({"REAL_PERF": REAL, **METADATA}))
    with pytest.raises(ValueError, match=r"no simulator to compare \(skipped as metadata: metadata: "):
        load_success_table(alone)


def test_table_command_reports_the_skipped_entries(tmp_path):
    path = tmp_path / "simpler.json"
    path.write_text(json.dumps({"REAL_PERF": REAL, "SIMPLER_PERF": SIM, **METADATA}))
    done = subprocess.run([sys.executable, "evaluations/real2sim.py", "--table", str(path), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "o" / "real2sim.json").read_text())
    assert len(report["skipped"]) == len(METADATA) and report["mean_over_tasks"]["SIMPLER_PERF"]["num_tasks"] == 1
    assert "Skipped as metadata, not rates: metadata: " in (tmp_path / "o" / "real2sim.md").read_text()
