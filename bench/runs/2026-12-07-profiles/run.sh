#!/usr/bin/env bash
# Where a step's server CPU goes at D = 1M (1,000,900), one client, two
# trips, every process on CPU 0: ps-lite's server and fasgd-server with
# asgd, fasgd and fasgd without its push guard (bench-net's RULE+noguard),
# in turn, ROUNDS times. Each run lasts 12 s after 2 s of warm-up; its
# server and its client are sampled by perf for 6 s of them (from 4 s
# after they start). Kept here for each system SYS and round K:
# SYS-K.bench.txt (the run's output), SYS-K.perf.txt and
# SYS-K.client.perf.txt (perf report by symbol of the server and of the
# client, the symbols above 0.2%); then bench-rules' passes at the same D on CPU 0, rules-K.txt.
# table.py prints bench/net.md's tables from them.
# Usage: bench/runs/2026-12-07-profiles/run.sh ROUNDS
#   as root (perf -p), from anywhere, the build in build/ (make bench/bench-net bench/bench-rules)
#   and ps-lite built (../shared/peers/ps-lite/build.sh; FASGD_PSLITE=DIR to
#   name another copy of its harness)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
pslite=${FASGD_PSLITE:-$top/../shared/peers/ps-lite}
rounds=${1:?rounds}
command -v perf > /dev/null || { echo "run.sh: perf is not installed" >&2; exit 1; }
for b in bench-net bench-rules; do
    [ -x "$top/build/bench/$b" ] || { echo "run.sh: build bench/$b in $top/build first" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/fasgd-prof.XXXXXX)
bench=
trap '[ -n "$bench" ] && kill -- "$bench" 2> /dev/null; rm -rf "$tmp"' EXIT

# descends PID ANCESTOR: whether PID's parents lead to ANCESTOR
descends() {
    local p=$1 n
    for n in 1 2 3 4 5 6; do
        p=$(awk '{print $4}' "/proc/$p/stat" 2> /dev/null) || return 1
        [ "$p" = "$2" ] && return 0
        [ "$p" -gt 1 ] || return 1
    done
    return 1
}

# pid_of BENCH SYS ROLE: the pid of the server or the client (ROLE) that
# BENCH started (waits 20 s at most)
pid_of() {
    local i p
    for i in $(seq 1 200); do
        if [ "$2" = pslite ]; then
            for p in $(pgrep -x bench_pushpull || true); do
                if tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "DMLC_ROLE=${3/client/worker}" \
                   && descends "$p" "$1"; then
                    echo "$p"
                    return 0
                fi
            done
        elif [ "$3" = server ]; then
            for p in $(pgrep -P "$1" -x fasgd-server || true); do
                echo "$p"
                return 0
            done
        else
            for p in $(pgrep -P "$1" -f -- --client-proc || true); do
                echo "$p"
                return 0
            done
        fi
        sleep 0.1
    done
    return 1
}

last=$(ls "$here" | sed -n 's/^asgd-\([0-9]*\)\.bench\.txt$/\1/p' | sort -n | tail -1)
for k in $(seq $((${last:-0} + 1)) $((${last:-0} + rounds))); do
    for sys in pslite asgd fasgd fasgd+noguard; do
        if [ "$sys" = pslite ]; then
            PSLITE_MALLOC_KEEP=1 PSLITE_WARMUP=2 taskset -c 0 "$pslite/run.sh" 1000900 1 12 \
                > "$tmp/bench.txt" 2>&1 &
        else
            taskset -c 0 "$top/build/bench/bench-net" --server "$top/build/server/fasgd-server" --sizes 1m \
                --rules "$sys" --clients 1 --trips 2 --seconds 12 --warmup 2 --rounds 1 --client-procs \
                > "$tmp/bench.txt" 2>&1 &
        fi
        bench=$!
        srv=$(pid_of "$bench" "$sys" server) || { echo "run.sh: no server of $sys started" >&2; exit 1; }
        cli=$(pid_of "$bench" "$sys" client) || { echo "run.sh: no client of $sys started" >&2; exit 1; }
        sleep 4
        perf record -q -F 2000 -g -p "$cli" -o "$tmp/client.data" -- sleep 6 > /dev/null 2>&1 &
        perf record -q -F 2000 -g -p "$srv" -o "$tmp/perf.data" -- sleep 6 > /dev/null 2>&1
        wait $!
        wait "$bench" || { cat "$tmp/bench.txt" >&2; echo "run.sh: $sys failed in round $k" >&2; exit 1; }
        bench=
        cp "$tmp/bench.txt" "$here/$sys-$k.bench.txt"
        perf report -i "$tmp/perf.data" --stdio --no-children --sort sym -g none --percent-limit 0.2 \
            > "$here/$sys-$k.perf.txt" 2> /dev/null
        perf report -i "$tmp/client.data" --stdio --no-children --sort sym -g none --percent-limit 0.2 \
            > "$here/$sys-$k.client.perf.txt" 2> /dev/null
        echo "round $k: $sys done" >&2
    done
    # the passes alone, and their floors, on the same CPU
    taskset -c 0 "$top/build/bench/bench-rules" --dim 1000900 --rules asgd,fasgd --rounds 5 > "$here/rules-$k.txt"
done
