#!/usr/bin/env bash
# Install what the main job needs, then run it on the embedded models (the README's main command).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
# the local CPU build first, so that nothing below pulls a multi-GB CUDA build of torch
python -m pip install -q torch==2.13.0
python -m pip install -q ".[video,web]"
if ! command -v chromium >/dev/null 2>&1; then  # Debian's Chromium drives the local web site (Playwright)
  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null
fi
export SDL_VIDEODRIVER="${SDL_VIDEODRIVER:-dummy}"
exec rlvr-sim demo "$@"
