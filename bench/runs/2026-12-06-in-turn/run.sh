#!/usr/bin/env bash
# The clients' phases on a shaped link: scripts/bench-link with each link
# shared among its connections (as every earlier run; mode "shared") and
# with --in-turn DIRS (each link serving its connections one after another
# in DIRS; modes "in-turn-both", "in-turn-down", "in-turn-up", and
# "in-turn-none", only the short packets first, a control), the modes
# in turn, PAIRS times. Each run's results.txt is kept here as
# D-RATE-CLIENTS-MODE-K.txt, K numbering the passes over the modes after
# those kept already; table.py prints the tables of bench/link.md.
# Usage: bench/runs/2026-12-06-in-turn/run.sh D RATE CLIENTS SECONDS PAIRS MODE...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
d=${1:?D} rate=${2:?rate} c=${3:?clients} secs=${4:?seconds} pairs=${5:?pairs}
shift 5
last=$(ls "$here" | sed -n "s/^$d-$rate-$c-.*-\([0-9]*\)\.txt$/\1/p" | sort -n | tail -1)
for k in $(seq $((${last:--1} + 1)) $((${last:--1} + pairs))); do
    for mode in "$@"; do
        flag=()
        case "$mode" in shared) ;; in-turn-both|in-turn-down|in-turn-up|in-turn-none) flag=(--in-turn "${mode#in-turn-}") ;;
                        *) echo "run.sh: unknown mode $mode" >&2; exit 2 ;; esac
        "$top/scripts/bench-link" --prefix flI --rate "$rate" --params "$d" --clients "$c" \
            --systems fasgd1,fasgd2,pslite --seconds "$secs" --warmup 2 --rounds 3 "${flag[@]}" \
            --out "/tmp/fli-$d-$c-$mode-$k" > /dev/null
        cp "/tmp/fli-$d-$c-$mode-$k/results.txt" "$here/$d-$rate-$c-$mode-$k.txt"
    done
done
