#!/bin/sh
# bench-net side by side: fasgd-server before this change (BASE, a build
# of 3a4a3ca) and with it (NEW), in turns, the order reversed every other
# round; each run's output in net-ROUND-WHICH.txt here.
# Usage: sh bench/runs/2026-12-07-nt-stores/run.sh BASE_SERVER NEW_SERVER [ROUNDS]
set -e
here=$(dirname "$0")
base=$1 new=$2 rounds=${3:-3}
bench=${BENCH_NET:-build/bench/bench-net}
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then order="base new"; else order="new base"; fi
    for which in $order; do
        if [ "$which" = base ]; then server=$base; else server=$new; fi
        "$bench" --server "$server" --sizes 784-2500-10,10m --rules asgd,fasgd --clients 1,4 --trips 1 \
            --rounds 3 --seconds 3 > "$here/net-$r-$which.txt" 2>&1
    done
done
