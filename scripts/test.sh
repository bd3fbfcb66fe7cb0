#!/usr/bin/env bash
# The test command (README, .ci/run): sets up the pinned environment if needed, runs every test,
# the Blender ones through the bpy module. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python -m pytest -q "$@" tests
