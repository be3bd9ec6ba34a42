"""`evaluations/video.py` end to end in a reduced form (tiny untrained model, a few gym-pusht episodes): every
section runs, writes its files, and the rows that need no model are what they must be."""

import json

import numpy as np
import pytest

pytest.importorskip("gym_pusht")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import torch
    from rlvr_sim.envs.video.collect import collect

    from rlvr_sim.models.action_bins import ActionBins
    from rlvr_sim.models.lm import build_model, save_checkpoint
    from rlvr_sim.models.pose_tokenizer import PoseTokenizer
    from rlvr_sim.tasks.video import VideoCodec

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("video_eval")
    collect(root / "data", episodes=10, seed=0, max_steps=140, mix="expert:1,random:1")
    tokenizer = PoseTokenizer()
    codec = VideoCodec(tokenizer.config.codebook_size, 2, 5, 5)
    model = build_model("tiny-5m", codec.vocab_size, 256, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    settings = {"horizon": 4, "frame_skip": 4, "tokenizer_dir": "tokenizer", "image_size": 64,
                "test_fraction": 0.1, "split_seed": 0, "test_stride": 4}
    bins = ActionBins(np.array([0.0, 0.0]), np.array([512.0, 512.0]))
    ckpt = root / "ckpt"
    save_checkpoint(ckpt, model, None, {"video_codec": vars(codec), "action_bins": bins.to_dict(),
                                        "video_settings": settings})
    tokenizer.save(ckpt / "tokenizer")
    return root, ckpt


def test_reduced_evaluation_runs_every_section(setup):
    from rlvr_sim.evaluations.video import main

    root, ckpt = setup
    out = root / "results" / "video"
    results = main(["--data", str(root / "data"), "--base", str(ckpt), "--rlvr", "", "--windows", "2",
                    "--starts", "1", "--greedy", "--median", "--uncertainty", "2", "--out", str(out), "--threads", "1"])
    assert json.loads(out.with_suffix(".json").read_text())["checkpoints"] == {"base": str(ckpt)}
    for suffix in ("_strip.gif", "_edges.png", "_uncertainty.png"):
        assert out.with_name(out.name + suffix).exists()
    assert results["judge"]["frames"] > 0 and results["judge"]["agent_px"]["median"] < 1.0
    rows = results["rollouts"]["rows"]
    assert set(rows) == {"copy-last-frame", "tokenizer ceiling", "base", "base (greedy)", "base (median)"}
    assert {"base", "base (greedy)"} <= set(results["single"]["rows"])
    assert set(results["single"]["gains_vs_copy"]) == {"base", "base (greedy)"}
    assert "Paired gains over copy-last-frame" in out.with_suffix(".md").read_text()
    assert rows["copy-last-frame"]["1"]["frozen_agent_pct"] in (0.0, 100.0)
    assert rows["tokenizer ceiling"]["8"]["agent_px"]["mean"] < 1.0
    edges = results["action_response"]["edges"]
    assert edges["gym-pusht"]["within_3px_of_truth_pct"] == 100.0 and edges["copy-last-frame"]["displacement_corr"] == 0.0
    assert results["uncertainty"]["steps"] > 0 and len(results["uncertainty"]["error_by_uncertainty_quartile"]) == 4
    assert "Four-edge test" in out.with_suffix(".md").read_text() and results["single"]["windows"] >= 1
