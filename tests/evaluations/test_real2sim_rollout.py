"""Real2Sim rollout harness: seeded tasks give the same rates under Ray and in-process; SIMPLER skips cleanly."""

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("gym_pusht")
from rlvr_sim.evaluations.real2sim_episodes import EpisodeSpec, rollout_specs  # noqa: E402
from rlvr_sim.evaluations.real2sim_fanout import run_episodes  # noqa: E402
from rlvr_sim.evaluations.real2sim_report import summarise  # noqa: E402

POLICIES = ["expert", "poor"]


def _rates(results):
    return {(r["sim"], r["policy"], r["episode"]): (r["success"], r["steps"]) for r in results}


def test_ray_and_in_process_runs_agree(support_world):
    """Same records either way, the learned simulators' out-of-support shares included (one checkpoint ships
    support.npz, one does not)."""
    pytest.importorskip("ray")
    import ray
    from rlvr_sim.evaluations.real2sim_report import rollout_markdown

    learned = [f"learned:{support_world['with']}", f"learned:{support_world['without']}"]
    specs = rollout_specs(["real"], POLICIES, episodes=2, seed=3, horizon=6)
    specs += rollout_specs(learned, POLICIES, episodes=2, seed=3, horizon=3)
    local = run_episodes(specs, use_ray=False, progress=False)
    try:
        remote = run_episodes(specs, use_ray=True, num_cpus=2, progress=False)
    finally:
        ray.shutdown()
    assert _rates(local) == _rates(remote)
    assert local == remote  # every field, out_of_support included
    assert [r["policy"] for r in remote] == [s.policy for s in specs]  # results come back in spec order
    real = [r for r in local if r["sim"] == "real"]
    summary = summarise(real + [dict(r, sim="copy") for r in real], ["real", "copy"], POLICIES, boot=50)
    assert summary["metrics"]["copy"]["mmrv"] == 0.0
    assert summary["judge_vs_truth"]["real"]["mean_position_error"] < 6.0
    by_sim = {sim: [r for r in local if r["sim"] == sim] for sim in ["real", *learned]}
    assert all("out_of_support" not in r for r in by_sim["real"])
    assert all(0.0 <= r["out_of_support"] <= 1.0 for r in by_sim[learned[0]])
    assert all(r["out_of_support"] is None for r in by_sim[learned[1]])
    summary = summarise(local, ["real", *learned], POLICIES, boot=20, flag_share=-1.0)  # every policy flagged
    assert summary["support"][learned[0]]["flagged"] == POLICIES and not summary["support"][learned[1]]["available"]
    settings = {"task": {"position_tol": 10, "angle_tol_deg": 8, "horizon": 3, "frame_skip": 4}, "seed": 3,
                "command": "test", "seconds": 0.0, "backend": "in-process"}  # fmt: skip
    markdown = rollout_markdown(summary, settings)
    assert markdown.count("% **OUT** |") == len(POLICIES) and "ships no `support.npz`" in markdown


def test_episodes_replay_exactly():
    from rlvr_sim.evaluations.real2sim_episodes import run_episode

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


