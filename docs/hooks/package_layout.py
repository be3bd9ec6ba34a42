"""MkDocs hook: let mkdocstrings read `rlvr_sim.envs`, `rlvr_sim.training`, ... from their top-level folders.

setup.py installs `envs/`, `policies/`, `training/` and `evaluations/` as sub-packages of `rlvr_sim`. Griffe
(mkdocstrings' Python reader) finds packages by walking folders, so it cannot see that mapping. Before the
handler starts, this hook builds a temporary folder `rlvr_sim/` of symbolic links laid out as the installed
package is, and points the handler's search path at it: the API pages then name the objects as users import
them (`rlvr_sim.envs.video.world_model_env.VideoWorldModelEnv`), read straight from the sources.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority

MAPPED = ("envs", "policies", "training", "evaluations", "assets")  # folder == sub-package name (setup.py)


def package_tree(root: Path, into: Path) -> Path:
    """Lay out `into/rlvr_sim` as the installed package (links to `root/rlvr_sim/*` and the mapped folders)."""
    package = into / "rlvr_sim"
    package.mkdir(parents=True)
    for entry in (root / "rlvr_sim").iterdir():
        (package / entry.name).symlink_to(entry.resolve())
    for folder in MAPPED:
        (package / folder).symlink_to((root / folder).resolve(), target_is_directory=True)
    return into


@event_priority(100)  # before mkdocstrings reads its handler options
def on_config(config):
    root = Path(config.config_file_path).parent
    tree = package_tree(root, Path(tempfile.mkdtemp(prefix="rlvr_sim_api_")))
    atexit.register(shutil.rmtree, tree, ignore_errors=True)
    python = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    python["paths"] = [str(tree)]
    return config
