#!/bin/sh
# docs/RESULTS.md is what scripts/paper-report makes of the runs kept in
# experiments/data/paper/ (and the experiments/*.md it includes), byte for
# byte, in under a minute and with no simulation: the report is never
# edited by hand, and every number in it traces to a kept run. TAP.
tap_name=results
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2> /dev/null; then
    echo "1..0 # SKIP $python (3.6 or later) not found"; exit 0
fi
echo "1..3"
kept="$top_src/experiments/data/paper"
check "runs are kept (experiments/data/paper/runs.csv)" test -s "$kept/runs.csv"
regenerate() {
    t0=$(date +%s)
    "$python" "$top_src/scripts/paper-report" --results "$kept" --output "$tmp/RESULTS.md" --figures '' \
        > "$tmp/out" 2> "$tmp/err" && [ $(($(date +%s) - t0)) -lt 60 ]
}
check "the report regenerates from the kept runs in under a minute" regenerate
# A change to the grid, the report's code or an included experiments/*.md
# needs the report remade: scripts/paper-report (seconds, no simulation).
check "byte-identical to docs/RESULTS.md (if not: run scripts/paper-report and commit its output)" \
    cmp "$tmp/RESULTS.md" "$top_src/docs/RESULTS.md"
exit $failed
