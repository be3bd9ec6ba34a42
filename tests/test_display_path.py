"""Result files name paths as a clone names them (`rlvr_sim.resources.display_path`), never a machine's."""

from pathlib import Path

from rlvr_sim import resources

REPO = Path(__file__).resolve().parents[1]


def test_packaged_and_clone_paths_are_recorded_relative(tmp_path, monkeypatch):
    assert resources.display_path(resources.asset_path("pusht_pose_base")) == "assets/pusht_pose_base"
    assert resources.display_path(REPO / "evaluations" / "results" / "video.md") == "evaluations/results/video.md"
    assert resources.display_path(REPO / "data" / "pusht2") == "data/pusht2"
    monkeypatch.chdir(REPO)
    assert resources.display_path("assets/web_rlvr") == "assets/web_rlvr"
    outside = tmp_path / "run" / "final"
    assert resources.display_path(outside) == str(outside)  # nothing to be relative to: kept as given
    monkeypatch.setattr(resources, "_CLONE_MARKER", "no-such-file")  # an installed package: no clone root
    assert resources.display_path(REPO / "data" / "pusht2") == str(REPO / "data" / "pusht2")
    assert resources.display_path(resources.asset_path("web_rlvr")) == "assets/web_rlvr"


def test_committed_results_name_no_machine_directory():
    for folder in ("evaluations/results", "benchmarks/results"):
        for path in (REPO / folder).rglob("*.*"):
            if path.suffix in (".json", ".md"):
                text = path.read_text()
                assert str(REPO) + "/" not in text, path
