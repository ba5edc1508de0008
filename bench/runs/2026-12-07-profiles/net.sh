#!/bin/sh
# bench-net --pslite at 1M, everything on CPU 0: OLD (a bench-net whose
# client sends its gradient from where malloc put it: a build of main at
# 570416f) and this build's (the gradient at a page's start), OLD first,
# PASSES times; kept as net-K-old.txt and net-K-new.txt, K numbering the
# passes. table.py prints them.
# Usage: bench/runs/2026-12-07-profiles/net.sh OLD_BENCH_NET PASSES   (ps-lite built)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
old=${1:?old bench-net} passes=${2:?passes}
for k in $(seq 1 "$passes"); do
    for v in old new; do
        b=$old
        [ "$v" = new ] && b=$top/build/bench/bench-net
        taskset -c 0 "$b" --server "$top/build/server/fasgd-server" --pslite "$top/../shared/peers/ps-lite" \
            --sizes 1m --rules asgd,fasgd --clients 1,4 --trips 2 --seconds 5 --warmup 1 --rounds 3 \
            > "$here/net-$k-$v.txt"
    done
done
