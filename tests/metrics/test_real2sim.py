"""Real2Sim metrics (SIMPLER's Pearson and MMRV) on hand-computed cases, and the result-table loader."""

import json
import math

import numpy as np
import pytest

from rlvr_sim.metrics.real2sim import (
    load_success_table,
    mean_maximum_rank_violation,
    pearson_correlation,
    rank_violations,
    real2sim_report,
    report_markdown,
)


def test_mmrv_hand_computed() -> None:
    # sim swaps policies 0 and 1 (real gap 0.4); policy 2 is ranked last by both.
    real, sim = [0.9, 0.5, 0.1], [0.2, 0.6, 0.0]
    np.testing.assert_allclose(rank_violations(sim, real), [0.4, 0.4, 0.0])
    assert mean_maximum_rank_violation(sim, real) == pytest.approx(0.8 / 3)


def test_mmrv_ties_follow_simpler_strict_ordering() -> None:
    # sim ties policies 1 and 2 while real ranks 1 above 2 by 0.3: a violation for policy 1 only.
    # real ties 0 and 1 while sim ranks 0 above 1: a violation of size |0.5 - 0.5| = 0.
    real, sim = [0.5, 0.5, 0.2], [0.3, 0.1, 0.1]
    np.testing.assert_allclose(rank_violations(sim, real), [0.0, 0.3, 0.0])
    assert mean_maximum_rank_violation(sim, real) == pytest.approx(0.1)
    # ties in both evaluations are no violation
    assert mean_maximum_rank_violation([0.2, 0.2], [0.7, 0.7]) == 0.0


def test_mmrv_uses_real_gaps_not_sim_gaps() -> None:
    # fully reversed ranking: each policy's worst violation is its largest real gap
    real, sim = [0.0, 0.2, 1.0], [0.9, 0.8, 0.7]
    np.testing.assert_allclose(rank_violations(sim, real), [1.0, 0.8, 1.0])
    assert mean_maximum_rank_violation(sim, real) == pytest.approx(2.8 / 3)
    assert mean_maximum_rank_violation(real, real) == 0.0


