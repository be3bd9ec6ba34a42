"""Real2Sim's report: rates with bootstrap intervals, Pearson / MMRV per simulator, the judge's agreement with
the true state, out-of-support shares, and their markdown tables and plots.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rlvr_sim.evaluations.real2sim_episodes import format_level

from rlvr_sim.metrics.real2sim import mean_maximum_rank_violation, pearson_correlation
from rlvr_sim.metrics.support import SUPPORT_FILE, SUPPORT_FLAG_SHARE


def success_matrix(results: Sequence[dict[str, Any]], sims: Sequence[str], policies: Sequence[str]) -> np.ndarray:
    """(sims, policies, episodes) 0/1 judged success, episodes in index order."""
    episodes = sorted({r["episode"] for r in results})
    column = {e: i for i, e in enumerate(episodes)}
    matrix = np.full((len(sims), len(policies), len(episodes)), np.nan)
    sim_index, policy_index = {s: i for i, s in enumerate(sims)}, {p: i for i, p in enumerate(policies)}
    for r in results:
        matrix[sim_index[r["sim"]], policy_index[r["policy"]], column[r["episode"]]] = float(r["success"])
    if np.isnan(matrix).any():
        raise ValueError("missing rollouts: every policy needs every episode in every simulator")
    return matrix


def _interval(samples: np.ndarray) -> list[float]:
    return [float(np.percentile(samples, 2.5)), float(np.percentile(samples, 97.5))]


def summarise(
    results: Sequence[dict[str, Any]], sims: Sequence[str], policies: Sequence[str], boot: int = 2000, seed: int = 0,
    flag_share: float = SUPPORT_FLAG_SHARE,
) -> dict[str, Any]:
    """Per-simulator success rates (bootstrap 95% intervals over episodes) and Pearson/MMRV against `real`
    (intervals from resampling episodes jointly: every policy and simulator shares the start states); per
    learned simulator, each policy's mean out-of-support share of steps, flagged above `flag_share`."""
    if sims[0] != "real":
        raise ValueError("the first simulator must be 'real', the reference the others are scored against")
    success = success_matrix(results, sims, policies)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, success.shape[2], size=(boot, success.shape[2]))
    boot_rates = success[:, :, draws].mean(axis=-1)  # (sims, policies, boot)
    rates = {
        sim: {p: {"rate": float(success[s, i].mean()), "ci95": _interval(boot_rates[s, i])} for i, p in enumerate(policies)}
        for s, sim in enumerate(sims)
    }
    metrics = {}
    for s, sim in enumerate(sims[1:], start=1):
        real, simulated = success[0].mean(-1), success[s].mean(-1)
        pearson = [pearson_correlation(boot_rates[s, :, b], boot_rates[0, :, b]) for b in range(boot)]
        mmrv = [mean_maximum_rank_violation(boot_rates[s, :, b], boot_rates[0, :, b]) for b in range(boot)]
        metrics[sim] = {
            "pearson": pearson_correlation(simulated, real), "pearson_ci95": _interval(np.array(pearson)),
            "mmrv": mean_maximum_rank_violation(simulated, real), "mmrv_ci95": _interval(np.array(mmrv)),
        }  # fmt: skip
    judge = {}
    for sim in sims:
        own = [r for r in results if r["sim"] == sim and r["true_success"] is not None]
        if own:
            judge[sim] = {
                "episode_agreement": float(np.mean([r["success"] == r["true_success"] for r in own])),
                "true_success_rate": float(np.mean([r["true_success"] for r in own])),
                "judged_success_rate": float(np.mean([r["success"] for r in own])),
                "frame_agreement": float(np.mean([r["judge_frame_agreement"] for r in own if "judge_frame_agreement" in r])),
                "mean_position_error": float(np.mean([r["judge_position_error"] for r in own if "judge_position_error" in r])),
                "mean_angle_error_deg": float(np.mean([r["judge_angle_error_deg"] for r in own if "judge_angle_error_deg" in r])),
            }
    uncertainty = {
        sim: float(np.mean(values))
        for sim in sims
        if (values := [r["uncertainty"] for r in results if r["sim"] == sim and "uncertainty" in r])
    }
    return {"policies": list(policies), "sims": list(sims), "episodes": int(success.shape[2]), "rates": rates,
            "metrics": metrics, "judge_vs_truth": judge, "uncertainty": uncertainty,
            "support": support_summary(results, sims, policies, flag_share)}  # fmt: skip


