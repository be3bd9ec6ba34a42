"""evaluations/pusht_planning.py end to end on a tiny collection (expert episodes collected here, 2 goals, a tiny
planner budget): every row reports a rate with an interval, planners their seconds per decision, and
`--resume` reuses finished goals."""

import json

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.envs.video.collect import collect  # noqa: E402
from rlvr_sim.evaluations.pusht_planning import load_goals, main  # noqa: E402


@pytest.fixture(scope="module")
def expert_data(tmp_path_factory):
    """20 short expert episodes (2 held out by the 10% split), states and seeds recorded as collect.py writes them."""
    out = tmp_path_factory.mktemp("pusht_expert")
    collect(out, episodes=20, seed=0, max_steps=40, mix="expert:1")
    return out


def test_goals_are_recorded_states_ahead_of_held_out_starts(expert_data):
    goals = load_goals(expert_data, 2, [10, 20], seed=0)
    assert [g.index for g in goals[10]] == [0, 1] and [g.start for g in goals[10]] == [g.start for g in goals[20]]
    with np.load(expert_data / goals[10][0].episode) as arrays:
        assert np.allclose(goals[20][0].goal, arrays["state"][goals[20][0].start + 20])
    with pytest.raises(ValueError, match="asked for 999 goals"):
        load_goals(expert_data, 999, [10])


def test_the_evaluation_runs_every_kind_of_row_and_resumes(expert_data, tmp_path):
    rows = "mpc:gym-pusht,mpc:learned:pusht_pose_base,blind:gym-pusht,expert,random"
    args = ["--data", str(expert_data), "--goals", "2", "--offsets", "10", "--rows", rows, "--samples", "6",
            "--iterations", "1", "--elites", "2", "--horizon", "2", "--replan-every", "2", "--out", str(tmp_path),
            "--quiet"]  # fmt: skip
    report = main(args)
    entry = report["results"]["10"]
    assert list(entry["rows"]) == rows.split(",")
    for row, result in entry["rows"].items():
        assert result["goals"] == 2 and 0.0 <= result["success"]["low"] <= result["success"]["mean"] <= result["success"]["high"] <= 1.0
        assert (result["seconds_per_decision"] is not None) == row.startswith(("mpc:", "blind:"))
    assert "mpc:learned:pusht_pose_base - mpc:gym-pusht" in entry["paired"]
    table = (tmp_path / "pusht_planning.md").read_text()
    assert "| mpc:learned:pusht_pose_base |" in table and "6 samples x 1 iterations" in table
    saved = json.loads((tmp_path / "pusht_planning.json").read_text())
    assert saved["settings"]["planner"]["samples"] == 6 and len(saved["episodes"]) == 10
    assert len((tmp_path / "pusht_planning_episodes.jsonl").read_text().splitlines()) == 10
    again = main([*args, "--resume"])  # every goal reused: the same records
    assert again["episodes"] == report["episodes"]


def test_planner_options_are_recorded_and_keyed_only_when_set(expert_data, tmp_path):
    """--context-steps / --mean-weight / --noise-beta / --keep-elites / --warm-std reach the table and the
    resume key; at their defaults the key is the one logs written before these options carry."""
    from rlvr_sim.evaluations.pusht_planning import _settings_key

    args = ["--data", str(expert_data), "--goals", "1", "--offsets", "10", "--rows", "mpc:learned:pusht_pose_base",
            "--samples", "4", "--iterations", "1", "--elites", "2", "--horizon", "2", "--replan-every", "1",
            "--readout", "pose", "--context-steps", "2", "--mean-weight", "0.5", "--noise-beta", "2",
            "--keep-elites", "0.5", "--warm-std", "20", "--cost-combine", "max", "--last-weight", "0.5", "--out", str(tmp_path), "--quiet"]  # fmt: skip
    report = main(args)
    table = (tmp_path / "pusht_planning.md").read_text()
    for words in ("2 past frame(s) as context", "0.5 x mean step", "noise colour beta 2", "0.5 of the elites kept",
                  "spread 20 when warm-started", "best step + 0.5 x last step, each step the larger of its position and angle terms"):
        assert words in table
    settings = report["settings"]
    old = {**settings, "planner": {k: v for k, v in settings["planner"].items()
                                   if k not in ("noise_beta", "keep_elites", "warm_std")}}
    for key in ("mean_weight", "context_steps", "cost_combine", "last_weight"):
        old.pop(key)
    defaults = {**old, "mean_weight": 0.0, "context_steps": 0, "cost_combine": "sum", "last_weight": 1.0,
                "planner": {**old["planner"], "noise_beta": 0.0, "keep_elites": 0.0, "warm_std": None}}
    assert _settings_key(defaults) == _settings_key(old) != _settings_key(settings)


