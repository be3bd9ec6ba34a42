"""`evaluations/video_visual.py`: `--compare` rows paired with the base, and the pushed object's error split into
windows where it truly stayed still and where it moved (copy-last-frame is exact on the first group only)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def pusht_data(tmp_path_factory):
    pytest.importorskip("gym_pusht")
    from rlvr_sim.envs.video.collect import collect

    root = tmp_path_factory.mktemp("visual_compare") / "data"
    collect(root, episodes=10, seed=0, max_steps=48, mix="expert:1,random:1")
    return root


def test_compare_rows_and_the_still_moved_split(pusht_data, tmp_path):
    from rlvr_sim.evaluations import video_visual

    results = video_visual.main(["--data", str(pusht_data), "--base", "pusht_visual_rlvr", "--compare",
                                 "absolute=pusht_visual_base", "--windows", "8", "--best-of", "0", "--starts", "1",
                                 "--threads", "1", "--out", str(tmp_path / "eval")])
    assert "absolute" in results["rollouts"] and "base vs absolute" in results["gains"]
    split = results["still_moved"]
    assert split["object"] == "block" and split["horizon"] == 8
    assert split["still"] + split["moved"] == results["windows"] and split["moved"] > 0
    copy = split["copy-last-frame"]
    if split["still"]:
        assert copy["still"]["mean"] <= 1.0  # copying the anchor is right wherever the T stayed
    assert copy["moved"]["mean"] > 1.0
    assert {"base", "absolute", "tokenizer ceiling"} <= set(split)
    text = (tmp_path / "eval.md").read_text()
    assert "still vs moved" in text and "| absolute |" in text and "tour: every leg" in text
    legs = results["far_targets"]["base"]["tour_within_3px_pct"]
    assert len(legs) == 4 and all(0 <= v <= 100 for v in legs)
    with pytest.raises(SystemExit):
        video_visual.main(["--data", str(pusht_data), "--base", "pusht_visual_rlvr", "--compare", "nocheckpoint",
                           "--best-of", "0", "--out", str(tmp_path / "bad")])


class _DrawnWorld:
    """A stand-in world model: draws the PushT scene with the agent where `follow` puts it (the commanded target,
    or where it started), so the tour's judge has something to find."""

    serves_median = False

    def __init__(self, follow: bool) -> None:
        from rlvr_sim.models.pose_tokenizer import PoseTokenizer

        self.follow, self.tokenizer = follow, PoseTokenizer()

    def rollout(self, frames, actions, seeds, temperature=0.0, median=False):
        import numpy as np

        start = np.array([256.0, 400.0, 300.0, 250.0, 0.5])
        states = np.repeat(np.repeat(start[None, None], actions.shape[0], 0), actions.shape[1], 1)
        if self.follow:
            states[..., :2] = actions
        drawn = self.tokenizer.render(states.reshape(-1, 5))
        return drawn.reshape(*actions.shape[:2], *drawn.shape[1:])


def test_tour_scores_a_model_that_goes_where_it_is_sent_and_one_that_stays():
    import numpy as np
    from rlvr_sim.evaluations.video_visual import TOURS, tour

    frames = np.zeros((3, 64, 64, 3), np.uint8)
    follows, stays = tour(_DrawnWorld(True), frames, "pusht", 0), tour(_DrawnWorld(False), frames, "pusht", 0)
    assert follows["tour_within_3px_pct"] == [100.0] * 4 and follows["tour_every_leg_pct"] == 100.0
    assert stays["tour_within_3px_pct"] == [0.0] * 4 and stays["tour_every_leg_pct"] == 0.0
    assert follows["tour"] == TOURS["pusht"].tolist()


def test_sampled_section_scores_rlvr_against_base_as_the_paper_decodes(pusht_data, tmp_path):
    """The first best-of-N sample of each model is scored like the paper's Table 3 (temperature 1), RLVR vs base
    paired; a model compared with itself gains exactly 0 on every metric."""
    import numpy as np
    from rlvr_sim.evaluations import video_visual

    results = video_visual.main(["--data", str(pusht_data), "--base", "pusht_visual_rlvr", "--rlvr",
                                 "pusht_visual_base", "--windows", "6", "--best-of", "2", "--starts", "1",
                                 "--threads", "1", "--out", str(tmp_path / "eval")])
    sampled = results["sampled"]
    assert set(sampled["rows"]) == {"base", "RLVR"} and sampled["horizon"] == 8
    row = sampled["rows"]["base"]
    assert {"mse@1", "mse@1-8", "ssim@1-8", "lpips@1-8", "psnr@1", "repetition"} <= set(row)
    assert 0.0 <= row["repetition"]["mean"] <= 1.0
    # best-of-1 of the curve is the sampled section's multi-step MSE (the same first sample)
    assert np.isclose(results["best_of_n"]["base"]["1"]["mse"], row["mse@1-8"]["mean"])
    assert "mse@1-8" in sampled["gains"]["RLVR vs base"]
    assert "Table 3 decoding" in (tmp_path / "eval.md").read_text()
    same = video_visual.sampled_section(*_task_and_first(video_visual, pusht_data))
    assert all(v["gain"] == 0.0 for v in same["gains"]["RLVR vs base"].values())


def _task_and_first(video_visual, data):
    """One model's sampled rollouts under both names: every paired gain must be exactly 0."""
    from rlvr_sim.envs.video.world_model_env import VideoWorldModel

    world = VideoWorldModel("pusht_visual_rlvr")
    task, _ = video_visual.held_out_task(world, str(data), 4)
    w = task.windows["test"]
    actions = task.action_bins.decode(w.action_bins[:4])
    pred = world.rollout(w.context[:4], actions, [0, 1, 2, 3], temperature=1.0)
    return task, {"base": pred, "RLVR": pred.copy()}, world.tokenizer, video_visual.perceptual_metric()
