#!/bin/sh
# experiments/data/turn-lengths/README.md shows what report.py beside it
# makes of the turns kept there, every line as printed; and the honest
# turns tests/test_turn_slow.c draws from (its s_ms table) are the ones
# report.py finds in them. TAP.
tap_name=turn-lengths-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..3"
dir="$top_src/experiments/data/turn-lengths"
report() {
    "$python" "$dir/report.py" > "$tmp/out" 2> "$tmp/err" && grep -q '^static const double s_ms' "$tmp/out"
}
check "report.py prints its figures from the kept turns" report
check "its README.md has every line of it" lines_in_page "$tmp/out" "$dir/README.md" "    "
# The numbers of a C initializer named s_ms, one a line.
numbers() { sed -n '/s_ms \[\] =/,/;/p' "$1" | tr -c '0-9.\n' '\n' | grep -E '^[0-9]+\.[0-9]+$'; }
same_table() {
    [ -s "$tmp/out" ] || return 1
    numbers "$tmp/out" > "$tmp/a" && numbers "$top_src/tests/test_turn_slow.c" > "$tmp/b" && [ -s "$tmp/a" ] &&
        cmp -s "$tmp/a" "$tmp/b"
}
check "tests/test_turn_slow.c draws from the table report.py prints" same_table
exit $((failed > 0))
