#!/bin/sh
# scripts/paper-report's verdicts over seeds, on hand-made Fig. 2 CSVs of
# three seeds: a point lower than another at every seed is "lower", ranges
# that overlap are "within noise" (and the claim says so), whatever their
# means; the band files carry each iteration's mean, smallest and largest
# running mean over the seeds. Reports TAP.
tap_name=paper-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
report="$top_src/scripts/paper-report"
echo "1..5"

# csv FILE ERROR: a complete 100,000-iteration run whose validation error
# is ERROR at every row.
csv() {
    {
        echo "iteration,timestamp,val_error,val_nll"
        i=0
        while [ $i -le 100000 ]; do echo "$i,$i,$2,0.5"; i=$((i + 10000)); done
    } > "$1"
}
# fig2 DIR FASGD SASGD: every λ of Fig. 2, fasgd's seeds 1 2 3 at the three
# errors of FASGD and sasgd's at SASGD's; the gap grows with λ by 0.1 a step.
fig2() {
    mkdir -p "$1"
    k=0
    for lam in 250 500 1000 10000; do
        s=1
        for e in $2; do csv "$1/fig2-128x$lam-fasgd-a0.005-s$s.csv" "$e"; s=$((s + 1)); done
        s=1
        for e in $3; do
            csv "$1/fig2-128x$lam-sasgd-a0.04-s$s.csv" "$(awk -v e="$e" -v k=$k 'BEGIN { print e + 0.1 * k }')"
            s=$((s + 1))
        done
        k=$((k + 1))
    done
}

fig2 "$tmp/apart" "0.05 0.06 0.07" "0.08 0.09 0.10"
"$python" "$report" --results "$tmp/apart" --output "$tmp/apart.md" --seeds "1 2 3" > "$tmp/out" 2> "$tmp/err"
check "a report from three seeds" [ -s "$tmp/apart.md" ]
check "ranges apart: fasgd beats sasgd at every λ, the gap grows: held" \
    grep -q "Fig. 2: fasgd (std) beats sasgd at every λ and the gap grows with λ: held\*\* (fasgd (std) lower beyond the seeds' spread at 4 of 4" "$tmp/apart.md"
check "cells give the mean and the seeds' range" grep -q "| 0.0600 (0.0500–0.0700) |" "$tmp/apart.md"

# The same means, but each seed's fasgd above the lowest sasgd of λ = 250.
fig2 "$tmp/overlap" "0.03 0.06 0.09" "0.06 0.09 0.12"
"$python" "$report" --results "$tmp/overlap" --output "$tmp/overlap.md" --seeds "1 2 3" > "$tmp/out" 2> "$tmp/err"
check "ranges that overlap at λ = 250 are within noise there, and the claim is not held" \
    grep -q "beats sasgd at every λ and the gap grows with λ: partly held\*\* (fasgd (std) lower beyond the seeds' spread at 3 of 4 λ, within noise at 1" "$tmp/overlap.md"
check "a band file: iteration, mean, smallest, largest" \
    grep -qx "100000 0.060000 0.030000 0.090000" "$tmp/overlap/band-fig2-128x250-fasgd-a0.005.dat"
exit $((failed > 0))
