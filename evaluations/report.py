"""Regenerate the README's headline tables and docs/results.md from what the evaluation and benchmark
scripts wrote.

    python evaluations/report.py                      # rewrites both, between their markers
    python evaluations/report.py --print              # prints docs/results.md's generated section instead
    python evaluations/report.py --print --headline   # prints the README's headline tables instead
    python evaluations/report.py --only benchmarks    # rewrites only the benchmark subsection of docs/results.md

Run it from the root of a clone (or pass --root). Every number comes from a file under evaluations/results/
(written by evaluations/*.py) or benchmarks/results/ (written by benchmarks/*.py), and each table names its
source. The only arithmetic here is the headline tables' 95% intervals, taken with the project's own seeded
bootstrap (`rlvr_sim.metrics.stats`) over the per-item scores those files hold, as the scripts take theirs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from rlvr_sim.metrics.stats import bootstrap_ci, paired_gain

START, END = "<!-- results:start -->", "<!-- results:end -->"
HEADLINE_START, HEADLINE_END = "<!-- headline:start -->", "<!-- headline:end -->"
README, RESULTS_PAGE = Path("README.md"), Path("docs/results.md")
SECTIONS = [  # (results file under evaluations/results/, heading, script that writes it)
    ("textgame.md", "Text-game world model (Table 1 style)", "evaluations/textgame.py"),
    ("video.md", "Video world model on PushT (Table 3 style)", "evaluations/video.py"),
    ("web.md", "Web world model (Table 2 style, greedy decoding)", "evaluations/web.py"),
    ("web_onpolicy/web.md", "Web world model on the agent's own transitions (on-policy test split, greedy)", "evaluations/web.py --data data/web_onpolicy --out evaluations/results/web_onpolicy"),
    ("web_sampled/web.md", "Web world model (sampled decoding, T=1)", "evaluations/web.py --temperature 1.0 --out evaluations/results/web_sampled"),
    ("web_agent.md", "MPC web agent on the local site", "evaluations/web_agent.py"),
    ("web_decisions.md", "Web world models as MPC lookahead, on the agent's own states", "evaluations/web_agent.py --decisions"),
    ("web_agent_seed10000/web_agent.md", "Web MPC agents, a second draw of 240 episodes (seeds 10000 on)", "evaluations/web_agent.py --agents policy / mpc-sft-gated / mpc-rlvr-gated --seed 10000 --repeats 10 --policy-temperature 2.0 --out evaluations/results/web_agent_seed10000 (--append)"),
    ("web_agent_pooled/web_agent.md", "Web MPC agents, both draws pooled (480 episodes)", "evaluations/web_agent.py --pool evaluations/results evaluations/results/web_agent_seed10000 --out evaluations/results/web_agent_pooled"),
    ("web_decisions_gate/web_decisions.md", "Web lookahead gated by the world model's confidence, on decision states apart from the success-rate runs'", "evaluations/web_agent.py --decisions --seed 20000 --out evaluations/results/web_decisions_gate"),
    ("web_agent_sampled/web_agent.md", "MPC web agent, world models sampled at T=1", "evaluations/web_agent.py --wm-temperature 1.0 --out evaluations/results/web_agent_sampled"),
    ("real2sim_pusht/real2sim.md", "Real2Sim on PushT (rollout rates)", "evaluations/real2sim.py --rollout"),
    ("video_visual_pusht.md", "Visual world model on PushT (learned keypoint tokenizer)", "evaluations/video_visual.py --data data/pusht2 --base pusht_visual_base --rlvr pusht_visual_rlvr --pose pusht_pose_base --out evaluations/results/video_visual_pusht"),
    ("video_visual_pusht_mixed.md", "Visual world models on PushT by token layout (absolute, mixed)", "evaluations/video_visual.py --data data/pusht2 --base pusht_visual_mixed --compare \"absolute MLE=pusht_visual_base\" --compare \"absolute RLVR=pusht_visual_rlvr\" --pose pusht_pose_base --windows 128 --best-of 4 --starts 16 --threads 2 --out evaluations/results/video_visual_pusht_mixed"),
    ("video_visual_pusht_object.md", "Visual PushT world model with the object frame on attached points", "evaluations/video_visual.py --data data/pusht2 --base pusht_visual_object --compare \"attached points, no object frame (pusht_visual_mixed)=pusht_visual_mixed\" --windows 128 --best-of 0 --starts 16 --threads 2 --out evaluations/results/video_visual_pusht_object"),
    ("video_visual_pusht_mixed_rlvr.md", "Visual PushT world model on attached points: RLVR with the paper's -(MAE + LPIPS) reward vs its MLE base", "evaluations/video_visual.py --data data/pusht2 --base pusht_visual_mixed --rlvr pusht_visual_mixed_rlvr --windows 128 --best-of 4 --starts 16 --threads 1 --out evaluations/results/video_visual_pusht_mixed_rlvr"),
    ("video_visual_pusht_perceptual.md", "Visual world model on PushT, RLVR with the paper's -(MAE + LPIPS) reward", "evaluations/video_visual.py --data data/pusht2 --base pusht_visual_base --rlvr pusht_visual_rlvr_perceptual --windows 128 --best-of 4 --starts 16 --threads 2 --out evaluations/results/video_visual_pusht_perceptual"),
    ("keypoint_attachment_border.md", "Are the learned PushT points attached to the T? (each read in the T's own frame)", "evaluations/keypoint_attachment.py --tokenizer assets/pusht_visual/tokenizer_border --data data/pusht2 --out evaluations/results/keypoint_attachment_border"),
    ("video_visual_arm.md", "Visual world model of the MuJoCo arm", "evaluations/video_visual.py --data data/arm --base arm_visual_base --rlvr arm_visual_rlvr --windows 64 --best-of 4 --starts 16 --threads 1 --out evaluations/results/video_visual_arm"),
    ("video_visual_arm_tail/arm_tail.md", "Visual arm world model: the tip error per window behind the mean", "evaluations/video_visual_tail.py --data data/arm --checkpoints arm_visual_base,arm_visual_rlvr --windows 400"),
    ("pusht_planning.md", "Planning in PushT: goal 25 env steps ahead (stable-worldmodel's protocol)", "evaluations/pusht_planning.py --offsets 25 (the exact command heads the table)"),
    ("pusht_planning_50/pusht_planning.md", "Planning in PushT: goal 50 env steps ahead", "evaluations/pusht_planning.py --offsets 50 (the exact command heads the table)"),
    ("pusht_planning_ordinal/pusht_planning.md", "Planning in PushT with the value-linear-embedding model (pusht_pose_ordinal)", "evaluations/pusht_planning.py --rows mpc:learned:pusht_pose_ordinal,... --resume on a copy of the 25-step table's episode log (the exact command heads the table; its folder is copied here)"),
    ("pusht_planning_context/pusht_planning.md", "Planning in PushT with pusht_pose_ordinal read by its pose tokens, 3 past frames as context (how the named Real2Sim planners plan)", "evaluations/pusht_planning.py --readout pose --context-steps 3 (the exact command heads the table; its folder is copied here)"),
    ("pusht_planning_max/pusht_planning.md", "Planning in PushT with a cost shaped like the success test (each step the larger of its position and angle terms, best + 0.5 x last step)", "evaluations/pusht_planning.py --cost-combine max --last-weight 0.5 --readout pose --context-steps 3 (the exact command heads the table; rows run as two processes into copies of one log, merged with --resume)"),
    ("pusht_planning_cost/oracle_sum/pusht_planning.md", "PushT planning cost, 150 other held-out goals (seed 1): the physics planners with the summed cost", "evaluations/pusht_planning.py --goals 150 --seed 1 --stride 2 --rows mpc:gym-pusht,mpc:mujoco"),
    ("pusht_planning_cost/oracle_max/pusht_planning.md", "PushT planning cost, the same 150 goals: the physics planners with the success-shaped cost", "evaluations/pusht_planning.py --goals 150 --seed 1 --stride 2 --rows mpc:gym-pusht,mpc:mujoco --cost-combine max --last-weight 0.5"),
    ("pusht_planning_cost/learned_sum/pusht_planning.md", "PushT planning cost, the same 150 goals: the learned planner (pusht_pose_ordinal, pose tokens, 3 frames of context) with the summed cost", "evaluations/pusht_planning.py --goals 150 --seed 1 --stride 2 --rows mpc:learned:pusht_pose_ordinal --readout pose --context-steps 3"),
    ("pusht_planning_cost/learned_max/pusht_planning.md", "PushT planning cost, the same 150 goals: the learned planner with the success-shaped cost", "evaluations/pusht_planning.py --goals 150 --seed 1 --stride 2 --rows mpc:learned:pusht_pose_ordinal --readout pose --context-steps 3 --cost-combine max --last-weight 0.5"),
    ("pusht_plan_ranking_ordinal/pusht_plan_ranking.md", "Do PushT models rank a planner's candidate plans as gym-pusht does?", "evaluations/pusht_plan_ranking.py --goals 32 --models learned:pusht_pose_ordinal,learned:pusht_pose_base --out evaluations/results/pusht_plan_ranking_ordinal"),
    ("pusht_token_inputs/pusht_token_inputs.md", "The same T model, its inputs as numbers or as tokens", "evaluations/pusht_token_inputs.py --goals 24 --out evaluations/results/pusht_token_inputs"),
    ("real2sim_visual/real2sim.md", "Real2Sim on PushT with the visual world models", "evaluations/real2sim.py --rollout --sims real,learned:pusht_pose_base,learned:pusht_visual_base,learned:pusht_visual_mixed,learned:pusht_visual_object --out evaluations/results/real2sim_visual"),
    ("real2sim_visual_seed1/real2sim.md", "Real2Sim on PushT with the visual world models, a second draw of starts (seed 1)", "evaluations/real2sim.py --rollout --sims real,learned:pusht_visual_object,learned:pusht_visual_mixed --seed 1 --out evaluations/results/real2sim_visual_seed1"),
    ("judge_fit/judge_fit.md", "The judge's T check on held-out real frames", "evaluations/judge_fit.py --data data/pusht2 --out evaluations/results/judge_fit"),
    ("video_reward/video_reward.md", "The learned PushT env's reward and termination against gym-pusht's, along the same actions", "evaluations/video_reward.py --checkpoints pusht_pose_base,pusht_pose_rlvr,pusht_visual_mixed,pusht_visual_object --out evaluations/results/video_reward --quiet"),
    ("video_reward_calibration/calibration.md", "Success thresholds of the pixel judge and of pose tokens, calibrated on gym-pusht's true frames", "evaluations/video_reward.py --calibrate --seed 7 --sequences 192 --out evaluations/results/video_reward_calibration"),
    ("real2sim_tokenizer_ceiling/real2sim.md", "Real2Sim: the ceiling each tokenizer puts on a learned simulator (gym-pusht's dynamics, every frame as the tokenizer draws it back)", "evaluations/real2sim.py --rollout --sims real,tokenizer:pusht_visual_mixed,tokenizer:pusht_pose_base,tokenizer:assets/pusht_visual/tokenizer_k16 --episodes 20 --seed 0 --no-ray --quiet --resume --out evaluations/results/real2sim_tokenizer_ceiling"),
]


def _interval(low: float, high: float, spec: str) -> str:
    return f"[{low:{spec}}, {high:{spec}}]"


def textgame_headline(data: dict) -> list[str]:
    """Exact-match accuracy on held-out states: copying the current state, SFT, RLVR; Overall with its interval.

    Copying the current state is right exactly on the unchanged transitions, so its row is the file's own counts.
    """
    name, block = next(iter(data["datasets"].items()))
    rows = dict(block["rows"])
    n, n_unchanged = block["n"], next(iter(rows.values()))["n_unchanged"]
    lines = [f"| Text game (`evaluations/textgame.py`): {name}, {n} | Unchanged % | Changed % | Overall % [95% CI] |",
             "|---|---:|---:|---:|"]
    baseline = rows.pop("no change (copy the state)", None)  # the evaluation's own row where the file has one
    table = [("copy the current state (trivial)", 100.0, 0.0, n_unchanged) if baseline is None else
             ("copy the current state (trivial)", baseline["unchanged"], baseline["changed"], round(baseline["overall"] * n / 100))]
    table += [(model, row["unchanged"], row["changed"], round(row["overall"] * n / 100)) for model, row in rows.items()]
    for model, unchanged, changed, correct in table:
        flags = np.array([100.0] * correct + [0.0] * (n - correct))
        low, high = bootstrap_ci(flags)
        lines.append(f"| {model} | {unchanged:.2f} | {changed:.2f} | **{flags.mean():.2f}** {_interval(low, high, '.1f')} |")
    return lines


def web_headline(data: dict) -> list[str]:
    """Item-change F1 on held-out transitions (greedy): no-change baseline, SFT, RLVR; interval and paired gain."""
    rows = {row["model"]: row for row in data["rows"]}
    sft = np.array(rows["SFT"]["f1_per_transition"])
    n = len(sft)
    lines = [f"| Web (`evaluations/web.py`): {n} held-out transitions, greedy | item-change F1 [95% CI] "
             "| minus SFT, paired [95% CI] |",
             "|---|---:|---:|"]
    for model, row in rows.items():
        scores = np.array(row["f1_per_transition"])
        low, high = bootstrap_ci(scores)
        gain = paired_gain(scores, sft) if model != "SFT" else None
        versus = "–" if gain is None else f"{gain['gain']:+.2f} {_interval(gain['low'], gain['high'], '+.2f')}"
        label = f"{model} (trivial)" if "baseline" in model.lower() else model
        lines.append(f"| {label} | **{row['f1']:.2f}** {_interval(low, high, '.2f')} | {versus} |")
    return lines


VIDEO_ROWS = [  # (row in video.json, label)
    ("copy-last-frame", "copy the last frame (trivial)"),
    ("base (median)", "MLE, median-decoded (what the env serves)"),
    ("RLVR (median)", "RLVR (object reward), median-decoded"),
    ("base", "MLE, sampled at temperature 1"),
    ("RLVR", "RLVR (object reward), sampled at temperature 1"),
]


def video_headline(data: dict) -> list[str]:
    """Open-loop rollout errors under the true actions at horizon 8 (T also at 16), with their intervals."""
    rows = data["rollouts"]["rows"]

    def cell(model: str, horizon: str, key: str, spec: str) -> str:
        value = rows[model][horizon][key]
        return f"{value['mean']:{spec}} {_interval(value['low'], value['high'], spec)}"

    lines = [f"| PushT (`evaluations/video.py`): {data['rollouts']['windows']} held-out windows, horizon 8 | agent px "
             "| T px | T angle deg "
             "| T px at horizon 16 |", "|---|---:|---:|---:|---:|"]
    for model, label in VIDEO_ROWS:
        lines.append(f"| {label} | {cell(model, '8', 'agent_px', '.2f')} | {cell(model, '8', 'block_px', '.2f')} "
                     f"| {cell(model, '8', 'angle_deg', '.1f')} | {cell(model, '16', 'block_px', '.2f')} |")
    sampled, median = data["gains"]["RLVR vs base"], data["gains"]["RLVR (median) vs base (median)"]
    lines.append("\nRLVR minus MLE, paired (positive: RLVR's T error is lower): sampled "
                 f"{sampled['block_px@8']['gain']:+.2f} px {_interval(sampled['block_px@8']['low'], sampled['block_px@8']['high'], '+.2f')}, "
                 f"median-decoded {median['block_px@8']['gain']:+.2f} px {_interval(median['block_px@8']['low'], median['block_px@8']['high'], '+.2f')} at horizon 8.")
    return lines


VISUAL_ROWS = [("copy-last-frame", "copy the last frame (trivial)"),
               ("base", "visual MLE, mixed layout (`pusht_visual_mixed`)"),
               ("pose tokens (PushT)", "pose tokens (`pusht_pose_base`, the env's default)")]


def visual_headline(data: dict) -> list[str]:
    """The learned visual models at horizon 8 (median-decoded as served) by token layout, the trivial baseline and
    the pose model; the T's error also where it truly stayed still."""
    rows, far, still = data["rollouts"], data.get("far_targets", {}), data.get("still_moved", {})
    h = str(max(data["horizons"]))

    def cell(model: str, key: str, spec: str, scale: float = 1.0) -> str:
        v = rows[model][h][key]
        return f"{v['mean'] * scale:{spec}} {_interval(v['low'] * scale, v['high'] * scale, spec)}"

    lines = [f"| PushT, visual (`evaluations/video_visual.py`): {data['windows']} windows, horizon {h} | agent px | T px "
             f"| T px where it stayed ({still.get('still', 0)}) | LPIPS x100 | far targets within 3 px |",
             "|---|---:|---:|---:|---:|---:|"]
    for model, label in VISUAL_ROWS:
        if model in rows:
            reach = f"{far[model]['within_3px_pct']:.1f}%" if model in far else "–"
            stayed = still.get(model, {}).get("still")
            stayed = f"{stayed['mean']:.2f}" if stayed else "–"
            lines.append(f"| {label} | {cell(model, 'agent_px', '.2f')} | {cell(model, 'block_px', '.2f')} "
                         f"| {stayed} | {cell(model, 'lpips', '.1f', 100)} | {reach} |")
    return lines