def run_rollout(sims: str, out) -> None:
    """The rollout command as a user types it: expert and random, 2 short episodes each."""
    done = subprocess.run(
        [sys.executable, "evaluations/real2sim.py", "--rollout", "--no-ray", "--quiet", "--sims", sims,
         "--policies", "expert,random", "--episodes", "2", "--horizon", "4", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_rollout_command_writes_table_json_and_plot(tmp_path):
    pytest.importorskip("mujoco")
    run_rollout("real,mujoco", tmp_path)
    report = json.loads((tmp_path / "real2sim.json").read_text())
    assert set(report["rates"]) == {"real", "mujoco"} and report["episodes"] == 2
    assert "| expert |" in (tmp_path / "real2sim.md").read_text()
    assert np.isfinite(report["metrics"]["mujoco"]["mmrv"])
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "real2sim_pusht.png").stat().st_size > 0



def test_rollout_real_only_reports_real_rates_without_metrics_or_plot(tmp_path):
    """`--sims real`: how often each policy succeeds in gym-pusht (e.g. a planner), no simulator to rank."""
    run_rollout("real", tmp_path)
    report = json.loads((tmp_path / "real2sim.json").read_text())
    assert set(report["rates"]) == {"real"} and report["metrics"] == {}
    table = (tmp_path / "real2sim.md").read_text()
    assert "| expert |" in table and "Pearson" not in table
    assert not (tmp_path / "real2sim_pusht.png").exists()

# ---- the data's support: out-of-support steps of learned simulators ----
BLOCK = np.array([256.0, 230.0, 0.5])  # the T's pose in every frame of the synthetic data set


@pytest.fixture(scope="module")
def support_world(tmp_path_factory):
    """A tiny data set drawn as gym-pusht draws it (6 episodes: the T still, the agent circling it at radii
    110-160 around its centre, 16 frames each, held 4 env steps) and two tiny untrained pose world models
    over it: `with` ships support.npz (built by `build_support`), `without` does not."""
    import torch

    from rlvr_sim.data.support import build_support
    from rlvr_sim.metrics.pusht_pixels import TEE_AREA_CENTROID
    from rlvr_sim.models.action_bins import ActionBins
    from rlvr_sim.models.lm import build_model, save_checkpoint
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer, PoseTokenizerConfig
    from rlvr_sim.tasks.video import VideoCodec

    root = tmp_path_factory.mktemp("support")
    data = root / "data"
    data.mkdir()
    c, s = np.cos(BLOCK[2]), np.sin(BLOCK[2])
    centre = BLOCK[:2] + TEE_AREA_CENTROID @ np.array([[c, s], [-s, c]])
    painter = PoseTokenizer(PoseTokenizerConfig(image_size=96))
    for i, radius in enumerate(np.linspace(110.0, 160.0, 6)):
        turn = np.linspace(0.0, 2 * np.pi, 16, endpoint=False) + i
        agent = centre + radius * np.stack([np.cos(turn), np.sin(turn)], 1)
        frames = painter.render(np.concatenate([agent, np.repeat(BLOCK[None], len(agent), 0)], 1))
        np.savez_compressed(data / f"pusht_{i:05d}.npz", image=np.repeat(frames, 4, 0),
                            action=np.repeat(agent, 4, 0).astype(np.float32))  # fmt: skip
    tokenizer = PoseTokenizer()
    codec = VideoCodec(codebook_size=tokenizer.config.codebook_size, action_dim=2, abs_tokens=5, cond_tokens=5)
    settings = {"horizon": 4, "frame_skip": 4, "tokenizer_dir": "tokenizer", "image_size": 64, "data_dir": str(data),
                "test_fraction": 0.34, "split_seed": 0}  # fmt: skip
    checkpoints = {}
    for name in ("with", "without"):
        torch.manual_seed(0)
        model = build_model("tiny-5m", codec.vocab_size, 256, hidden_size=32, intermediate_size=64,
                            num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)  # fmt: skip
        meta = {"video_codec": vars(codec), "action_bins": ActionBins(np.zeros(2), np.full(2, 512.0)).to_dict(),
                "video_settings": settings}  # fmt: skip
        save_checkpoint(root / name, model, None, meta)
        tokenizer.save(root / name / "tokenizer")
        checkpoints[name] = root / name
    support = build_support(checkpoints["with"], progress=False)
    return {"data": data, "support": support, **checkpoints}


def test_support_distance_is_zero_on_training_frames_and_large_off_the_data(support_world):
    from rlvr_sim.data.episodes import episode_paths, load_episode, split_paths
    from rlvr_sim.metrics.support import SUPPORT_FILE, DataSupport
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    path = support_world["with"] / SUPPORT_FILE
    assert path.stat().st_size < 1_000_000
    support = DataSupport.load(path)
    assert support.threshold == support_world["support"].threshold and np.isfinite(support.threshold)
    assert support.info["train_episodes"] == 4 and support.info["test_episodes"] == 2
    train = split_paths(episode_paths(support_world["data"]), 0.34, 0)["train"]
    states = PoseTokenizer().frames_to_states(load_episode(train[0], 64, 4).images)
    assert np.allclose(support.distance(states), 0.0, atol=1e-6)  # every training frame is in the support
    inside = np.concatenate([BLOCK[:2] + [-np.sin(BLOCK[2]) * 15.0, np.cos(BLOCK[2]) * 15.0], BLOCK])[None]  # in the bar
    far = np.array([[40.0, 470.0, 460.0, 60.0, -2.5]])  # agent and T in opposite corners, T turned away
    assert support.distance(inside)[0] > support.threshold
    assert support.distance(far)[0] > 3 * support.threshold
    assert support.distance(np.array([[np.nan, np.nan, 256.0, 256.0, 0.0]]))[0] == np.inf  # the judge lost the agent


def test_a_visual_pusht_checkpoint_gets_the_same_support(support_world, tmp_path):
    """A visual PushT checkpoint (keypoint tokenizer) trained on the same episodes gets the pose checkpoint's
    support: its frames are judged the same way. A visual checkpoint of another scene is refused by name."""
    import json
    import shutil

    from rlvr_sim.data.support import build_support
    from rlvr_sim.models.keypoint_tokenizer import KeypointTokenizer, KeypointTokenizerConfig

    visual = tmp_path / "visual"
    shutil.copytree(support_world["without"], visual)
    shutil.rmtree(visual / "tokenizer")
    KeypointTokenizer(KeypointTokenizerConfig(image_size=64, keypoints=2, bins=16, width=8)).save(visual / "tokenizer")
    meta_file = visual / "rlvr_sim.json"
    meta = json.loads(meta_file.read_text())
    meta["video_settings"]["scene"] = "pusht"
    meta_file.write_text(json.dumps(meta))
    support = build_support(visual, progress=False)
    assert np.array_equal(support.bins, support_world["support"].bins)
    assert support.threshold == support_world["support"].threshold
    meta["video_settings"]["scene"] = "arm"
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="scene is 'arm', not 'pusht'"):
        build_support(visual, out=tmp_path / "arm_support.npz", progress=False)


