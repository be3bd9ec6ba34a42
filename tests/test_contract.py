"""Contract tests: dependency directions between the library core and the periphery, and the Task protocol.

Directions (checked on the import statements, module level or not):
- the library core (`rlvr_sim/` except `cli.py` and `viewer/`) imports nothing from `envs`, `policies`,
  `evaluations` or `training` (spelled `rlvr_sim.envs...` or top-level `envs...`);
- the env packages import no `evaluations`;
- policies and the env collectors (`envs/*/collect.py`) do not import each other;
- of the installed packages, only `rlvr_sim/cli.py` imports the interactive viewer (`rlvr_sim.viewer`),
  the application on top (benchmarks and scripts may).

Modules reached by string (registries such as `rlvr_sim.tasks.TASKS`, `training/collect.py`'s COLLECTORS,
the CLI's commands, the gym registrations, default policy classes given to `load_class`): every string of
the installed code that is a whole module reference (`rlvr_sim.a.b`, `rlvr_sim.a.b:Name`, `rlvr_sim.a.b.Name`)
must name a module file of the package and, where it names an attribute, one that module defines.

Run them alone with `python -m pytest tests/test_contract.py`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from rlvr_sim.tasks import TASKS, task_members

REPO = Path(__file__).resolve().parents[1]
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


# installed package -> folder of the clone (setup.py's MAPPED); everything else is under rlvr_sim/
MAPPED_FOLDERS = {"envs": "envs", "policies": "policies", "training": "training", "evaluations": "evaluations",
                  "assets": "assets"}
MODULE_REFERENCE = re.compile(r"rlvr_sim(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")
FILE_SUFFIXES = {"json", "jsonl", "yaml", "yml", "md", "txt", "npz", "safetensors", "py", "pt"}  # rlvr_sim.json


def module_path(name: str, root: Path = REPO) -> Path | None:
    """The source file of the installed module `name` in the clone at `root` (None: no such module)."""
    parts = name.split(".")[1:]
    base = root / "rlvr_sim"
    if parts and parts[0] in MAPPED_FOLDERS:
        base, parts = root / MAPPED_FOLDERS[parts[0]], parts[1:]
    stem = base.joinpath(*parts)
    for candidate in (stem.with_suffix(".py") if parts else None, stem / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def top_level_names(path: Path) -> set[str]:
    """Names a module defines or imports at its top level (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def reference_resolves(reference: str, root: Path = REPO) -> bool:
    """Whether `rlvr_sim.a.b[:Name]` (or `rlvr_sim.a.b.Name`) names a module of the clone at `root` and,
    where given, an attribute it defines."""
    module, _, attribute = reference.partition(":")
    path = module_path(module, root)
    if path is None and not attribute and "." in module:  # module.Name spelling
        module, attribute = module.rsplit(".", 1)
        path = module_path(module, root)
    return path is not None and (not attribute or attribute in top_level_names(path))


def string_references(path: Path) -> list[tuple[int, str]]:
    """(line, string) of every string constant in a file that is a whole module reference."""
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and MODULE_REFERENCE.fullmatch(node.value) and node.value.rsplit(".", 1)[-1] not in FILE_SUFFIXES]


def broken_string_references(root: Path = REPO) -> list[str]:
    """`file:line: reference` for each module reference of the installed code that names nothing."""
    files = [p for folder in ("rlvr_sim", *PERIPHERY) for p in sorted((root / folder).rglob("*.py"))]
    return [f"{path.relative_to(root).as_posix()}:{line}: {reference}" for path in files
            for line, reference in string_references(path) if not reference_resolves(reference, root)]


def test_contract_modules_named_by_string_exist():
    """Registries and gym registrations reach modules by string; a renamed module must fail here, not at
    the first `gym.make` or `--task` that uses it."""
    assert broken_string_references() == []


def test_contract_string_references_are_found_and_checked(tmp_path):
    """The checker sees registry values, gym entry points and defaults, and fails on a broken one."""
    assert ("rlvr_sim.envs.textgame.collect" in {ref for _, ref in string_references(REPO / "training" / "collect.py")})
    assert any(ref.endswith(":VideoWorldModelEnv") for _, ref in string_references(REPO / "rlvr_sim" / "registration.py"))
    assert reference_resolves("rlvr_sim.tasks.video:VideoTask") and reference_resolves("rlvr_sim.envs.web.collect")
    assert reference_resolves("rlvr_sim.policies.pusht.PushTPolicy") and reference_resolves("rlvr_sim.training")
    for broken in ("rlvr_sim.tasks.video:NoSuchTask", "rlvr_sim.envs.no_such_module", "rlvr_sim.envs.web.collect:x"):
        assert not reference_resolves(broken)
    (tmp_path / "rlvr_sim").mkdir()
    (tmp_path / "rlvr_sim" / "__init__.py").write_text("")
    (tmp_path / "rlvr_sim" / "registry.py").write_text(
        'REGISTRY = {"ok": "rlvr_sim.registry:REGISTRY", "gone": "rlvr_sim.renamed:Thing"}\n'
        'META = "rlvr_sim.json"\n')
    assert broken_string_references(tmp_path) == ["rlvr_sim/registry.py:1: rlvr_sim.renamed:Thing"]


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
    """One way to find them (`rlvr_sim.resources`); evaluations write to a run folder unless --out names one."""
    from rlvr_sim import resources
    from rlvr_sim.tasks.web import EMBEDDED_TOKENIZER

    assert resources.asset_path("web_tokenizer") == EMBEDDED_TOKENIZER == REPO / "assets" / "web_tokenizer"
    assert resources.packaged_results("web.md") == REPO / "evaluations" / "results" / "web.md"
    assert resources.results_dir() == Path("runs") / "eval"  # never the committed evaluations/results
    monkeypatch.setattr(resources, "_CLONE_MARKER", "no-such-file")  # as in site-packages: the same default
    assert resources.results_dir() == Path("runs") / "eval"
    assert resources.results_dir("elsewhere") == Path("elsewhere")
