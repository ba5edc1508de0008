#!/bin/sh
# The client's CPU a step against where its gradient starts in a page
# (bench-net --grad-offset): asgd at 1M, one client process, two trips,
# everything on CPU 0, one 3-s interval a figure, the offsets in turn,
# PASSES times; kept as offsets-K.txt (each offset's bench-net output
# after a line "## offset B"). table.py --offsets prints the table.
# Usage: bench/runs/2026-12-07-profiles/offsets.sh PASSES
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
passes=${1:?passes}
for k in $(seq 1 "$passes"); do
    for off in 0 8 16 24 32 40 48 64 128 2064 4080; do
        echo "## offset $off"
        taskset -c 0 "$top/build/bench/bench-net" --server "$top/build/server/fasgd-server" --sizes 1m \
            --rules asgd --clients 1 --trips 2 --seconds 3 --warmup 1 --rounds 1 --client-procs --grad-offset "$off"
    done > "$here/offsets-$k.txt"
done
