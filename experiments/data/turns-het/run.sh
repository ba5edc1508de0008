#!/usr/bin/env bash
# Replies in turn where the clients' own links are the bottleneck, not
# the server's: docs/RESULTS.md's "Heterogeneous links" setting
# (scripts/testbed-experiments' group b: 8 client hosts, c1, c3, c5, c7
# on 100 Mbit/s links and c2, c4, c6, c8 on 10 Mbit/s, the server's link
# 1 Gbit/s; fasgd at lr 0.005, mu = 4, until T = 3,000), seed R for run
# R. For each run R, the VARIANTs in turn (their order reversed for even
# R):
#   off     the defaults (turns off, the guard on)
#   on      turns.enabled true
#   offng   guard.enabled false (the guard's checks, its held-out loss
#           among them, did not exist when RESULTS.md's runs were made)
#   onng    turns.enabled true, guard.enabled false
# Kept here: each run's summary.txt and server.csv (gzipped) as
# het-VARIANT-rR.{txt,csv.gz}, its final STATUS's turns_* keys
# (het-VARIANT-rR.turns, with turns), the number of the guard's loss-jump
# roll-backs in its log (het-VARIANT-rR.guard), and runs.csv (the
# command, the commit, the load before and after). A run already kept is
# not run again. report.py prints the table of experiments/turns-het.md.
# Usage: experiments/data/turns-het/run.sh RUNS VARIANT...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
runs=${1:?RUNS}; shift
variants=("$@")
[ ${#variants[@]} -gt 0 ] || { echo "$0: no VARIANT (off, on, offng, onng)" >&2; exit 2; }
[ -f "$here/runs.csv" ] || echo "file,variant,run,command,commit,started,load_before,load_after" > "$here/runs.csv"
for r in $(seq 1 "$runs"); do
    order=("${variants[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=(); for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done
    fi
    for t in "${order[@]}"; do
        name=het-$t-r$r
        [ -f "$here/$name.txt" ] && continue
        set -- --netns-prefix fhe --subnet 10.77.11 --instance "h$t$r" --clients 8 --batch 4 --server-rate 1gbit \
            --client-rate 100mbit,10mbit --updates 3000 --duration 300 --set eval.every=100 --set rule.name=fasgd \
            --set rule.lr=0.005 --set seed="$r"
        case $t in
            off) ;;
            on) set -- "$@" --set turns.enabled=true ;;
            offng) set -- "$@" --set guard.enabled=false ;;
            onng) set -- "$@" --set turns.enabled=true --set guard.enabled=false ;;
            *) echo "$0: unknown VARIANT $t" >&2; exit 2 ;;
        esac
        out=/tmp/fhe-$name
        rm -rf "$out"
        load0=$(cut -d' ' -f1-3 /proc/loadavg) started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        flock -o -w 900 /tmp/fasgd-netns.lock "$top/scripts/testbed" --build "$top/build" --data "$top/data/mnist" \
            --out "$out" "$@" > "/tmp/fhe-$name.out" 2>&1
        cp "$out/summary.txt" "$here/$name.txt"
        gzip -n -9 < "$out/server.csv" > "$here/$name.csv.gz"
        grep -c 'the held-out loss jumped' "$out/server.log" > "$here/$name.guard" || true
        case $t in
            on*) grep -o '"turns_[a-z_]*": *[0-9]*' "$out/status-final.json" | tr -d '" ' | tr ':' '=' \
                     > "$here/$name.turns" ;;
        esac
        echo "$name,$t,$r,\"scripts/testbed $*\",$(git -C "$top" rev-parse --short HEAD),$started,$load0,$(cut -d' ' -f1-3 /proc/loadavg)" \
            >> "$here/runs.csv"
    done
done
