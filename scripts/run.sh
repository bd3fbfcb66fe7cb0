#!/usr/bin/env bash
# Runs one command in the project's environment without touching the calling shell:
#     scripts/run.sh python scripts/check_level.py LEVEL.blend --clearance 0.05
# (sets up .venv on first use, like every script here; the command runs in the current folder).
set -euo pipefail
if [ "$#" -eq 0 ]; then
    echo "usage: scripts/run.sh COMMAND [ARGS...]" \
        "  e.g. scripts/run.sh python scripts/check_level.py LEVEL.blend" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
exec "$@"
