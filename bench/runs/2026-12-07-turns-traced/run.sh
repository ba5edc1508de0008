#!/usr/bin/env bash
# The link traced while bench-link runs fasgd1+turns and fasgd1 with 2
# and with 16 compute-free clients (D = 1M, 200 Mbit/s, one round each,
# as root): each run's results.txt kept as CLIENTS.txt, phases.py's
# lines, each after its system's name, as CLIENTS.phases; the raw traces
# (15-40 MB) only in /tmp.
# Usage: run.sh [BUILD]   (environment: OUT, default this folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=${1:-$top/build}
out=${OUT:-$here}
mkdir -p "$out"
for clients in 2 16; do
    tmp=$(mktemp -d /tmp/fasgd-turns-traced-XXXXXX)
    "$here/trace.sh" "$tmp/trace" -- "$top/scripts/bench-link" --build "$build" --systems fasgd1+turns,fasgd1 \
        --rate 2e8 --params 1000000 --clients "$clients" --seconds 6 --warmup 2 --rounds 1 --out "$tmp/bl" > /dev/null
    cp "$tmp/bl/results.txt" "$out/$clients.txt"
    # phases.py's runs in the order of the round's systems
    paste -d' ' <(sed -n 's/^round 1 \([^:]*\):.*/\1:/p' "$tmp/bl/results.txt") \
        <("$here/phases.py" "$tmp/trace" 2e8) > "$out/$clients.phases"
    echo "$clients clients: trace in $tmp/trace"
    cat "$out/$clients.phases"
done
