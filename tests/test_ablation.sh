#!/bin/sh
# experiments/ablation.md is what `scripts/ablation --report` makes of the
# data kept in experiments/data/ablation/, byte for byte: the report is
# never edited by hand, and its figures can be traced to kept runs. TAP.
tap_name=ablation
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..2"
kept="$top_src/experiments/data/ablation"
if [ ! -f "$kept/finals.csv" ]; then
    echo "ok 1 # SKIP no kept ablation data"; echo "ok 2 # SKIP no kept ablation data"; exit 0
fi
regenerate() { python3 "$top_src/scripts/ablation" --report --output "$tmp/ablation.md" > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept data" regenerate
check "byte-identical to experiments/ablation.md" cmp "$tmp/ablation.md" "$top_src/experiments/ablation.md"
exit $failed
