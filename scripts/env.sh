# Sourced by the project's commands: creates (once) and activates the pinned virtual environment
# in .venv, so that a fresh clone needs nothing but Python 3.11.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.requirements.sha"
WANT="$(sha256sum "$ROOT/requirements.txt" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    PY="${PYTHON:-python3.11}"
    command -v "$PY" >/dev/null 2>&1 || PY=python3
    echo "Setting up $VENV (numpy, bpy, pytest; the first time downloads about 400 MB)..." >&2
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements.txt" >&2
    echo "$WANT" > "$STAMP"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
cd "$ROOT"
