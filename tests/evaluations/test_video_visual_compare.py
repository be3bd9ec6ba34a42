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
    assert "still vs moved" in text and "| absolute |" in text
    with pytest.raises(SystemExit):
        video_visual.main(["--data", str(pusht_data), "--base", "pusht_visual_rlvr", "--compare", "nocheckpoint",
                           "--best-of", "0", "--out", str(tmp_path / "bad")])