REAL2SIM_ROWS = [("learned:pusht_pose_base", "pose tokens (`pusht_pose_base`, the env's default)"),
                 ("learned:pusht_visual_mixed", "visual, mixed layout (`pusht_visual_mixed`)"),
                 ("learned:pusht_visual_object", "visual, object frame (`pusht_visual_object`)")]


def real2sim_headline(data: dict) -> list[str]:
    """How the learned PushT simulators rank the policies against gym-pusht (SIMPLER's metrics, with intervals)."""
    metrics, settings = data["metrics"], data["settings"]
    lines = [f"| Real2Sim (`evaluations/real2sim.py --rollout`): {len(data['policies'])} policies x {settings['episodes']} "
             "episodes, rates vs gym-pusht's | Pearson (target >= 0.88) | MMRV (target <= 0.042) |", "|---|---:|---:|"]
    for sim, label in REAL2SIM_ROWS:
        if sim in metrics:
            m = metrics[sim]
            lines.append(f"| {label} | {m['pearson']:.3f} {_interval(*m['pearson_ci95'], '.3f')} "
                         f"| {m['mmrv']:.3f} {_interval(*m['mmrv_ci95'], '.3f')} |")
    return lines


HEADLINES_BY_MODALITY = [  # (results file, renderer, the script that wrote it; each table names it in its header)
    ("textgame.json", textgame_headline, "evaluations/textgame.py"),
    ("web.json", web_headline, "evaluations/web.py"),
    ("video.json", video_headline, "evaluations/video.py"),
    ("video_visual_pusht_mixed.json", visual_headline, "evaluations/video_visual.py"),
    ("real2sim_visual/real2sim.json", real2sim_headline, "evaluations/real2sim.py"),
]


