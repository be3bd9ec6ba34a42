"""`evaluations/web_agent.py --pool`: two draws of episodes become one table, still paired by episode."""

import json

import pytest
from rlvr_sim.evaluations.web_agent import main, pool


def write_draw(folder, outcomes: dict[str, list[bool]], command: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    results = {name: {"success_rate": 100.0 * sum(o) / len(o), "episodes": len(o), "mean_steps": 3.0,
                      "traces": [{"task_id": i % 2, "success": s, "steps": 3} for i, s in enumerate(o)],
                      "settings": f"{name} settings", "command": f"{command} --agents {name}"}
               for name, o in outcomes.items()}
    (folder / "web_agent.json").write_text(json.dumps({"results": results, "note": ""}))


def test_pool_concatenates_the_agents_both_draws_hold_and_pairs_them(tmp_path):
    write_draw(tmp_path / "a", {"policy": [True, False, False, True], "mpc-sft-gated": [True, True, False, True],
                                "mpc-browser": [True] * 4}, "python evaluations/web_agent.py")
    write_draw(tmp_path / "b", {"policy": [False, False], "mpc-sft-gated": [True, False]},
               "python evaluations/web_agent.py --seed 10000")
    pooled = pool([str(tmp_path / "a"), str(tmp_path / "b")])
    assert list(pooled) == ["policy", "mpc-sft-gated"]  # mpc-browser is in one draw only
    assert pooled["policy"]["episodes"] == 6 and pooled["policy"]["success_rate"] == pytest.approx(100 * 2 / 6)
    assert pooled["mpc-sft-gated"]["success_rate"] == pytest.approx(100 * 4 / 6)
    assert pooled["policy"]["pooled_commands"][1].endswith("--seed 10000 --agents policy")
    out = tmp_path / "pooled"
    assert main(["--pool", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0
    table = (out / "web_agent.md").read_text()
    assert "| MPC + SFT world model, confidence-gated | 66.7" in table and "+33.3 [" in table  # paired vs 33.3
    with pytest.raises(SystemExit, match="does not exist"):
        pool([str(tmp_path / "a"), str(tmp_path / "missing")])
    write_draw(tmp_path / "c", {"mpc-browser": [True]}, "python evaluations/web_agent.py")
    with pytest.raises(SystemExit, match="no agent"):
        pool([str(tmp_path / "b"), str(tmp_path / "c")])
