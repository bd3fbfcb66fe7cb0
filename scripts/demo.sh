#!/usr/bin/env bash
# The main job (README): builds the demo level, checks it for overlaps and clearance violations,
# prints the report and writes out/report.json, out/report.csv and out/findings.png.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python scripts/demo_level.py "$@"
