#!/usr/bin/env bash
# The bound of a turn that follows the link (turns.hold_factor 4,
# turns.hold_min_ms 100, turns.hold_ms 2000: the defaults since
# 2026-12-07): scripts/bench-link on a link that shares itself, SYSTEMS in
# turn within each of three rounds; each round line of a +turns system
# says how many turns its servers cut. Kept as D-RATE-CLIENTS-NAME.txt,
# bench-link's results.txt with its own table.
# Usage: bench/runs/2026-12-07-turn-hold/run.sh D RATE CLIENTS SECONDS SYSTEMS NAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
d=${1:?D} rate=${2:?rate} c=${3:?clients} secs=${4:?seconds} systems=${5:?systems} name=${6:?name}
"$top/scripts/bench-link" --prefix flH --rate "$rate" --params "$d" --clients "$c" --systems "$systems" \
    --seconds "$secs" --warmup 2 --rounds 3 --out "/tmp/flh-$d-$c-$name" > /dev/null
cp "/tmp/flh-$d-$c-$name/results.txt" "$here/$d-$rate-$c-$name.txt"
