#!/bin/sh
# experiments/turns-testbed.md shows what experiments/data/turns-testbed/
# report.py makes of the runs kept beside it: every line the report
# prints is in the page, as printed. TAP.
tap_name=turns-testbed-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..2"
page="$top_src/experiments/turns-testbed.md"
report() {
    "$python" "$top_src/experiments/data/turns-testbed/report.py" > "$tmp/out" 2> "$tmp/err" &&
        grep -q '^| on | 4 |' "$tmp/out"
}
check "report.py prints the table from the kept runs" report
in_page() {
    [ -s "$tmp/out" ] || return 1
    grep -v '^$' "$tmp/out" > "$tmp/lines"
    while IFS= read -r line; do
        grep -qxF -- "$line" "$page" || { echo "not in the page: $line" >> "$tmp/err"; return 1; }
    done < "$tmp/lines"
}
check "experiments/turns-testbed.md has every line of it" in_page
