"""The shell entry points: sourcing ``scripts/env.sh`` leaves the user's shell as it was, and
``scripts/run.sh`` runs one command in the environment without any sourcing."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV_SH = os.path.join(ROOT, "scripts", "env.sh")
RUN_SH = os.path.join(ROOT, "scripts", "run.sh")


def bash(script, cwd):
    return subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_sourcing_env_sh_keeps_the_shells_options_folder_and_variables(tmp_path):
    # An interactive shell has errexit, nounset and pipefail off: after sourcing they must still
    # be off (a leaked `set -e` closed the user's shell when check_level.py exited with 1).
    script = f"""
        ROOT=mine; VENV=mine; WANT=mine
        before="$(set -o; shopt -p)"
        source '{ENV_SH}' || echo "SOURCE FAILED"
        after="$(set -o; shopt -p)"
        [ "$before" = "$after" ] && echo "OPTIONS KEPT"
        [ "$PWD" = '{tmp_path}' ] && echo "FOLDER KEPT"
        echo "VARIABLES $ROOT $VENV $WANT"
        false
        echo "STILL RUNNING"
        python -c 'import convex_tools, numpy; print("IMPORTS", convex_tools.__file__)'
    """
    done = bash(script, tmp_path)
    out = done.stdout
    assert "SOURCE FAILED" not in out, done.stderr
    assert "OPTIONS KEPT" in out, done.stderr
    assert "FOLDER KEPT" in out
    assert "VARIABLES mine mine mine" in out
    assert "STILL RUNNING" in out
    assert f"IMPORTS {os.path.join(ROOT, 'convex_tools', '__init__.py')}" in out, done.stderr


def test_env_sh_run_instead_of_sourced_says_how_to_use_it(tmp_path):
    done = bash(f"bash '{ENV_SH}'", tmp_path)
    assert done.returncode == 2
    assert "must be sourced" in done.stderr and "scripts/run.sh" in done.stderr


def test_run_sh_runs_the_command_in_the_callers_folder_and_passes_its_exit_code(tmp_path):
    done = subprocess.run([RUN_SH, "python", "-c",
                           "import os, sys, convex_tools; print(os.getcwd()); sys.exit(3)"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == str(tmp_path)
    done = subprocess.run([RUN_SH], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and "usage: scripts/run.sh" in done.stderr
