#!/bin/sh
# experiments/baselines.md is what `scripts/baselines --report` makes of the
# data kept in experiments/data/baselines/, byte for byte: the report is
# never edited by hand, and its numbers can be traced to kept runs. TAP.
tap_name=baselines
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..2"
kept="$top_src/experiments/data/baselines"
if [ ! -f "$kept/finals.csv" ]; then
    echo "ok 1 # SKIP no kept baselines data"; echo "ok 2 # SKIP no kept baselines data"; exit 0
fi
regenerate() { python3 "$top_src/scripts/baselines" --report --plot '' --output "$tmp/baselines.md" > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept data" regenerate
check "byte-identical to experiments/baselines.md" cmp "$tmp/baselines.md" "$top_src/experiments/baselines.md"
exit $failed
