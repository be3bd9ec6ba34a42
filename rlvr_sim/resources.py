"""The one way to find packaged assets and evaluation results.

Assets (checkpoints, tokenizers, recorded start pages) and the committed result tables travel with the
package (`rlvr_sim.assets`, `rlvr_sim.evaluations`), so they are found through `importlib.resources`,
the same in a clone, an editable install and a wheel; never relative to the working directory or to a
module's `parents[n]`, which in a wheel points into `site-packages`.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

_CLONE_MARKER = "pyproject.toml"  # next to evaluations/ in a clone; absent in an installed package


def _package_dir(package: str) -> Path:
    """A package's directory on disk (checkpoints are read by path, so a zipped install cannot serve)."""
    root = files(package)
    if not isinstance(root, Path):
        raise RuntimeError(f"{package} is not installed as a directory ({root!r}); reinstall rlvr-sim unzipped")
    return root


def asset_path(name: str) -> Path:
    """A packaged asset by name, e.g. `asset_path("web_tokenizer")` (it may not exist; callers check)."""
    return _package_dir("rlvr_sim.assets") / name


def resolve_checkpoint(checkpoint: str | Path | None, default: str, *, required_file: str | None = None,
                       what: str = "checkpoint") -> Path:
    """The one way every loader finds a checkpoint directory: `checkpoint` (else `default`) as an existing
    path, else as the name of one embedded under `rlvr_sim/assets`. With `required_file`, a directory
    counts only if it holds that file (e.g. `model.safetensors`). `what` names the checkpoint in the error."""
    name = checkpoint or default
    for candidate in (Path(name), asset_path(str(name))):
        if candidate.is_dir() and (required_file is None or (candidate / required_file).is_file()):
            return candidate
    raise FileNotFoundError(f"{what} {str(name)!r} not found (as a path or under {asset_path('')})")


def packaged_results(name: str) -> Path:
    """A committed result file, e.g. `packaged_results("textgame.json")` (read-only in an installed package)."""
    return _package_dir("rlvr_sim.evaluations") / "results" / name


RUNS_DIR = Path("runs") / "eval"  # relative to the working directory, like training's runs/


def results_dir(out: str | Path | None = None) -> Path:
    """Where an evaluation writes: `out` if given, else the run folder `runs/eval` of the working directory.

    The committed tables (`evaluations/results/`) change only when `--out` names them, so running an
    evaluation never leaves a clone modified by accident; the same default works in an installed package.
    """
    return Path(out) if out is not None else RUNS_DIR


def display_path(path: str | Path) -> str:
    """A path as result files record it: `assets/...` or `evaluations/...` for packaged files, relative to the
    clone for other files in it, else as given; so a committed result names no machine's directories."""
    resolved = Path(path).resolve()
    for package, prefix in (("rlvr_sim.assets", "assets"), ("rlvr_sim.evaluations", "evaluations")):
        try:
            return str(Path(prefix) / resolved.relative_to(_package_dir(package).resolve()))
        except (ValueError, RuntimeError):
            pass
    root = _package_dir("rlvr_sim.evaluations").parent
    if (root / _CLONE_MARKER).is_file():
        try:
            return str(resolved.relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)


__all__ = ["asset_path", "display_path", "packaged_results", "resolve_checkpoint", "results_dir"]
