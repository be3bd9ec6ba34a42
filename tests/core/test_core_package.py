"""A normal (non-editable) install carries the whole product: build the wheel, install it into a fresh
venv (reusing this interpreter's dependencies, installing nothing from the network) and import it from
outside the repository."""

import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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


def test_wheel_installs_and_imports_outside_repo(tmp_path):
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    wheel = next(dist.glob("rlvr_sim-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("rlvr_sim/envs/__init__.py", "rlvr_sim/training/grpo.py", "rlvr_sim/training/configs/addition_grpo.yaml",
                     "rlvr_sim/evaluations/__init__.py", "rlvr_sim/policies/__init__.py", "rlvr_sim/assets/__init__.py"):
        assert expected in names, expected
    env_dir = tmp_path / "venv"
    python = _venv_seeing_running_packages(env_dir)
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
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
    cli = subprocess.run([str(env_dir / "bin" / "rlvr-sim"), "--help"], cwd=outside, capture_output=True, text=True)
    assert cli.returncode == 0 and "demo" in cli.stdout
