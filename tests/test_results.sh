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
echo "1..5"
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
# The headline's own claims agree with the reports that judge them from
# their own data: each tuned comparison of experiments/baselines.md with
# its verdict, and each part of experiments/ablation.md with its counts.
tuned_agree() {
    grep "^| Fig.*each rule at its best" "$top_src/experiments/baselines.md" \
        | awk -F' [|] ' '{ sub(/^[|] /, "", $1); print $1 "\t" $2 }' > "$tmp/tuned"
    [ -s "$tmp/tuned" ] || return 1
    while IFS="$(printf '\t')" read -r claim verdict; do
        grep -qF "| Tuned baselines, $claim (" "$tmp/RESULTS.md" || return 1
        grep -F "| Tuned baselines, $claim (" "$tmp/RESULTS.md" | grep -qF "| $verdict |" || return 1
    done < "$tmp/tuned"
}
ablation_agree() {
    for pair in "fasgd fasgd-norm" "fasgd sasgd"; do
        a=${pair% *} b=${pair#* }
        line=$(grep -F "($a − $b): lower beyond noise" "$top_src/experiments/ablation.md") || return 1
        counts=$(printf '%s\n' "$line" | sed -n 's/.*lower beyond noise in \([0-9]*\) of \([0-9]*\) settings, higher in \([0-9]*\), within noise in \([0-9]*\).*/\1 \/ \4 \/ \3 of \2/p')
        grep "^| Ablation, which part carries FASGD's gain" "$tmp/RESULTS.md" | grep -F "($a ends lower than $b)" \
            | grep -qF "| $counts |" || return 1
    done
}
if [ -f "$top_src/experiments/data/baselines/finals.csv" ]; then
    check "the headline's tuned baselines carry experiments/baselines.md's verdicts" tuned_agree
else
    echo "ok 4 # SKIP no kept baselines data"
fi
if [ -f "$top_src/experiments/data/ablation/finals.csv" ]; then
    check "the headline's ablation rows carry experiments/ablation.md's counts" ablation_agree
else
    echo "ok 5 # SKIP no kept ablation data"
fi
exit $failed
