#!/usr/bin/env bash
# Replies without a turn in their order (new) or at once (base), side
# by side: scripts/bench-link with one system, fasgd1+turns, run from
# each build in turn, ROUNDS rounds; each run's results.txt and its
# server's lines of the clients' pushes kept as OUT/NAME-R.{txt,pushes}.
# Usage: run.sh BASE_BUILD NEW_BUILD [ROUNDS] [CLIENTS] [PARAMS] [RATE]
#   (environment: OUT, default this folder; EXTRA, more bench-link options:
#   the runs in cubic/ had EXTRA='--cc cubic', the host's root having added
#   cubic to net.ipv4.tcp_allowed_congestion_control for them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
base=$1 new=$2 rounds=${3:-3} clients=${4:-16} params=${5:-1000000} rate=${6:-2e8}
out=${OUT:-$here}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
    order="base new"
    [ $((r % 2)) = 0 ] && order="new base"
    for name in $order; do
        build=$base
        [ "$name" = new ] && build=$new
        tmp=$(mktemp -d /tmp/fasgd-turns-order-XXXXXX)
        # shellcheck disable=SC2086
        "$top/scripts/bench-link" --build "$build" --systems fasgd1+turns --rate "$rate" --params "$params" \
            --clients "$clients" --seconds 6 --warmup 2 --rounds 1 --out "$tmp" ${EXTRA:-} > /dev/null
        cp "$tmp/results.txt" "$out/$name-$r.txt"
        grep -o 'client [0-9]* ([^)]*) left after [0-9]* pushes' "$tmp/s0.log" > "$out/$name-$r.pushes" || true
        rm -rf "$tmp"
        echo "round $r $name: $(grep '^round' "$out/$name-$r.txt")"
    done
done
