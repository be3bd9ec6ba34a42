"""A normal (non-editable) install carries the whole product: build the wheel, install it into a fresh
venv (reusing this interpreter's dependencies, installing nothing from the network) and import it from
outside the repository."""

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
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
