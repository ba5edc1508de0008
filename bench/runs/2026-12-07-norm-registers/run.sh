#!/bin/sh
# fasgd-server before (OLD, a build of 99a7db9: the guard's norm summing
# its 16 lanes through memory) and after (this build: in registers), in
# turn, OLD first, PASSES times: bench-net at 1M, asgd and fasgd, one
# and four client processes, two trips, everything on CPU 0. Kept as
# K-old.txt and K-new.txt; table.py prints the table.
# Usage: bench/runs/2026-12-07-norm-registers/run.sh OLD_SERVER PASSES
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
old=${1:?old fasgd-server} passes=${2:?passes}
for k in $(seq 1 "$passes"); do
    for v in old new; do
        s=$old
        [ "$v" = new ] && s=$top/build/server/fasgd-server
        taskset -c 0 "$top/build/bench/bench-net" --server "$s" --sizes 1m --rules asgd,fasgd --clients 1,4 \
            --trips 2 --seconds 5 --warmup 1 --rounds 3 --client-procs > "$here/$k-$v.txt"
    done
done