def test_pearson_hand_computed_and_edge_cases() -> None:
    real, sim = [0.9, 0.5, 0.1], [0.2, 0.6, 0.0]
    # centred real [0.4, 0, -0.4], centred sim [-1/15, 1/3, -4/15]: 0.08 / sqrt(0.32 * 0.18667)
    assert pearson_correlation(sim, real) == pytest.approx(0.08 / math.sqrt(0.32 * (0.56 / 3)), rel=1e-6)
    assert pearson_correlation(real, real) == 1.0
    assert pearson_correlation([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]) == pytest.approx(-1.0, abs=1e-6)
    # constant vectors: both constant -> 1 (centred vectors equal); one constant -> 0 (epsilon denominator)
    assert pearson_correlation([0.4, 0.4], [0.7, 0.7]) == 1.0
    assert pearson_correlation([0.5, 0.5, 0.5], [0.1, 0.2, 0.3]) == 0.0
    # shift-invariant like any correlation, up to simpler-env's 1e-8 in the denominator
    assert pearson_correlation([0.1, 0.3, 0.2], [0.6, 0.8, 0.7]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(
    ("sim", "real", "message"),
    [
        ([0.1, float("nan")], [0.2, 0.3], "NaN"),
        ([0.1, 0.2, 0.3], [0.2, 0.3], "same policies"),
        ([0.1], [0.2], "at least 2"),
        ([10.0, 20.0], [0.2, 0.3], r"\[0, 1\]"),
        ([[0.1, 0.2]], [[0.2, 0.3]], "1-D"),
    ],
)
def test_metric_input_errors(sim, real, message) -> None:
    with pytest.raises(ValueError, match=message):
        mean_maximum_rank_violation(sim, real)


SIMPLER_STYLE = {
    "real": {
        "move_near": {"rt-2-x": 0.733, "rt-1-x": 0.450, "octo-base": 0.350},
        "stack": {"rt-1-x": 0.0, "octo-small": 0.125},
    },
    "simpler": {
        "move_near": {"rt-2-x": 0.779, "rt-1-x": 0.317, "octo-base": 0.042},
        "stack": {"rt-1-x": 0.0, "octo-small": 0.042},
    },
}


def test_load_json_simpler_layout(tmp_path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(SIMPLER_STYLE))
    tables = {t.task: t for t in load_success_table(path)}
    assert set(tables) == {"move_near", "stack"}
    assert tables["move_near"].policies == ["rt-2-x", "rt-1-x", "octo-base"]
    np.testing.assert_allclose(tables["move_near"].sims["simpler"], [0.779, 0.317, 0.042])
    report = real2sim_report(list(tables.values()))
    assert report["mean_over_tasks"]["simpler"]["num_tasks"] == 2
    # same ordering in both tasks -> no violation
    assert report["mean_over_tasks"]["simpler"]["mmrv"] == 0.0
    assert "| move_near | simpler | 3 |" in report_markdown(report)


def test_load_csv_long_with_percent_and_two_sims(tmp_path) -> None:
    path = tmp_path / "pusht.csv"
    path.write_text(
        "policy,real,world_model,simpler\nexpert,90%,80%,50%\nnoisy,40%,60%,45%\nrandom,0%,5%,55%\n"
    )
    (table,) = load_success_table(path)
    assert table.task == "pusht"
    np.testing.assert_allclose(table.real, [0.9, 0.4, 0.0])
    metrics = table.metrics()
    # world_model keeps the real order (0.8 > 0.6 > 0.05) -> no violation
    assert metrics["world_model"]["mmrv"] == 0.0
    # simpler: expert 0.5 vs random 0.55 swapped (real gap 0.9), noisy 0.45 vs random swapped (0.4)
    assert metrics["simpler"]["mmrv"] == pytest.approx((0.9 + 0.4 + 0.9) / 3)


def test_load_markdown_wide_layout_with_headings(tmp_path) -> None:
    path = tmp_path / "paper.md"
    path.write_text(
        "## pick_coke_can\n\n| Eval | rt-1 | octo |\n|---|---|---|\n| Real | 0.85 | 0.29 |\n| SIMPLER | 0.86 | 0.17 |\n\n"
        "## move_near\n\n| | rt-1 | octo |\n|:--|--:|--:|\n| real eval | 63.3% | 35.0% |\n| SIMPLER | 44.2% | 4.2% |\n"
    )
    tables = {t.task: t for t in load_success_table(path)}
    np.testing.assert_allclose(tables["move_near"].real, [0.633, 0.35])
    np.testing.assert_allclose(tables["pick_coke_can"].sims["SIMPLER"], [0.86, 0.17])


def test_load_json_records(tmp_path) -> None:
    path = tmp_path / "records.json"
    path.write_text(
        json.dumps(
            [
                {"task": "t", "policy": "a", "real": 0.5, "sim": 0.4},
                {"task": "t", "policy": "b", "real": 0.1, "sim": 0.6},
            ]
        )
    )
    (table,) = load_success_table(path)
    assert table.metrics()["sim"]["mmrv"] == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("nan.csv", "policy,real,sim\na,0.5,nan\nb,0.1,0.2\n", "NaN"),
        ("blank.csv", "policy,real,sim\na,0.5,\nb,0.1,0.2\n", "empty"),
        ("norealcol.csv", "policy,sim_a,sim_b\na,0.5,0.1\nb,0.1,0.2\n", "no 'real' column"),
        ("scale.csv", "policy,real,sim\na,50,40\nb,10,20\n", "percent"),
        ("text.csv", "policy,real,sim\na,high,0.4\nb,0.1,0.2\n", "cannot read"),
        ("dup.csv", "policy,real,sim\na,0.5,0.4\na,0.1,0.2\n", "twice"),
        (
            "mismatch.json",
            json.dumps({"real": {"a": 0.1, "b": 0.2}, "sim": {"a": 0.1, "c": 0.3}}),
            "missing in 'sim'",
        ),
        ("noreal.json", json.dumps({"sim": {"a": 0.1, "b": 0.2}}), "no 'real'"),
        ("bad.json", "{not json", "invalid JSON"),
        ("nosim.json", json.dumps({"real": {"a": 0.1, "b": 0.2}}), "no simulator"),
        ("empty.md", "# nothing here\n", "no markdown pipe table"),
        ("table.xlsx", "x", "unknown table format"),
    ],
)
def test_loader_errors(tmp_path, name, text, message) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_success_table(path)


