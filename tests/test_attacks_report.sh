#!/bin/sh
# experiments/attacks.md is what `scripts/attacks --report` makes of the
# runs kept in experiments/data/attacks/runs.csv, byte for byte: the report
# is never edited by hand, and every figure in it traces to a kept run. TAP.
tap_name=attacks-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..2"
kept="$top_src/experiments/data/attacks/runs.csv"
if [ ! -f "$kept" ]; then
    echo "ok 1 # SKIP no kept attack runs"; echo "ok 2 # SKIP no kept attack runs"; exit 0
fi
regenerate() { python3 "$top_src/scripts/attacks-report" "$kept" --output "$tmp/attacks.md" > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept runs" regenerate
check "byte-identical to experiments/attacks.md" cmp "$tmp/attacks.md" "$top_src/experiments/attacks.md"
exit $failed
