"""A normal (non-editable) install carries the whole product: build the wheel from the files a clone has
(tracked, plus untracked ones git does not ignore; never a stale local build/), install it into a fresh venv
(reusing this interpreter's dependencies, installing nothing from the network) and, from outside the
repository, import it, load every embedded model of every modality and step each learned-simulator env."""

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAPPED = ("envs", "policies", "training", "evaluations", "assets")  # installed as rlvr_sim.<folder> (setup.py)
VIDEO_MODULES = ("pygame", "cv2")  # the video extra, which the pose tokenizer renders with


def _venv_seeing_running_packages(env_dir: Path) -> Path:
    """A venv whose dependencies are the running interpreter's, returning its python.

    `system_site_packages=True` would point at the *base* interpreter's packages, which inside a venv are
    not the ones running the tests; a `.pth` file listing the running interpreter's site directories does
    see them. The venv's own site-packages still comes first, so the wheel installed there wins.
    """
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    running = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    (Path(purelib) / "running_interpreter.pth").write_text(
        "".join(f"{entry}\n" for entry in running if Path(entry).is_dir()))
    return python


def clone_files() -> list[str]:
    """The repository's files as a clone has them: tracked plus untracked-but-not-ignored, still present."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    return sorted({name for name in listed if name and (REPO / name).is_file()})


def installed_name(name: str) -> str:
    """Where a repository file lands in the wheel: `assets/x` -> `rlvr_sim/assets/x`, `rlvr_sim/x` stays."""
    top = name.split("/", 1)[0]
    return f"rlvr_sim/{name}" if top in MAPPED else name


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in clone_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    build = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
                            str(source)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return next(dist.glob("rlvr_sim-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path]:
    """(the venv's python, a working directory outside the repository) with the wheel installed."""
    env_dir = tmp_path_factory.mktemp("venv")
    python = _venv_seeing_running_packages(env_dir)
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    return python, tmp_path_factory.mktemp("elsewhere")


def test_wheel_carries_exactly_the_clone_s_assets(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in ("rlvr_sim/envs/__init__.py", "rlvr_sim/training/grpo.py", "rlvr_sim/training/configs/addition_grpo.yaml",
                     "rlvr_sim/evaluations/__init__.py", "rlvr_sim/policies/__init__.py", "rlvr_sim/assets/__init__.py"):
        assert expected in names, expected
    assets = {installed_name(n) for n in clone_files() if n.startswith("assets/")}
    assert {n for n in names if n.startswith("rlvr_sim/assets/")} == assets  # nothing missing, nothing stale


def test_wheel_installs_and_imports_outside_repo(installed):
    python, outside = installed
    code = (
        "import rlvr_sim, rlvr_sim.envs, rlvr_sim.training.grpo, gymnasium as gym, pathlib;"
        "print(pathlib.Path(rlvr_sim.__file__).parent);"
        "assert 'RLVRWorld-TextGame-v0' in gym.registry and 'RLVRWorld-Video-v0' in gym.registry;"
        "from rlvr_sim.tasks import make_task; assert make_task('addition').examples('train')"
    )
    check = subprocess.run([str(python), "-c", code], cwd=outside, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr[-3000:]
    installed_at = Path(check.stdout.strip().splitlines()[-1])
    assert REPO not in installed_at.parents and "site-packages" in str(installed_at)
    cli = subprocess.run([str(python.parent / "rlvr-sim"), "--help"], cwd=outside, capture_output=True, text=True)
    assert cli.returncode == 0 and "demo" in cli.stdout


# Run by the installed package from outside the repository: every embedded world model through its env
# (reset, one step), the tokenizers the tasks embed, and the behaviour-cloned PushT policy.
EVERY_EMBEDDED_MODEL = r'''
import json, pathlib, sys
import gymnasium as gym
import rlvr_sim, rlvr_sim.assets

root = pathlib.Path(rlvr_sim.assets.__file__).parent
envs = {"textgame": "RLVRWorld-TextGame-v0", "web": "RLVRWorld-Web-v0", "pusht": "RLVRWorld-Video-v0"}
report = {"assets": str(root), "stepped": {}}
for checkpoint in sorted(p for p in root.iterdir() if (p / "rlvr_sim.json").is_file()):
    env_id = envs[json.loads((checkpoint / "rlvr_sim.json").read_text())["task"]]
    env = gym.make(env_id, checkpoint=str(checkpoint))
    obs, info = env.reset(seed=0)
    action = {"RLVRWorld-TextGame-v0": lambda: info["valid_actions"][0], "RLVRWorld-Web-v0": lambda: "scroll [down]",
              "RLVRWorld-Video-v0": lambda: env.action_space.sample()}[env_id]()
    obs, reward, terminated, truncated, step_info = env.step(action)
    assert env.observation_space.contains(obs), checkpoint.name
    report["stepped"][checkpoint.name] = env_id
    env.close()
from rlvr_sim.tasks.textgame import EMBEDDED_TOKENIZER as TEXTGAME_TOKENIZER
from rlvr_sim.tasks.web import EMBEDDED_TOKENIZER as WEB_TOKENIZER
from rlvr_sim.policies.pusht_bc import BCPolicy
report["tokenizers"] = [str(TEXTGAME_TOKENIZER), str(WEB_TOKENIZER)]
BCPolicy.load()
report["policy"] = "pusht_bc"
print(json.dumps(report))
'''


def test_every_embedded_model_loads_and_steps_from_the_installed_wheel(installed):
    missing = [m for m in VIDEO_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the video extra is not installed ({', '.join(missing)}): pip install '.[video]'")
    python, outside = installed
    run = subprocess.run([str(python), "-c", EVERY_EMBEDDED_MODEL], cwd=outside, capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert "site-packages" in report["assets"] and REPO not in Path(report["assets"]).parents
    embedded = sorted(p.name for p in (REPO / "assets").iterdir() if (p / "rlvr_sim.json").is_file())
    assert sorted(report["stepped"]) == embedded  # every world model of the clone, from the wheel
    assert set(report["stepped"].values()) == {"RLVRWorld-TextGame-v0", "RLVRWorld-Web-v0", "RLVRWorld-Video-v0"}
    for tokenizer in report["tokenizers"]:  # the tasks' embedded tokenizers are the installed ones
        assert Path(tokenizer).is_dir() and "site-packages" in tokenizer
