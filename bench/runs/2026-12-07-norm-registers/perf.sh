#!/bin/bash
# The guard's norm's share of fasgd-server's CPU, OLD and this build in
# turn, PASSES times: bench-net at 1M, rule fasgd, one client process,
# two trips, a 12-s run on CPU 0 whose server perf samples for 6 s
# (from 4 s in). Kept as perf-K-old.txt and perf-K-new.txt (perf report
# by symbol) with the runs' output (perf-K-V.bench.txt); table.py reads
# them. As root.
# Usage: bench/runs/2026-12-07-norm-registers/perf.sh OLD_SERVER PASSES
#   (OLD_SERVER named fasgd-server, as perf.sh finds it by name)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
old=${1:?old fasgd-server} passes=${2:?passes}
tmp=$(mktemp -d /tmp/fasgd-norm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for k in $(seq 1 "$passes"); do
    for v in old new; do
        s=$old
        [ "$v" = new ] && s=$top/build/server/fasgd-server
        taskset -c 0 "$top/build/bench/bench-net" --server "$s" --sizes 1m --rules fasgd --clients 1 --trips 2 \
            --seconds 12 --warmup 2 --rounds 1 --client-procs > "$here/perf-$k-$v.bench.txt" &
        bench=$!
        srv=
        for i in $(seq 1 200); do
            srv=$(pgrep -P "$bench" -x fasgd-server || true)
            [ -n "$srv" ] && break
            sleep 0.1
        done
        [ -n "$srv" ] || { echo "perf.sh: no server started" >&2; exit 1; }
        sleep 4
        perf record -q -F 2000 -g -p "$srv" -o "$tmp/perf.data" -- sleep 6 > /dev/null 2>&1
        wait "$bench"
        perf report -i "$tmp/perf.data" --stdio --no-children --sort sym -g none --percent-limit 0.2 \
            > "$here/perf-$k-$v.txt" 2> /dev/null
    done
done