def headline_section(results: Path) -> str:
    """One table per modality (trivial baseline, MLE/SFT, RLVR, with intervals) from the committed results."""
    parts = ["Generated by `python evaluations/report.py` from `evaluations/results/*.json`; every table: "
             "[docs/results.md](docs/results.md)."]
    for name, render, _ in HEADLINES_BY_MODALITY:
        path = results / name
        if path.exists():
            parts.append("\n".join(render(json.loads(path.read_text()))))
    return "\n\n".join(parts)


def _scalars(node: object, prefix: str = "", depth: int = 0) -> list[tuple[str, object]]:
    if isinstance(node, dict) and depth < 4:
        rows: list[tuple[str, object]] = []
        for key, value in node.items():
            rows += _scalars(value, f"{prefix}.{key}" if prefix else str(key), depth + 1)
        return rows
    if isinstance(node, (int, float, str, bool)) and not (isinstance(node, str) and len(node) > 80):
        return [(prefix, node)]
    return []


def benchmark_table(path: Path, limit: int = 24) -> str:
    data = json.loads(path.read_text())
    rows = [(k, v) for k, v in _scalars(data) if k != "command"]
    lines = [f"`benchmarks/results/{path.name}`" + (f" — `{data['command']}`" if isinstance(data, dict) and "command" in data else ""),
             "", "| figure | value |", "|---|---|"]
    for key, value in rows[:limit]:
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        lines.append(f"| {key} | {shown} |")
    if len(rows) > limit:
        lines.append(f"| ... | {len(rows) - limit} more in the file |")
    return "\n".join(lines)


