#!/bin/sh
# experiments/attacks.md is what `scripts/attacks --report` makes of the
# runs kept in experiments/data/attacks/runs.csv, byte for byte: the report
# is never edited by hand, and every figure in it traces to a kept run; the
# same for the report.md kept beside the runs of experiments/data/attacks-tiny,
# attacks-standing and attacks-frog. TAP.
tap_name=attacks-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..4"
kept="$top_src/experiments/data/attacks/runs.csv"
if [ ! -f "$kept" ]; then
    for i in 1 2 3 4; do echo "ok $i # SKIP no kept attack runs"; done; exit 0
fi
regenerate() { python3 "$top_src/scripts/attacks-report" "$kept" --output "$tmp/attacks.md" > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept runs" regenerate
check "byte-identical to experiments/attacks.md" cmp "$tmp/attacks.md" "$top_src/experiments/attacks.md"
same() {
    for d in "$top_src"/experiments/data/attacks-tiny/*/ "$top_src"/experiments/data/attacks-standing/*/ \
             "$top_src"/experiments/data/attacks-frog/*/; do
        python3 "$top_src/scripts/attacks-report" "$d/runs.csv" --output "$tmp/r.md" > "$tmp/out" 2> "$tmp/err" \
            && cmp "$tmp/r.md" "$d/report.md" || return 1
    done
}
check "experiments/data/attacks-tiny holds both runs and reports" \
    test -f "$top_src/experiments/data/attacks-tiny/fasgd/report.md" -a -f "$top_src/experiments/data/attacks-tiny/fasgd-norm/report.md"
check "each of their reports (and attacks-standing's and attacks-frog's) is what its runs make, byte for byte" same
exit $failed
