# Sourced by the project's commands, and safe to source in an interactive shell: creates (once)
# and activates the pinned virtual environment in .venv and puts the repository on PYTHONPATH,
# so that a fresh clone needs nothing but Python 3.11.
#
# It changes nothing else in the calling shell: no shell options (the scripts that source it set
# their own), no working directory, no variables besides the venv's and PYTHONPATH. To run one
# command without sourcing anything: scripts/run.sh python scripts/check_level.py LEVEL.blend
if [ -z "${BASH_VERSION:-}" ]; then
    echo "scripts/env.sh: source it from bash (or run: scripts/run.sh COMMAND)" >&2
    return 2 2>/dev/null || exit 2
fi
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "scripts/env.sh must be sourced (source scripts/env.sh)," \
        "or use: scripts/run.sh COMMAND" >&2
    exit 2
fi

# Everything in a function with local variables, so that nothing leaks into the caller's shell.
_convex_tools_env() {
    local root venv stamp want py
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
    venv="$root/.venv"
    stamp="$venv/.requirements.sha"
    want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)" || return 1
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        py="${PYTHON:-python3.11}"
        command -v "$py" >/dev/null 2>&1 || py=python3
        echo "Setting up $venv (numpy, bpy, pytest; the first time downloads about 400 MB)..." >&2
        "$py" -m venv "$venv" || return 1
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            -r "$root/requirements.txt" >&2 || return 1
        echo "$want" > "$stamp"
    fi
    # shellcheck disable=SC1091
    source "$venv/bin/activate" || return 1
    case ":${PYTHONPATH:-}:" in
        *":$root:"*) ;;   # sourced twice: keep PYTHONPATH as it is
        *) export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" ;;
    esac
}
if _convex_tools_env; then
    unset -f _convex_tools_env
else
    unset -f _convex_tools_env
    echo "scripts/env.sh: setting up the environment failed (see above)" >&2
    return 1
fi