BENCH_HEADING = "### Benchmarks (headline figures from the JSON files)"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _completion_tokens(side: dict) -> float:
    """Mean completion tokens per sampled answer, over every step of every round."""
    return _mean([t for r in side.get("rounds", []) for t in r.get("mean_completion_tokens_per_step", [])])


def _fmt(value: object, spec: str, suffix: str = "") -> str:
    """A figure formatted with `spec` (plus `suffix`), or a dash where the file does not have it."""
    return format(value, spec) + suffix if isinstance(value, (int, float)) else "–"


def _grpo_vs_trl(data: dict) -> list[str]:
    lines = ["| shape | length | prompts x group | prompt tokens | max new tokens | completion tokens ours / TRL "
             "| s/step ours | s/step TRL | TRL / ours (s/step) | tokens/s ours | tokens/s TRL | ours / TRL (tokens/s) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["results"]:
        ours, trl = r["ours"], r["trl"]
        lines.append(f"| {r['name']} | {r.get('variant', 'natural_stop')} | {r['prompts']} x {r['group_size']} "
                     f"| {r['prompt_tokens']} | {r['max_new_tokens']} "
                     f"| {_completion_tokens(ours):.1f} / {_completion_tokens(trl):.1f} "
                     f"| {ours['median_seconds_per_step']:.2f} | {trl['median_seconds_per_step']:.2f} "
                     f"| **{r['ratio_trl_over_ours']:.2f}x** | {_fmt(ours.get('tokens_per_second'), '.0f')} "
                     f"| {_fmt(trl.get('tokens_per_second'), '.0f')} "
                     f"| {_fmt(r.get('tokens_per_second_ratio_ours_over_trl'), '.2f', 'x')} |")
    lines.append(f"\nMedian seconds per GRPO step and completion tokens per second over the timed steps "
                 f"({data.get('threads', '?')} thread, torch {data.get('torch', '?')}, TRL {data.get('trl', '?')}); "
                 "ratios > 1 mean ours is faster. `fixed_length`: no stop on either side, equal tokens per step; "
                 "`natural_stop`: both stop at <eos>.")
    return lines


def _sampler(data: dict) -> list[str]:
    lines = ["| shape | length | prompts x group | prompt tokens | new tokens | tokens ours / `generate` "
             "| tokens/s ours | tokens/s `generate` | ours / `generate` (tokens/s) | lean decode step / transformers "
             "forward | matmul + attention share of ours |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["results"]:
        ours, gen = r["ours"], r["generate"]
        budget = r.get("generated_tokens", r.get("token_budget"))
        profile = r.get("profile_ours") or {}
        share = profile.get("matmul_plus_attention_share")
        lines.append(f"| {r['shape']} | {r.get('variant', 'fixed_length')} | {r['prompts']} x {r['group_size']} "
                     f"| {r['prompt_tokens']} | {r['new_tokens']} "
                     f"| {ours.get('generated_tokens', budget)} / {gen.get('generated_tokens', budget)} "
                     f"| {ours['tokens_per_second']:.0f} | {gen['tokens_per_second']:.0f} "
                     f"| **{r['speedup_ours_over_generate']:.2f}x** | {_fmt(r.get('speedup_lean_decode'), '.2f', 'x')} "
                     f"| {_fmt(None if share is None else 100 * share, '.0f', '%')} |")
    lines.append(f"\nGenerated tokens per second, median of {data.get('repeats', '?')} repeats "
                 f"({data.get('torch_threads', '?')} thread, torch {data.get('torch', '?')}). `fixed_length`: no stop "
                 "token on either side (equal tokens); `natural_stop`: the same stop ids on both sides. \"lean decode "
                 "step / transformers forward\": ours against ours with its decode steps through transformers' Llama "
                 "forward (`RLVR_SIM_LEAN_DECODE=0`), the same samples. The last column is the share of our sampler's op self-time (`torch.profiler`) in matrix multiplies and "
                 "attention, the model's own work.")
    return lines


def _textgame_env(data: dict) -> list[str]:
    key = next(k for k in data if k.startswith("world_model_steps_per_s_batch"))
    batch = key.removeprefix("world_model_steps_per_s_batch")
    return ["| env | steps/s |", "|---|---:|",
            f"| ground-truth text game | {data['ground_truth_env_steps_per_s']:.0f} |",
            f"| learned world model, batch 1 | {data['world_model_env_steps_per_s_batch1']:.2f} |",
            f"| learned world model, batch {batch} (world steps of all {batch}) | {data[key]:.2f} |",
            f"\nBatch {batch} over batch 1 (the same {batch} worlds as single envs in a loop, equal work): "
            f"**{data['batched_speedup']:.2f}x** ({data.get('parameters', '?')} parameters, "
            f"{data.get('torch_threads', '?')} thread).", "", *_env_cases(data)]


def _env_cases(data: dict) -> list[str]:
    """The side-by-side rows of an LM world-model env benchmark (benchmarks/textgame_env.py: equal work, one run):
    at batch 1 transformers' forward against the lean decode step, at batch N a loop of N single envs against
    the vector env of N."""
    lines = ["| case | A -> B (equal work, one run) | steps/s A | steps/s B | B / A | same predictions |",
             "|---|---|---:|---:|---:|---|"]
    rows = [("batch1", "one env: decode steps through transformers' forward -> the lean decode step",
             data.get("lean_decode_batch1"), "transformers_forward", "lean")]
    rows += [(name, f"{name.removeprefix('batch')} single envs in a loop -> `gym.make_vec` of "
              f"{name.removeprefix('batch')} (one batched generation per step)", case, "loop", "vector")
             for name, case in data.get("cases", {}).items()]
    for name, label, case, a, b in rows:
        if case:
            lines.append(f"| {name} | {label} | {case[f'{a}_steps_per_s']:.3f} | {case[f'{b}_steps_per_s']:.3f} | "
                         f"**{case[f'speedup_{b}_vs_{a}']:.2f}x** | "
                         f"{'yes' if case.get('identical_predictions') else 'no'} |")
    return lines


def _web_env(data: dict) -> list[str]:
    key = next(k for k in data if k.startswith("world_model_steps_per_s_batch"))
    batch = key.removeprefix("world_model_steps_per_s_batch")
    bound = data.get("prompt_lookup_bound", {})
    lines = _env_cases(data)
    lines.append(f"\nBatch {batch} over batch 1 (the same {batch} worlds as single envs in a loop, equal work): "
                 f"**{data['batched_speedup']:.2f}x**. Prompt-lookup bound: "
                 f"{bound.get('tokens_per_forward', float('nan')):.2f} answer tokens per forward "
                 f"({bound.get('answers', '?')} answers). {data.get('decoding', '')}; {data.get('parameters', '?')} "
                 f"parameters, {data.get('torch_threads', '?')} thread.")
    return lines


def _video_env(data: dict) -> list[str]:
    fps = data["world_model_fps"]
    slow = data.get("world_model_fps_transformers_forward", {})
    lines = ["| env | frames/s | frames/s, decode steps through transformers' forward |", "|---|---:|---:|"]
    lines += [f"| world model, batch {key.removeprefix('batch')} (KV cache) | {value:.1f} | {_fmt(slow.get(key), '.1f')} |"
              for key, value in fps.items()]
    lines.append(f"| gym-pusht (64 px) | {data['gym_pusht_fps_64px']:.1f} | |")
    lines.append(f"\nBatch 16 over batch 1: **{data['batch16_vs_batch1']:.2f}x**; "
                 f"gym-pusht over the batch-16 world model: {data['gym_pusht_vs_world_model_batch16']:.2f}x "
                 f"({data.get('steps', '?')} steps, {data.get('threads', '?')} thread).")
    return lines


def _viewer_fps(data: dict) -> list[str]:
    return ["| viewer (play mode, headless, no frame cap) | value |", "|---|---:|",
            f"| frames/s | **{data['frames_per_second']:.1f}** |", f"| ms per frame | {data['frame_ms']:.1f} |",
            f"| of which world-model step, ms | {data['world_model_step_ms']:.1f} |",
            f"| of which ground-truth step, ms | {data['ground_truth_step_ms']:.1f} |",
            f"| of which scoring, ms | {data['scoring_ms']:.1f} |",
            f"\n{data.get('frames', '?')} frames after {data.get('warmup', '?')} warm-up, model `{data.get('model', '?')}`."]


def _gpu(data: dict) -> list[str]:
    """scripts/gpu_check.sh's report: one row per stage (speed, peak memory), then the sampler on the device."""
    gib = 2 ** 30
    lines = [f"Device: {data['device']}, {data['dtype']}, torch {data['torch']}, CUDA {data.get('cuda')}; "
             f"failed stages: {', '.join(sorted(data['errors'])) or 'none'}.", "",
             "| stage | s/step | tokens/s | peak GiB |", "|---|---:|---:|---:|"]
    for name, key in (("sft", "tokens_per_second"), ("sft_gradient_checkpointing", None),
                      ("grpo", "generated_tokens_per_second")):
        stage = data.get(name)
        if stage:
            peak = stage.get("peak_memory_allocated_bytes")
            lines.append(f"| {name} | {stage['seconds_per_step']:.3f} | {_fmt(stage.get(key) if key else None, ',.0f')} "
                         f"| {_fmt(None if peak is None else peak / gib, '.2f')} |")
    exact = data.get("sampler_exactness_on_device") or {}
    if exact:
        lines.append("\nSampler log-probs vs a plain forward on the device (max abs diff): " + ", ".join(
            f"{label} {row['max_abs_diff_sampler_vs_uncached']:.1e}" for label, row in exact.items()) + ".")
    rows = (data.get("sampler_on_device") or {}).get("results", [])
    if rows:
        lines += ["", "| sampler shape (on the device) | tokens/s ours | tokens/s `generate` | ours / `generate` "
                      "| lean decode step / transformers forward |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {r['shape']} ({r['prompts']} x {r['group_size']}, {r['prompt_tokens']}+{r['new_tokens']}) "
                  f"| {r['ours']['tokens_per_second']:,.0f} | {r['generate']['tokens_per_second']:,.0f} "
                  f"| **{r['speedup_ours_over_generate']:.2f}x** | {_fmt(r.get('speedup_lean_decode'), '.2f', 'x')} |"
                  for r in rows]
    return lines


def _grpo_lean_decode(data: dict) -> list[str]:
    rows = [f"| {label} | {data[key]['median_seconds_per_step']:.3f} | {data[key]['generated_tokens_per_second']:,.0f} |"
            for label, key in (("lean decode step", "lean"), ("transformers forward", "transformers_forward"))]
    return [f"GRPO on {data['device']}, `{data['preset']}`, {data['prompts']} x {data['group_size']}, precision "
            f"{data['precision']}:", "", "| decode steps | s/step | generated tokens/s |", "|---|---:|---:|", *rows,
            f"\nLean over transformers: **{data['speedup_lean']:.2f}x** (same response lengths: "
            f"{'yes' if data['same_response_lengths'] else 'no'}; {data['rounds']} alternating runs each)."]


def _decode_floor(data: dict) -> list[str]:
    one, many = data["batch1_decode_step_ms"], data["batch_scaling_decode_step_ms"]
    compiled = one.get("torch_compile") or {}
    rows = many["rows"]
    lines = ["| decode step, batch 1 (text-game model) | ms |", "|---|---:|",
             f"| transformers' forward | {one['transformers_forward']:.3f} |",
             f"| lean step | {one['lean']:.3f} |"]
    if "ms_per_step" in compiled:
        lines.append(f"| lean step under torch.compile (compiled in {compiled['compile_seconds']:.0f} s) "
                     f"| {compiled['ms_per_step']:.3f} |")
    lines.append(f"| its matrix multiplies alone | {one['matmuls_only']:.3f} |")
    chunks = ", ".join(f"{w} tokens {r:.2f}x" for w, r in one["chunk_cost_vs_one_token"].items())
    lines.append(f"\nMatrix multiplies are **{one['matmul_share_of_lean_step']:.0%}** of the lean step; "
                 f"torch.compile: {_fmt(compiled.get('speedup_vs_lean'), '.2f', 'x')} over it. One step feeding "
                 f"a chunk costs, against one token: {chunks}.")
    lines.append(f"\nBatching (video model): a decode step of {rows} rows gives "
                 f"**{many[f'rows_per_second_{rows}_over_1']:.2f}x** the rows/s of 1 row; if everything but its "
                 f"matrix multiplies were free at {rows} rows: {many[f'bound_{rows}_over_1_if_only_matmuls_remained_at_{rows}']:.1f}x "
                 f"(matrix multiplies at {many[f'matmul_flops_rate_gflops_at_{rows}']:.0f} GFLOP/s).")
    return lines


# headline figures per benchmark file (stem); any other JSON gets the generic figure/value table
HEADLINES = {"decode_floor": _decode_floor, "gpu": _gpu,
             "grpo_lean_decode": _grpo_lean_decode, "grpo_lean_decode_gpu": _grpo_lean_decode,
             "grpo_vs_trl": _grpo_vs_trl, "sampler": _sampler, "textgame_env": _textgame_env,
             "video_env": _video_env, "viewer_fps": _viewer_fps, "web_env": _web_env}


def benchmark_headlines(path: Path) -> str:
    """The results of one benchmark JSON (not its metadata), with the command that wrote it."""
    render = HEADLINES.get(path.stem)
    if render is None:
        return benchmark_table(path)
    data = json.loads(path.read_text())
    command = f" — `{data['command']}`" if "command" in data else ""
    return "\n".join([f"`benchmarks/results/{path.name}`{command}", "", *render(data)])


def benchmark_section(root: Path) -> str:
    bench_dir = root / "benchmarks" / "results"
    benches = sorted(bench_dir.glob("*.json")) if bench_dir.exists() else []
    if not benches:
        return ""
    return "\n\n".join([BENCH_HEADING, "Measured on a shared, loaded 2-core CPU (`gpu.json`: on a GPU): the ratios "
                         "are meaningful, the CPU's absolute figures are not. Every figure is read from the JSON file named above its table.",
                         *(benchmark_headlines(p) for p in benches)])


def build_section(root: Path) -> str:
    """docs/results.md's generated part: every committed result table, then the benchmark headlines."""
    parts = ["Generated by `python evaluations/report.py` from the files each script writes; do not edit by hand."]
    for name, heading, script in SECTIONS:
        md = root / "evaluations" / "results" / name
        if md.exists():
            parts += [f"### {heading}", f"Written by `{script}` (`evaluations/results/{name}`).", "", md.read_text().strip()]
    bench = benchmark_section(root)
    return "\n\n".join(parts + ([bench] if bench else []))


def _replace_benchmarks(results: str, root: Path) -> str:
    """The results section with only its benchmark subsection (the last one) regenerated."""
    start = results.find("### Benchmarks")
    kept = results[:start].rstrip("\n") if start >= 0 else results.rstrip("\n")
    return f"{kept}\n\n{benchmark_section(root)}\n"


def _rewrite(path: Path, start: str, end: str, section: str | None, update=None) -> None:
    """Replace what lies between the `start` and `end` markers of `path` (or apply `update` to it)."""
    text = path.read_text()
    if start not in text or end not in text:
        raise SystemExit(f"{path} lacks the {start} / {end} markers")
    head, rest = text.split(start, 1)
    current, tail = rest.split(end, 1)
    body = update(current.strip("\n")) if update else section + "\n"
    path.write_text(f"{head}{start}\n{body}{end}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--print", action="store_true", help="print instead of rewriting the files")
    parser.add_argument("--headline", action="store_true", help="with --print: the README's headline tables")
    parser.add_argument("--only", choices=["benchmarks"], help="regenerate only this subsection of docs/results.md")
    parser.add_argument("--root", type=Path, default=Path("."), help="the clone's root (default: the current folder)")
    args = parser.parse_args(argv)
    root = args.root
    if not (root / "evaluations" / "results").is_dir():
        parser.error(f"{root.resolve()} has no evaluations/results: run from the root of a clone or pass --root")
    results = root / "evaluations" / "results"
    if args.print:
        print(headline_section(results) if args.headline else benchmark_section(root) if args.only else build_section(root))
        return 0
    if args.only:
        _rewrite(root / RESULTS_PAGE, START, END, None, update=lambda current: _replace_benchmarks(current, root))
        return 0
    _rewrite(root / RESULTS_PAGE, START, END, build_section(root))
    _rewrite(root / README, HEADLINE_START, HEADLINE_END, headline_section(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
