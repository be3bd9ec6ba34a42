"""The documentation site builds with `mkdocs build --strict` (a broken link, a page missing from the nav or an
API reference that names no object fails the build), and its index lists every page."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="the [docs] extra is not installed (scripts/test.sh installs it)")


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_site_builds_strictly(tmp_path):
    proc = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("rlvr_sim.envs.video.world_model_env.VideoWorldModelEnv", "rlvr_sim.tasks.base.Task",
                 "rlvr_sim.tasks.base.WorldModelCodec", "rlvr_sim.config.RunConfig", "rlvr_sim.rl.trainer.Trainer",
                 "rlvr_sim.rl.sampler.sample", "rlvr_sim.envs.textgame.world_model_env.TextGameWorldModelEnv",
                 "rlvr_sim.envs.web.world_model_env.WebWorldModelEnv", "rlvr_sim.evaluations.report"):
        assert f'id="{name}"' in api, f"{name} missing from the API reference"


def test_index_lists_every_page():
    index = (DOCS / "index.md").read_text()
    linked = set(re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]*)?\)", index))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} - {"index.md"}
    assert pages - linked == set(), "docs/index.md does not link these pages"


@pytest.mark.parametrize("page, problem", [
    ("See [a page that is not there](nowhere.md).\n", "nowhere.md"),
    ("::: rlvr_sim.tasks.base.NoSuchClass\n", "NoSuchClass"),
])
def test_strict_build_fails_on_a_broken_link_or_reference(tmp_path, page, problem):
    """The site's own settings (strict, link validation, the package-layout hook) on a one-page copy."""
    config = (REPO / "mkdocs.yml").read_text()
    config = config[: config.index("\nnav:")] + "\nnav:\n  - Home: index.md\n"
    (tmp_path / "docs").mkdir()
    shutil.copytree(DOCS / "hooks", tmp_path / "docs" / "hooks")
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n" + page)
    (tmp_path / "mkdocs.yml").write_text(config)
    (tmp_path / "rlvr_sim").symlink_to(REPO / "rlvr_sim")  # the hook lays the package out from the config's folder
    for folder in ("envs", "policies", "training", "evaluations", "assets"):
        (tmp_path / folder).symlink_to(REPO / folder)
    proc = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and problem in proc.stdout + proc.stderr, proc.stderr[-2000:]