def test_loader_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        load_success_table(tmp_path / "absent.csv")


def test_simpler_published_pick_coke_can_by_hand(tmp_path) -> None:
    # simpler-env's REAL_PERF / SIMPLER_PERF for google_robot_pick_coke_can. Real order: 15pct > rt-2-x >
    # converged > rt-1-x > octo > begin; SIMPLER swaps rt-2-x/converged (real gap 0.054), rt-2-x/15pct
    # (0.013) and converged/15pct (0.067): MMRV = (0.054 + 0.067 + 0.067) / 6.
    policies = ["rt-2-x", "rt-1-converged", "rt-1-15pct", "rt-1-x", "rt-1-begin", "octo-base"]
    real = [0.907, 0.853, 0.920, 0.760, 0.133, 0.293]
    sim = [0.787, 0.857, 0.710, 0.567, 0.027, 0.170]
    np.testing.assert_allclose(rank_violations(sim, real), [0.054, 0.067, 0.067, 0, 0, 0], atol=1e-12)
    assert mean_maximum_rank_violation(sim, real) == pytest.approx(0.188 / 6)
    rows = "\n".join(f"{p},{r},{s}" for p, r, s in zip(policies, real, sim))
    table = tmp_path / "google_robot_pick_coke_can.csv"
    table.write_text("policy,real,simpler\n" + rows + "\n")
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "evaluations/real2sim.py", "--table", str(table), "--out", str(out)],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    report = json.loads((out / "real2sim.json").read_text())
    (task,) = report["tasks"]
    assert task["task"] == "google_robot_pick_coke_can"
    assert task["metrics"]["simpler"]["mmrv"] == pytest.approx(0.188 / 6)
    assert task["metrics"]["simpler"]["pearson"] == pytest.approx(np.corrcoef(sim, real)[0, 1], abs=1e-6)
    assert "| google_robot_pick_coke_can | simpler | 6 |" in (out / "real2sim.md").read_text()


def test_load_json_with_simpler_variable_names(tmp_path) -> None:
    path = tmp_path / "perf.json"
    path.write_text(
        json.dumps({"REAL_PERF": SIMPLER_STYLE["real"], "SIMPLER_PERF": SIMPLER_STYLE["simpler"]})
    )
    tables = {t.task: t for t in load_success_table(path)}
    assert set(tables["move_near"].sims) == {"SIMPLER_PERF"}
    # a simulator column whose name starts with "real" is still a simulator
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("policy,real,real_pixel_judge\na,0.5,0.4\nb,0.1,0.2\n")
    (table,) = load_success_table(csv_path)
    assert set(table.sims) == {"real_pixel_judge"}


def test_load_csv_with_units_in_headers_and_an_average_row(tmp_path) -> None:
    path = tmp_path / "paper.csv"
    path.write_text(
        "Policy,Real (%),SIMPLER (Visual Matching) (%),Learned sim\n"
        "RT-1 (Converged),85.3,85.7,0.80\nOcto-Base,29.3,17.0,0.35\nRT-1 (Begin),13.3,2.7,0.10\n"
        "Average,42.6,35.1,0.42\n"
    )
    (table,) = load_success_table(path)
    assert table.policies == ["RT-1 (Converged)", "Octo-Base", "RT-1 (Begin)"]
    np.testing.assert_allclose(table.real, [0.853, 0.293, 0.133])
    np.testing.assert_allclose(table.sims["SIMPLER (Visual Matching) (%)"], [0.857, 0.17, 0.027])
    np.testing.assert_allclose(table.sims["Learned sim"], [0.8, 0.35, 0.1])


def test_report_flags_real_rates_that_are_all_equal() -> None:
    from rlvr_sim.metrics.real2sim import TaskSuccessRates

    flat = TaskSuccessRates("flat", ["a", "b"], np.array([0.0, 0.0]), {"sim": np.array([0.0, 0.0])})
    ranked = TaskSuccessRates("ranked", ["a", "b"], np.array([0.2, 0.6]), {"sim": np.array([0.1, 0.3])})
    report = real2sim_report([flat, ranked])
    assert [t["real_rates_all_equal"] for t in report["tasks"]] == [True, False]
    assert "flat (real rates all equal: uninformative)" in report_markdown(report)
