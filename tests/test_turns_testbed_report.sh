#!/bin/sh
# experiments/turns-testbed.md, turns-het.md and guard-het.md show what
# their report.py (experiments/data/turns-testbed/, .../turns-het/,
# .../guard-het/) makes of the runs kept beside it: every line the
# report prints is in the page, as printed. TAP.
tap_name=turns-testbed-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..6"
# page, the report's folder, a line the report must print
for case in "turns-testbed turns-testbed ^| on | 4 |" "turns-het turns-het ^| onng | 3 |" \
            "guard-het guard-het ^| hom5ng | 2 |"; do
    set -- $case
    name=$1 dir=$2; shift 2; want="$*"
    page="$top_src/experiments/$name.md"
    report() {
        "$python" "$top_src/experiments/data/$dir/report.py" > "$tmp/out" 2> "$tmp/err" && grep -q "$want" "$tmp/out"
    }
    check "$dir/report.py prints the table from the kept runs" report
    check "experiments/$name.md has every line of it" lines_in_page "$tmp/out" "$page" ""
    rm -f "$tmp/out"
done
exit $((failed > 0))
