#!/usr/bin/env bash
# Long random runs of the contract tests (docs/ARCHITECTURE.md, "Known limits at the edge of
# float precision"): for each seed given, test_contracts' every-query property at 3,000 examples
# and test_extreme_ratios' at 1,500, not derandomized; about 30 s a seed on one core. Prints a
# line a seed, and each failure's falsifying example, which replays with the test's
# ``.hypothesis.inner_test(...)``. Exit status 1 if any seed failed.
#
#   bash scripts/random_runs.sh 2001 2002 2003      # or: $(seq 2001 2026)
set -uo pipefail
if [ $# -eq 0 ]; then
    echo "usage: bash scripts/random_runs.sh SEED [SEED ...]" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
failed=0
for seed in "$@"; do
    if env -u CI RANDOM_RUNS=1 python -m pytest -q -p no:cacheprovider \
            "tests/test_extreme_ratios.py::test_every_query_is_exact_relative_to_the_smaller_shape" \
            "tests/test_contracts.py::test_every_query_keeps_its_contract" \
            --hypothesis-seed="$seed" >"$out" 2>&1; then
        echo "seed $seed: $(tail -n 1 "$out")"
    else
        failed=1
        echo "seed $seed: FAILED"
        grep -E "^E  " "$out" | grep -v "^E *$" | head -n 40 | sed "s/^/    /"
        tail -n 1 "$out" | sed "s/^/    /"
    fi
done
exit "$failed"
