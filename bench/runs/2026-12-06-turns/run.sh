#!/usr/bin/env bash
# Replies in turn on a shaped link: scripts/bench-link with fasgd-server's
# replies side by side (fasgd1, fasgd2: every earlier run's server) and in
# turn (fasgd1+turns, fasgd2+turns: turns.enabled), ps-lite beside them,
# on a link that shares itself among its connections (no --in-turn).
# PASSES runs, each kept here (or in $OUT) as D-RATE-CLIENTS-K.txt, K
# numbering the runs after those kept already; table.py prints the
# tables of bench/link.md. $SYSTEMS, bench-link's --systems, replaces
# the list above.
# Usage: [OUT=DIR] [SYSTEMS=LIST] bench/runs/2026-12-06-turns/run.sh D RATE CLIENTS SECONDS PASSES
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
d=${1:?D} rate=${2:?rate} c=${3:?clients} secs=${4:?seconds} passes=${5:?passes}
out=${OUT:-$here} systems=${SYSTEMS:-fasgd1,fasgd1+turns,fasgd2,fasgd2+turns,pslite}
mkdir -p "$out"
last=$(ls "$out" | sed -n "s/^$d-$rate-$c-\([0-9]*\)\.txt$/\1/p" | sort -n | tail -1)
for k in $(seq $((${last:--1} + 1)) $((${last:--1} + passes))); do
    "$top/scripts/bench-link" --prefix flR --rate "$rate" --params "$d" --clients "$c" \
        --systems "$systems" --seconds "$secs" --warmup 2 --rounds 3 \
        --out "/tmp/flr-$d-$c-$k" > /dev/null
    cp "/tmp/flr-$d-$c-$k/results.txt" "$out/$d-$rate-$c-$k.txt"
done