def test_bad_rows_fail_before_any_goal(expert_data, tmp_path):
    with pytest.raises(SystemExit):
        main(["--data", str(expert_data), "--goals", "1", "--offsets", "10", "--rows", "random,random", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="unknown planner model"):
        main(["--data", str(expert_data), "--goals", "1", "--offsets", "10", "--rows", "mpc:dreamer", "--out",
              str(tmp_path), "--quiet"])


def test_plan_ranking_scores_gym_pusht_as_perfect_and_reports_every_model(expert_data, tmp_path):
    """gym-pusht ranks the candidates exactly as the truth does (it is the truth: Spearman 1, regret 0); a learned
    model and the T-still ranking get a number each, paired against T-still."""
    from rlvr_sim.evaluations.pusht_plan_ranking import STILL
    from rlvr_sim.evaluations.pusht_plan_ranking import main as rank

    report = rank(["--data", str(expert_data), "--goals", "2", "--offset", "10", "--candidates", "6", "--spreads", "15",
                   "--models", "gym-pusht,learned:pusht_pose_base", "--out", str(tmp_path), "--quiet"])  # fmt: skip
    rows = report["results"]["15.0"]
    assert set(rows) == {STILL, "gym-pusht", "learned:pusht_pose_base"}
    assert rows["gym-pusht"]["spearman"]["mean"] == pytest.approx(1.0) and rows["gym-pusht"]["regret"]["mean"] == 0.0
    assert rows["gym-pusht"]["regret_minus_still"]["mean"] <= 0.0 and "regret_minus_still" not in rows[STILL]
    assert np.isfinite(rows["learned:pusht_pose_base"]["regret"]["mean"])
    assert "| learned:pusht_pose_base |" in (tmp_path / "pusht_plan_ranking.md").read_text()
    with pytest.raises(SystemExit):
        rank(["--data", str(expert_data), "--goals", "1", "--spreads", "0", "--out", str(tmp_path), "--quiet"])


def test_token_inputs_diagnostic_reports_each_input_kind_and_keeps_the_constraint(expert_data, tmp_path):
    """evaluations/pusht_token_inputs.py: every input kind and the T-still row get errors and a rank correlation;
    the one-hot encoding puts exactly one active input per number; `--kinds` trains a subset and names an unknown
    kind."""
    from rlvr_sim.evaluations.pusht_token_inputs import KINDS, STILL, groups, inputs, one_hot
    from rlvr_sim.evaluations.pusht_token_inputs import main as diagnose

    report = diagnose(["--data", str(expert_data), "--goals", "2", "--offset", "10", "--candidates", "4", "--steps", "5",
                       "--out", str(tmp_path), "--quiet"])  # fmt: skip
    assert set(report["results"]) == {STILL, *KINDS}
    assert all(np.isfinite(row["position_error"]["mean"]) for row in report["results"].values())
    assert "| one-hot, value-linear rows |" in (tmp_path / "pusht_token_inputs.md").read_text()
    x = inputs(np.array([[100.0, 100.0]]), np.array([[110.0, 100.0]]), np.array([[300.0, 40.0]]),
               np.array([[256.0, 256.0, 0.3]]))
    encoded = one_hot(x)
    assert encoded.sum() == 9 and all(encoded[0, g.start : g.start + g.size].sum() == 1 for g in groups())
    with pytest.raises(SystemExit):
        diagnose(["--data", str(expert_data), "--goals", "0", "--out", str(tmp_path), "--quiet"])
    one = diagnose(["--data", str(expert_data), "--goals", "1", "--offset", "10", "--candidates", "4", "--steps", "2",
                    "--kinds", "one-hot, value-linear rows, parametrised", "--out", str(tmp_path / "one"), "--quiet"])
    assert set(one["results"]) == {STILL, "one-hot, value-linear rows, parametrised"}
    assert "--kinds 'one-hot, value-linear rows, parametrised'" in one["settings"]["command"]  # re-runs as printed
    with pytest.raises(SystemExit, match="unknown"):
        diagnose(["--data", str(expert_data), "--kinds", "one-hot;tokens", "--out", str(tmp_path), "--quiet"])