def test_agent_inside_the_t_is_out_of_a_dense_support():
    """A support of every agent position around a fixed T that keeps the disc off the T: the agent moved into
    the T is far from all of it, one bin's move outside is not."""
    from rlvr_sim.metrics.support import DataSupport
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer

    tokenizer, block = PoseTokenizer(), np.array([256.0, 256.0, 0.3])
    grid = np.stack(np.meshgrid(np.arange(40.0, 480.0, 4.0), np.arange(40.0, 480.0, 4.0)), -1).reshape(-1, 2)
    c, s = np.cos(block[2]), np.sin(block[2])
    body = (grid - block[:2]) @ np.array([[c, -s], [s, c]])  # world -> the T's body frame
    near_bar = (np.abs(body[:, 0]) < 75) & (body[:, 1] > -15) & (body[:, 1] < 45)
    near_stem = (np.abs(body[:, 0]) < 30) & (body[:, 1] > 15) & (body[:, 1] < 135)
    states = np.concatenate([grid, np.repeat(block[None], len(grid), 0)], 1)[~(near_bar | near_stem)]
    bins = tokenizer.states_to_codes(states) % tokenizer.config.slot_size
    support = DataSupport(bins, threshold=8.0)  # scales 1: distances in world units
    inside = np.concatenate([block[:2] + [-s * 75.0, c * 75.0], block])[None]  # the agent in the stem
    outside = np.concatenate([block[:2] + [-s * 150.0, c * 150.0], block])[None]  # beyond the stem's end
    assert support.distance(inside)[0] > 25.0 > support.threshold > support.distance(outside)[0]


def test_report_flags_policies_out_of_support():
    from rlvr_sim.evaluations.real2sim_report import support_markdown, support_summary

    results = [{"sim": "learned:x", "policy": p, "episode": e, "out_of_support": share}
               for p, shares in {"expert": (0.0, 0.1), "random": (0.5, 0.3)}.items() for e, share in enumerate(shares)]
    summary = support_summary(results, ["real", "learned:x"], ["expert", "random"], flag_share=0.1)
    assert summary["learned:x"]["out_of_support"] == {"expert": 0.05, "random": 0.4}
    assert summary["learned:x"]["flagged"] == ["random"]
    table = "\n".join(support_markdown(summary, ["expert", "random"]))
    assert "| expert | 5.0% |" in table and "| random | 40.0% **OUT** |" in table
