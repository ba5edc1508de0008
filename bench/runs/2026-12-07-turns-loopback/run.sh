#!/usr/bin/env bash
# Replies in turn on loopback, where nothing is shared but the CPU:
# scripts/cluster (the README's run: fasgd-server, three fasgd-clients
# and a fourth joining mid-run, --steps STEPS each) with turns.enabled
# false and true, alternating, their order reversed every other round.
# Kept here as turns-{off,on}-rK.out (cluster's output) and .csv (the
# server's validation CSV); table.py prints bench/link.md's table.
# Usage: bench/runs/2026-12-07-turns-loopback/run.sh ROUNDS STEPS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
rounds=${1:?ROUNDS} steps=${2:?STEPS}
for k in $(seq 1 "$rounds"); do
    order="off on"; [ $((k % 2)) = 0 ] && order="on off"
    for t in $order; do
        sets=(); [ "$t" = on ] && sets=(--set turns.enabled=true)
        "$top/scripts/cluster" --steps "$steps" --csv "$here/turns-$t-r$k.csv" "${sets[@]+"${sets[@]}"}" \
            > "$here/turns-$t-r$k.out" 2>&1
    done
done
