#!/usr/bin/env bash
# Install everything the tests need, then run them. Used by the README's test command and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
# the local CPU build first, so that nothing below pulls a multi-GB CUDA build of torch
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[dev,data,video,web,bench,real2sim,docs]"
if ! command -v chromium >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null
fi
# MuJoCo renders offscreen through EGL (Mesa llvmpipe on a CPU-only machine)
if ! ldconfig -p | grep -q "libEGL_mesa.so"; then
  (apt-get update -qq && apt-get install -y -qq libegl1 libegl-mesa0 libgl1-mesa-dri) >/dev/null
fi
export SDL_VIDEODRIVER=dummy MUJOCO_GL=egl
set +e
# one pytest worker per core (pytest-xdist), each test file on one worker (its module fixtures built once);
# `bash scripts/test.sh -n 0 ...` runs in one process
python -m pytest -q -p no:cacheprovider -n auto --dist loadfile "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$status"
