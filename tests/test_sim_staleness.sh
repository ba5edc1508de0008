#!/bin/sh
# experiments/sim-staleness.md is what `scripts/sim-staleness --report`
# makes of the data kept in experiments/data/sim-staleness/, byte for
# byte: the report is never edited by hand, and its figures can be traced
# to kept runs. TAP.
tap_name=sim-staleness
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..2"
kept="$top_src/experiments/data/sim-staleness"
if [ ! -f "$kept/finals.csv" ]; then
    echo "ok 1 # SKIP no kept sim-staleness data"; echo "ok 2 # SKIP no kept sim-staleness data"; exit 0
fi
regenerate() { "$python" "$top_src/scripts/sim-staleness" --report --output "$tmp/report.md" > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept data" regenerate
check "byte-identical to experiments/sim-staleness.md" cmp "$tmp/report.md" "$top_src/experiments/sim-staleness.md"
exit $failed
