#!/usr/bin/env bash
# Replies in turn on a link that serves short packets first: scripts/
# bench-link with fasgd1 and fasgd1+turns, each link shared among its
# connections (mode "shared", as by default) and with --in-turn none (mode
# "acks-first": packets under 128 bytes, the ACKs, first both ways, the
# rest shared), the modes in turn, PAIRS times. Each run's results.txt is
# kept here as CLIENTS-MODE-K.txt, K numbering the passes after those kept
# already; table.py prints the tables of bench/link.md.
# Usage: bench/runs/2026-12-07-turns-acks-first/run.sh CLIENTS PAIRS [D RATE SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
c=${1:?clients} pairs=${2:?pairs} d=${3:-1000000} rate=${4:-2e8} secs=${5:-5}
last=$(ls "$here" | sed -n "s/^$c-.*-\([0-9]*\)\.txt$/\1/p" | sort -n | tail -1)
for k in $(seq $((${last:--1} + 1)) $((${last:--1} + pairs))); do
    for mode in shared acks-first; do
        flag=()
        [ "$mode" = shared ] || flag=(--in-turn none)
        "$top/scripts/bench-link" --build "$top/build" --prefix flA --rate "$rate" --params "$d" --clients "$c" \
            --systems fasgd1,fasgd1+turns --seconds "$secs" --warmup 2 --rounds 3 "${flag[@]}" \
            --out "/tmp/fla-$c-$mode-$k" > /dev/null
        cp "/tmp/fla-$c-$mode-$k/results.txt" "$here/$c-$mode-$k.txt"
    done
done
