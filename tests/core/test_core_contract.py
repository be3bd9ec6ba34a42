"""Contract tests: dependency directions between the library core and the periphery, and the Task protocol.

Directions (checked on the import statements, module level or not):
- the library core (`rlvr_sim/` except `cli.py` and `viewer/`) imports nothing from `envs`, `policies`,
  `evaluations` or `training` (spelled `rlvr_sim.envs...` or top-level `envs...`);
- the env packages import no `evaluations`;
- policies and the env collectors (`envs/*/collect.py`) do not import each other;
- of the installed packages, only `rlvr_sim/cli.py` imports the interactive viewer (`rlvr_sim.viewer`),
  the application on top (benchmarks and scripts may).

Run them alone with `python -m pytest tests/core -k contract`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from rlvr_sim.tasks import TASKS, task_members

REPO = Path(__file__).resolve().parents[2]
PERIPHERY = ("envs", "policies", "evaluations", "training")

# Known violations: (importing file, what it must not import). None left; a stale entry added here fails
# `test_contract_allowlist_is_live`.
ALLOWED: set[tuple[str, str]] = set()
# Registered tasks that do not yet declare a protocol member: {task name: {member, ...}}.
ALLOWED_MISSING_MEMBERS: dict[str, set[str]] = {}


def periphery_of(module: str) -> str | None:
    """The periphery package a module name belongs to ('rlvr_sim.envs.web.tree' -> 'envs'), else None."""
    parts = module.split(".")
    if parts[0] == "rlvr_sim":
        parts = parts[1:]
    return parts[0] if parts and parts[0] in PERIPHERY else None


def is_viewer(module: str) -> bool:
    return module == "rlvr_sim.viewer" or module.startswith("rlvr_sim.viewer.")


def imported_modules(path: Path) -> set[str]:
    """Every absolute module name an import statement in the file names (`from a import b` gives a and a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def python_files(*parts: str) -> list[Path]:
    return sorted((REPO.joinpath(*parts)).rglob("*.py"))


def core_files() -> list[Path]:
    root = REPO / "rlvr_sim"
    return [p for p in python_files("rlvr_sim")
            if p != root / "cli.py" and (root / "viewer") not in p.parents]


def collector_files() -> list[Path]:
    return sorted((REPO / "envs").glob("*/collect.py"))


def is_collector(module: str) -> bool:
    parts = module.split(".")
    if parts[0] == "rlvr_sim":
        parts = parts[1:]
    return len(parts) >= 3 and parts[0] == "envs" and parts[2] == "collect"


def found(files: list[Path], label: str, forbidden: Callable[[str], bool]) -> set[tuple[str, str]]:
    """(file, label) for each file importing a module for which `forbidden` holds."""
    return {(path.relative_to(REPO).as_posix(), label) for path in files
            if any(forbidden(module) for module in imported_modules(path))}


def all_violations() -> set[tuple[str, str]]:
    library = [p for folder in ("rlvr_sim", *PERIPHERY) for p in python_files(folder)]
    return (
        set().union(*(found(core_files(), name, lambda m, n=name: periphery_of(m) == n) for name in PERIPHERY))
        | found(python_files("envs"), "evaluations", lambda m: periphery_of(m) == "evaluations")
        | found(python_files("policies"), "collectors", is_collector)
        | found(collector_files(), "policies", lambda m: periphery_of(m) == "policies")
        | found([p for p in library if p != REPO / "rlvr_sim" / "cli.py"
                 and REPO / "rlvr_sim" / "viewer" not in p.parents], "viewer", is_viewer)
    )


def test_contract_core_imports_no_periphery():
    assert {v for v in all_violations() - ALLOWED if v[0].startswith("rlvr_sim/")} == set()


def test_contract_dependency_directions_hold_outside_the_allowlist():
    assert all_violations() - ALLOWED == set()


def test_contract_allowlist_is_live():
    """An allowlist entry whose violation is gone must be removed (the list only ever shrinks)."""
    assert ALLOWED - all_violations() == set()


def test_contract_checker_sees_both_spellings_and_nested_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import envs.web.tree\n\ndef f():\n    from rlvr_sim.evaluations.web import x\n"
                      "    from rlvr_sim.envs.web import collect\n")
    modules = imported_modules(sample)
    assert {periphery_of(m) for m in modules} >= {"envs", "evaluations"}
    assert any(is_collector(m) for m in modules) and not any(is_viewer(m) for m in modules)


def declared_members(cls: type) -> set[str]:
    """Class attributes and methods, plus attributes assigned as `self.x` in the class's (and bases') code."""
    names = {name for name in dir(cls) if not name.startswith("__")}
    for klass in cls.__mro__:
        if klass is object:
            continue
        try:
            tree = ast.parse(inspect.getsource(klass).strip() if klass.__module__ != "builtins" else "")
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name) and node.value.id == "self"):
                names.add(node.attr)
    return names


@pytest.mark.parametrize("name", sorted(TASKS))
def test_contract_registered_tasks_declare_every_protocol_member(name):
    module_name, cls_name = TASKS[name].split(":")
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except ImportError as err:  # an optional modality's dependencies are not installed
        pytest.skip(f"{name}: {err}")
    missing = set(task_members()) - declared_members(cls)
    assert missing == ALLOWED_MISSING_MEMBERS.get(name, set())


def test_contract_assets_and_results_are_found_through_the_package(monkeypatch):
    """One way to find them (`rlvr_sim.resources`); an installed package writes results only to --out."""
    from rlvr_sim import resources
    from rlvr_sim.tasks.web import EMBEDDED_TOKENIZER

    assert resources.asset_path("web_tokenizer") == EMBEDDED_TOKENIZER == REPO / "assets" / "web_tokenizer"
    assert resources.packaged_results("web.md") == REPO / "evaluations" / "results" / "web.md"
    assert resources.results_dir() == REPO / "evaluations" / "results"
    monkeypatch.setattr(resources, "_CLONE_MARKER", "no-such-file")  # as in site-packages
    with pytest.raises(RuntimeError, match="--out"):
        resources.results_dir()
    assert resources.results_dir("elsewhere") == Path("elsewhere")
