#!/usr/bin/env bash
# The test command (README, .ci/run): sets up the pinned environment if needed, runs every test,
# the Blender ones through the bpy module. Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
python -m pytest -q "$@" tests
