"""Smoke tests of benchmarks/sampler.py, benchmarks/grpo_vs_trl.py (--quick: tiny model, tiny shapes),
benchmarks/grpo_lean_decode.py,
benchmarks/video_env.py (the visual PushT env beside the pose env, equal work, alternating rounds) and
benchmarks/video_data_memory.py (the video training data stored once and made on demand, beside what it replaced),
benchmarks/textgame_env.py / web_env.py (today's env side by side with itself: loop vs vector env, transformers'
forward vs the lean decode step)."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_script(name: str):
    """Import a benchmark script by path (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def within(value: float, raw: list[float], rounding: float = 0.0) -> bool:
    """A summary of per-round measurements (a median, a pooled rate) lies within their range, all positive
    (`rounding`: the figure's rounding step). Fails where a figure is not computed from the rounds it
    claims (a sum, a first round, a wrong token count)."""
    low, high = min(raw) * (1 - 1e-9) - rounding / 2, max(raw) * (1 + 1e-9) + rounding / 2
    return min(raw) > 0 and low <= value <= high


def ratio_within(ratio: float, numerators: list[float], denominators: list[float], rounding: float = 0.0) -> bool:
    """A ratio of two summaries lies between the extreme ratios of their rounds (an inverted or mismatched
    ratio falls outside unless the two sides' rounds overlap)."""
    return within(ratio, [n / d for n in numerators for d in denominators], rounding)


def test_sampler_quick_reports_both_samplers(tmp_path, capsys):
    sampler = load_script("sampler")
    out = tmp_path / "sampler.json"
    assert sampler.main(["--quick", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads(out.read_text())
    assert printed == written
    assert written["command"].startswith("python benchmarks/sampler.py --quick")
    assert [(r["shape"], r["variant"]) for r in written["results"]] == [
        (shape, variant) for shape in ("trl_default_like", "world_model_like") for variant in sampler.VARIANTS]
    for r in written["results"]:
        assert r["token_budget"] == r["prompts"] * r["group_size"] * r["new_tokens"]
        for name in ("ours", "generate"):
            side = r[name]
            if r["variant"] == "fixed_length":  # equal work: every row generates the whole budget
                assert side["generated_tokens"] == r["token_budget"]
            else:
                assert 0 < side["generated_tokens"] <= r["token_budget"]
            assert within(side["median_seconds"], side["seconds"])
            assert within(side["tokens_per_second"], [side["generated_tokens"] / t for t in side["seconds"]])
        rates = {name: [r[name]["generated_tokens"] / t for t in r[name]["seconds"]]
                 for name in ("ours", "generate", "ours_transformers_forward")}
        assert ratio_within(r["speedup_ours_over_generate"], rates["ours"], rates["generate"])
        # the lean decode step off gives the same samples: the same token count, only the time differs
        assert r["ours_transformers_forward"]["generated_tokens"] == r["ours"]["generated_tokens"]
        assert ratio_within(r["speedup_lean_decode"], rates["ours"], rates["ours_transformers_forward"])
        if r["variant"] == "fixed_length":
            share = r["profile_ours"]
            assert share["matmul_share"] > 0  # the profile saw the model's matrix multiplies
            assert share["matmul_share"] + share["attention_share"] <= 1.0 + 1e-9
        else:
            assert "profile_ours" not in r


def test_sampler_generate_runner_counts_every_token():
    sampler = load_script("sampler")
    from rlvr_sim.models.lm import build_model

    model = build_model("tiny-5m", vocab_size=32, max_positions=32, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2).eval()
    prompts = sampler.random_prompts(2, 5, 32, seed=0)
    assert all(0 not in p and len(p) == 5 for p in prompts)
    assert sampler.generate_runner(model, prompts, group=3, new_tokens=4)() == 2 * 3 * 4
    assert sampler.ours_runner(model, prompts, group=3, new_tokens=4)() == 2 * 3 * 4
    # with every id a stop id, each row stops after its first token, on both sides
    every = list(range(32))
    assert sampler.generate_runner(model, prompts, group=3, new_tokens=4, stop=every)() == 2 * 3
    assert sampler.ours_runner(model, prompts, group=3, new_tokens=4, stop=every)() == 2 * 3


def test_prefixed_addition_task_keeps_answers_and_reward():
    grpo = load_script("grpo_vs_trl")
    from rlvr_sim.tasks.addition import AdditionTask

    plain, prefixed = AdditionTask(digits=2, seed=3), grpo.PrefixedAdditionTask(digits=2, prefix_tokens=50, seed=3)
    a, b = plain.examples("train")[0], prefixed.examples("train")[0]
    assert len(b.prompt_ids) == len(a.prompt_ids) + 50
    assert b.prompt_ids[0] == a.prompt_ids[0] == plain.tokenizer.bos_token_id
    assert b.prompt_ids[-len(a.prompt_ids) + 1:] == a.prompt_ids[1:]
    assert b.answer_ids == a.answer_ids
    assert prefixed.reward([b.prompt_ids], [b.answer_ids], [b.metadata]) == [1.0]
    assert prefixed.reward([b.prompt_ids], [b.answer_ids[:-1]], [b.metadata]) == [0.0]
    with pytest.raises(ValueError, match="prefix_tokens"):
        grpo.PrefixedAdditionTask(prefix_tokens=-1)
    assert grpo.step_seconds([1.0, 3.0, 3.5]) == [2.0, 0.5]


def test_grpo_vs_trl_quick(tmp_path, capsys):
    pytest.importorskip("trl", reason="TRL is not installed; the GRPO comparison needs it")
    grpo = load_script("grpo_vs_trl")
    out = tmp_path / "grpo.json"
    assert grpo.main(["--quick", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(out.read_text())
    by_key = {(r["name"], r["variant"]): r for r in report["results"]}
    assert set(by_key) == {(n, v) for n in ("trl_default_like", "world_model_like") for v in grpo.VARIANTS}
    assert by_key["world_model_like", "natural_stop"]["prompt_tokens"] == \
        by_key["trl_default_like", "natural_stop"]["prompt_tokens"] + 24
    for r in report["results"]:
        rows = r["prompts"] * r["group_size"]
        for name in ("ours", "trl"):
            run = r[name]["rounds"][0]
            assert len(run["seconds_per_step"]) == r["steps"] - 1
            assert len(run["reward_per_step"]) == r["steps"]
            assert all(0.0 <= x <= 1.0 for x in run["reward_per_step"])
            assert all(0 < n <= r["max_new_tokens"] for n in run["mean_completion_tokens_per_step"])
            if r["variant"] == "fixed_length":  # equal work: every completion is max_new_tokens long
                assert run["mean_completion_tokens_per_step"] == [r["max_new_tokens"]] * r["steps"]
                assert run["completion_tokens_per_step"] == [rows * r["max_new_tokens"]] * (r["steps"] - 1)
            assert within(run["tokens_per_second"], [n / t for n, t in zip(run["completion_tokens_per_step"],
                                                                          run["seconds_per_step"])])
        seconds = {name: [t for run in r[name]["rounds"] for t in run["seconds_per_step"]] for name in ("ours", "trl")}
        assert ratio_within(r["ratio_trl_over_ours"], seconds["trl"], seconds["ours"])
        rates = {name: [run["tokens_per_second"] for run in r[name]["rounds"]] for name in ("ours", "trl")}
        assert ratio_within(r["tokens_per_second_ratio_ours_over_trl"], rates["ours"], rates["trl"])


def test_grpo_lean_decode_compares_equal_work(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RLVR_SIM_LEAN_DECODE", raising=False)
    bench = load_script("grpo_lean_decode")
    out = tmp_path / "grpo_lean_decode.json"
    assert bench.main(["--steps", "2", "--rounds", "2", "--digits", "1", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["same_response_lengths"]  # the same samples with and without the lean step
    assert [len(r["seconds_per_step"]) for r in written["lean"]["runs"]] == [1, 1]
    seconds = {label: [t for run in written[label]["runs"] for t in run["seconds_per_step"]]
               for label in ("lean", "transformers_forward")}
    assert ratio_within(written["speedup_lean"], seconds["transformers_forward"], seconds["lean"])
    assert "RLVR_SIM_LEAN_DECODE" not in __import__("os").environ  # restored after each run


def test_decode_floor_reports_the_floor_compile_and_batching(tmp_path, capsys):
    bench = load_script("decode_floor")
    out = tmp_path / "decode_floor.json"
    result = bench.main(["--steps", "3", "--rounds", "1", "--rows", "2", "--cache", "20", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == json.loads(capsys.readouterr().out) == json.loads(json.dumps(result))
    one = written["batch1_decode_step_ms"]
    assert min(one["transformers_forward"], one["lean"], one["matmuls_only"]) > 0
    assert 0 < one["matmul_share_of_lean_step"]
    assert set(one["chunk_cost_vs_one_token"]) == {"2", "4", "8"}
    compiled = one["torch_compile"]  # measured; the compiler's error only where there is no C++ compiler
    if shutil.which("g++") or shutil.which("c++"):
        assert "error" not in compiled, compiled
    assert "error" in compiled or (compiled["ms_per_step"] > 0 and compiled["max_abs_logit_difference"] < 1e-4)
    many = written["batch_scaling_decode_step_ms"]
    assert many["rows"] == 2
    assert min(many["lean_1"], many["lean_2"], many["matmuls_2"]) > 0
    assert many["rows_per_second_2_over_1"] > 0 and many["bound_2_over_1_if_only_matmuls_remained_at_2"] > 0


def test_video_env_measures_the_visual_env_beside_the_pose_env(tmp_path):
    pytest.importorskip("gym_pusht", reason="gym-pusht is the benchmark's ground-truth rate")
    bench = load_script("video_env")
    out = tmp_path / "video_env.json"
    result = bench.main(["--steps", "1", "--rounds", "2", "--pusht-steps", "5", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(result))
    assert written["visual_checkpoint"] == "pusht_visual_base"
    runs = written["runs"]
    assert set(runs) == {f"{m}batch{n}_{kind}" for n in (1, 16) for m, kind in
                         [("", "lean"), ("visual_", "lean"), ("", "transformers_forward")]}
    assert all(len(v) == 2 for v in runs.values())
    for n in (1, 16):
        pose, visual = runs[f"batch{n}_lean"], runs[f"visual_batch{n}_lean"]
        assert within(written["world_model_fps"][f"batch{n}"], pose, rounding=0.01)
        assert within(written["visual_world_model_fps"][f"batch{n}"], visual, rounding=0.01)
        # visual over pose (not inverted), from the rounds it claims
        assert ratio_within(written["visual_vs_pose_fps"][f"batch{n}"], visual, pose, rounding=0.002)
        for model in ("pose", "visual"):
            share = written["step_time_shares"][f"{model}_batch{n}"]
            assert set(share) == {"tokenizer_decode", "task_signal", "lm_decoding_and_rest"}
            assert all(0 < v <= 1 for v in share.values()) and abs(sum(share.values()) - 1) < 0.005
    assert written["visual_meets_target_batch1"] == (written["visual_vs_pose_fps"]["batch1"] >= 0.25)
    assert written["gym_pusht_fps_64px"] > 0


def test_pusht_planning_batch1_side_rolls_the_recorded_sets_one_row_at_a_time():
    import numpy as np

    bench = load_script("pusht_planning")  # benchmarks/pusht_planning.py: the planner batched beside batch 1

    class Fake:  # a planner model that records the batch of every rollout call
        name, frame_skip = "fake", 4

        def __init__(self):
            self.batches = []

        def rollout(self, start, actions):
            self.batches.append(len(actions))
            return np.asarray(actions)[..., [0, 1, 0, 1, 0]] + start

    script = [np.arange(24, dtype=float).reshape(4, 3, 2)]
    one = bench.RecordedModel(Fake(), batch=1, script=script)
    states = one.rollout(0.5, np.zeros((4, 3, 2)))  # asks for other sets: the recorded ones are rolled
    assert one.model.batches == [1, 1, 1, 1] and one.frames == 12 and not one.followed
    batched = bench.RecordedModel(Fake(), batch=None)
    assert np.array_equal(batched.rollout(0.5, script[0]), states) and batched.model.batches == [4]
    assert batched.frames == 12 and np.array_equal(batched.calls[0], script[0])
    assert bench.difference(batched.states, one.states) == (0.0, 0)
    moved = [states + np.where(np.arange(5) == 4, np.nan, 0.25)]  # one value off by 0.25, one read on one side
    assert bench.difference(moved, one.states) == (0.25, 12)


def test_pusht_planning_times_batched_and_batch1_planning_at_equal_work(tmp_path):
    pytest.importorskip("gym_pusht", reason="gym-pusht is the benchmark's oracle model")
    bench = load_script("pusht_planning")
    out = tmp_path / "pusht_planning.json"
    result = bench.main(["--quick", "--samples", "3", "--repeats", "2", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(result))
    assert written["command"].startswith("python benchmarks/pusht_planning.py --quick")
    assert written["settings"]["model"] == "learned:pusht_pose_base" and written["batched_rows"] == 3
    planner = written["settings"]["planner"]
    assert written["frames_per_decision"] == planner["samples"] * planner["iterations"] * planner["horizon"] == 6
    starts = len(written["settings"]["starts"])
    checks = written["checks"]
    # equal work: the same frames per round on both sides, the batched search the same in every round
    assert checks["equal_frames"] and checks["frames_per_round"] == starts * 6
    assert checks["batched_search_repeats_exactly"]
    assert checks["max_state_difference_batch1_vs_batched"] >= 0
    rates = {}
    for side in ("batched", "batch1"):
        figures = written[side]
        assert figures["frames_per_round"] == [starts * 6] * 2
        rounds = figures["rounds"]
        assert within(figures["decisions_per_s"], [starts / r["seconds"] for r in rounds], rounding=1e-4)
        rates[side] = [r["frames"] / r["world_seconds"] for r in rounds]
        assert within(figures["model_frames_per_s"], rates[side], rounding=0.01)
        assert all(r["world_seconds"] <= r["rollout_seconds"] <= r["seconds"] for r in rounds)
    # batched over batch 1 (not inverted), from the rounds it claims
    assert ratio_within(written["batched_over_batch1"]["model_frames_per_s"], rates["batched"], rates["batch1"],
                        rounding=0.002)
    paired = [b / o for b, o in zip(rates["batched"], rates["batch1"])]  # the same round's two sides
    assert within(written["batched_over_batch1_paired_rounds"]["model_frames_per_s"], paired, rounding=0.002)
    assert written["gym_pusht"]["decisions_per_s"] > 0 and len(written["gym_pusht"]["rounds"]) == 2


def test_textgame_env_compares_todays_code_at_equal_work(tmp_path):
    bench = load_script("textgame_env")
    out = tmp_path / "textgame_env.json"
    result = bench.main(["--steps", "1", "--num-envs", "2", "--vec-steps", "1", "--rounds", "2", "--out", str(out)])
    written = json.loads(out.read_text())
    assert result == 0 and "baseline_rev" not in written
    # (comparison, side A, side B, world steps per round): 2 worlds x 1 step, 1 env x 1 step
    for case, a, b, work in ((written["cases"]["batch2"], "loop", "vector", 2),
                             (written["lean_decode_batch1"], "transformers_forward", "lean", 1)):
        assert case["identical_predictions"] and case["predicted_steps_per_round"] == work, (a, b)
        assert len(case[f"{a}_seconds"]) == len(case[f"{b}_seconds"]) == 2
        assert ratio_within(case[f"speedup_{b}_vs_{a}"], case[f"{a}_seconds"], case[f"{b}_seconds"], rounding=0.01)
    assert written["batched_speedup"] == written["vector_env_batch2_vs_loop_of_2"] == written["cases"]["batch2"][
        "speedup_vector_vs_loop"]
    assert written["world_model_env_steps_per_s_batch1"] == written["lean_decode_batch1"]["lean_steps_per_s"]


@pytest.mark.parametrize("name", ["textgame_env", "web_env"])
def test_env_benchmarks_refuse_the_removed_baseline_rev(name, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # web_env imports textgame_env's driver
    bench = load_script(name)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--baseline-rev", "a5bb902"])
    assert exit_info.value.code == 2 and "--baseline-rev" in capsys.readouterr().err


def test_video_data_memory_compares_stored_once_and_on_demand_with_what_they_replaced(tmp_path):
    pytest.importorskip("gym_pusht")
    bench = load_script("video_data_memory")
    out = tmp_path / "mem.json"
    result = bench.main(["--episodes", "4", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(result))
    frames = written["frames_bytes"]
    # the dense array is exactly windows x 16 steps x 64 x 64 x 3 bytes; the store holds fewer frames than that
    assert frames["per_window"] == written["windows"] * 16 * 64 * 64 * 3
    assert frames["frames_ratio"] == frames["per_window"] / frames["stored_once"] > 1
    ex = written["examples_bytes"]
    assert ex["examples_ratio"] == ex["eager_list"] / ex["on_demand"] > 1
    assert written["examples"] > written["windows"] and written["drawn"] == 32
    assert all(v > 0 for v in written["batch_draw_seconds"].values())