def support_summary(results: Sequence[dict[str, Any]], sims: Sequence[str], policies: Sequence[str],
                    flag_share: float = SUPPORT_FLAG_SHARE) -> dict[str, Any]:  # fmt: skip
    """Per learned simulator: available (its checkpoint ships support.npz), each policy's mean share of
    out-of-support steps over its episodes, and the policies above `flag_share` ("flagged")."""
    out = {}
    for sim in sims:
        own = [r for r in results if r["sim"] == sim and "out_of_support" in r]
        if not own:
            continue
        if any(r["out_of_support"] is None for r in own):
            out[sim] = {"available": False}
            continue
        share = {p: float(np.mean([r["out_of_support"] for r in own if r["policy"] == p])) for p in policies}
        out[sim] = {"available": True, "flag_share": flag_share, "out_of_support": share,
                    "flagged": [p for p in policies if share[p] > flag_share]}  # fmt: skip
    return out


def rollout_markdown(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    """Success rates per policy x simulator, Pearson/MMRV per simulator and the judge's agreement, as markdown."""
    sims = summary["sims"]
    task = settings["task"]
    lines = [
        f"PushT near-goal task: block within {task['position_tol']:g} world units and {task['angle_tol_deg']:g} deg of "
        f"the goal pose (pixel judge) within {task['horizon']} model steps of {task['frame_skip']} env steps; "
        f"{summary['episodes']} episodes per policy and simulator, shared start states (seed {settings['seed']}). "
        "Success rate [bootstrap 95% interval over episodes]:",
        "",
        "| policy | " + " | ".join(sims) + " |",
        "|---|" + "---:|" * len(sims),
    ]
    for policy in summary["policies"]:
        cells = [summary["rates"][s][policy] for s in sims]
        lines.append(f"| {policy} | " + " | ".join(f"{c['rate']:.2f} [{c['ci95'][0]:.2f}, {c['ci95'][1]:.2f}]" for c in cells) + " |")
    if summary["metrics"]:  # none with `--sims real` (real success rates only)
        lines += ["", "| simulator vs real | Pearson (higher better) | MMRV (lower better) |", "|---|---:|---:|"]
    for sim, m in summary["metrics"].items():
        lines.append(
            f"| {sim} | {m['pearson']:.3f} [{m['pearson_ci95'][0]:.3f}, {m['pearson_ci95'][1]:.3f}] "
            f"| {m['mmrv']:.3f} [{m['mmrv_ci95'][0]:.3f}, {m['mmrv_ci95'][1]:.3f}] |"
        )
    if summary["judge_vs_truth"]:
        lines += ["", "Pixel judge vs the simulator's true state (same frames):", "",
                  "| simulator | episode success agreement | true success rate | judged success rate | frame agreement "
                  "| mean position error (world units) | mean angle error (deg) |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for sim, j in summary["judge_vs_truth"].items():
            lines.append(
                f"| {sim} | {j['episode_agreement']:.3f} | {j['true_success_rate']:.3f} | {j['judged_success_rate']:.3f} "
                f"| {j['frame_agreement']:.4f} | {j['mean_position_error']:.2f} | {j['mean_angle_error_deg']:.2f} |"
            )
    if summary["uncertainty"]:
        lines += ["", "Mean `info['uncertainty']`: " + ", ".join(f"{s} {u:.4f}" for s, u in summary["uncertainty"].items())]
    lines += support_markdown(summary.get("support", {}), summary["policies"])
    lines += ["", f"Command: `{settings['command']}` ({settings['seconds']:.0f} s, {settings['backend']})", ""]
    return "\n".join(lines)


def support_markdown(support: dict[str, Any], policies: Sequence[str]) -> list[str]:
    """The out-of-support table (markdown lines) of the learned simulators, and which ship no support."""
    have = [sim for sim, s in support.items() if s["available"]]
    lines = []
    if have:
        share = support[have[0]]["flag_share"]
        lines += ["", "Out of the data's support: share of a learned simulator's predicted frames whose judged state is "
                  "farther from every training frame than the checkpoint's calibrated threshold (`support.npz`: the "
                  "99th percentile of held-out real frames' distances, so about 1% for frames like the data); "
                  f"**OUT** marks a policy out of support on more than {100 * share:g}% of its steps (its rates there "
                  "are extrapolation):", "",
                  "| policy | " + " | ".join(have) + " |", "|---|" + "---:|" * len(have)]  # fmt: skip
        for policy in policies:
            cells = [f"{100 * support[s]['out_of_support'][policy]:.1f}%" + (" **OUT**" if policy in support[s]["flagged"] else "")
                     for s in have]  # fmt: skip
            lines.append(f"| {policy} | " + " | ".join(cells) + " |")
        for sim in have:
            s = support[sim]
            if "threshold" in s:
                lines += ["", f"{sim}: threshold {s['threshold']:.2f} (distance in units of each component's held-out 99th "
                          f"percentile; {s['checkpoint']}/{SUPPORT_FILE}; docs/real2sim.md)."]
    for sim, s in support.items():
        if not s["available"]:
            lines += ["", f"{sim}: its checkpoint ships no `{SUPPORT_FILE}`, so out-of-support steps are not measured "
                      f"(create it: `python evaluations/real2sim.py --build-support <checkpoint> --data <episodes>`)."]  # fmt: skip
    return lines


def plot_rollout(summary: dict[str, Any], path: str | Path) -> Path | None:
    """Real vs simulated success, one point per policy (with 95% intervals), one panel per simulator."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'rlvr-sim[real2sim]'): no plot", file=sys.stderr)
        return None
    sims = summary["sims"][1:]
    if not sims:  # `--sims real`: real success rates only, nothing to plot against
        return None
    figure, axes = plt.subplots(1, len(sims), figsize=(4.2 * len(sims), 4.2), squeeze=False)
    real = summary["rates"]["real"]
    for axis, sim in zip(axes[0], sims):
        for policy in summary["policies"]:
            x, y = real[policy], summary["rates"][sim][policy]
            axis.errorbar(x["rate"], y["rate"], xerr=[[x["rate"] - x["ci95"][0]], [x["ci95"][1] - x["rate"]]],
                          yerr=[[y["rate"] - y["ci95"][0]], [y["ci95"][1] - y["rate"]]], fmt="o", capsize=3)  # fmt: skip
            axis.annotate(policy, (x["rate"], y["rate"]), textcoords="offset points", xytext=(4, 4), fontsize=8)
        axis.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--")
        m = summary["metrics"][sim]
        axis.set(xlim=(-0.05, 1.05), ylim=(-0.05, 1.05), xlabel="real (gym-pusht) success", ylabel=f"{sim} success")
        axis.set_title(f"{sim}\nPearson {m['pearson']:.2f}, MMRV {m['mmrv']:.3f}", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return Path(path)


def plot_sweep(sweep: dict[str, list[dict[str, Any]]], path: str | Path) -> Path | None:
    """Pearson and MMRV of the MuJoCo sim vs real against each perturbation's level."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'rlvr-sim[real2sim]'): no plot", file=sys.stderr)
        return None
    figure, axes = plt.subplots(2, len(sweep), figsize=(3.2 * len(sweep), 5.6), squeeze=False)
    for column, (kind, rows) in enumerate(sweep.items()):
        levels = list(range(len(rows)))
        for row, metric in enumerate(("pearson", "mmrv")):
            axis = axes[row][column]
            values = [r[metric] for r in rows]
            low = [r[metric] - r[f"{metric}_ci95"][0] for r in rows]
            high = [r[f"{metric}_ci95"][1] - r[metric] for r in rows]
            axis.errorbar(levels, values, yerr=[low, high], fmt="o-", capsize=3)
            axis.set_xticks(levels, [format_level(r["level"]) for r in rows], fontsize=8)
            axis.set(xlabel=kind, ylabel=metric)
    figure.suptitle("MuJoCo PushT vs gym-pusht: ranking agreement as the gap grows", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return Path(path)
