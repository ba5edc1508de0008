#!/usr/bin/env bash
# Replies in turn on the test bed, against side by side: the setting of
# docs/RESULTS.md's "simulator's clock checked against the real daemons"
# (scripts/time-to-accuracy-testbed's, ungated: fasgd-server and 32
# fasgd-clients in namespaces, the server's link 104.63 Mbit/s each way,
# each client sleeping 200 ms after a gradient, fasgd std at lr 0.001,
# mu = 4, guard off), each run to T = 1,500, seed R for run R. For each
# run R, the VARIANTs in turn (their order reversed for even R):
#   off     turns.enabled false (the default)
#   on      turns.enabled true, the rest of turns.* at their defaults
#   on500   turns.enabled true, turns.reader_ms 0 (the on500 runs were
#           made before turns.reader_ms was, without a --set for it)
#   on100   turns.enabled true, turns.reader_ms 0, turns.hold_min_ms 100
#           (its default until the on100 runs showed it cut honest
#           turns; they were made with it as the default, without a
#           --set for either key)
#   offslow, onslow  off and on with one client of the 32 behind a link
#           of its own shaped to 10 Mbit/s each way (--client-rate: host
#           c1 at 10mbit, the others at 10gbit, far above the server's
#           link): a slower path than the others', whose turns take about
#           0.25 s (onslow was run before turns.slow_factor was)
#   onslow0, onslowj  on with that slow client, turns.slow_factor 0 (as
#           onslow) and at its default (the slow client judged slower
#           and its replies sent without a turn)
#   on0, onj  on, turns.slow_factor 0 and at its default: whether honest
#           clients are ever judged slower
# Kept here: each run's summary.txt and server.csv (gzipped) and, with
# turns, its final STATUS's turns_* keys, as turns-VARIANT-rR.{txt,
# csv.gz,turns}, and runs.csv (the command, the commit, the load before
# and after). A run already kept is not run again. report.py prints the
# table of experiments/turns-testbed.md.
# Usage: experiments/data/turns-testbed/run.sh RUNS VARIANT...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
runs=${1:?RUNS}; shift
variants=("$@")
[ ${#variants[@]} -gt 0 ] || { echo "$0: no VARIANT (off, on, on500, on100, offslow, onslow, onslow0, onslowj, on0, onj)" >&2; exit 2; }
slow=10mbit$(printf ',10gbit%.0s' $(seq 31))
[ -f "$here/runs.csv" ] || echo "file,turns,run,command,commit,started,load_before,load_after" > "$here/runs.csv"
for r in $(seq 1 "$runs"); do
    order=("${variants[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=(); for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done
    fi
    for t in "${order[@]}"; do
        name=turns-$t-r$r
        [ -f "$here/$name.txt" ] && continue
        inst=t$t$r; [ ${#inst} -le 8 ] || inst=t${t:0:3}${t: -1}$r     # scripts/testbed: 8 at most
        set -- --netns-prefix ftu --subnet 10.77.10 --instance "$inst" --clients 32 --batch 4 --delay-ms 200 \
            --server-rate 104630kbit --updates 1500 --duration 240 --set seed="$r" --set rule.name=fasgd \
            --set rule.lr=0.001 --set rule.fasgd.statistic=std --set data.test=1000 --set eval.every=100 \
            --set guard.enabled=false
        case $t in
            off) ;;
            on) set -- "$@" --set turns.enabled=true ;;
            offslow) set -- "$@" --client-rate "$slow" ;;
            onslow) set -- "$@" --client-rate "$slow" --set turns.enabled=true ;;
            onslow0) set -- "$@" --client-rate "$slow" --set turns.enabled=true --set turns.slow_factor=0 ;;
            onslowj) set -- "$@" --client-rate "$slow" --set turns.enabled=true ;;
            on0) set -- "$@" --set turns.enabled=true --set turns.slow_factor=0 ;;
            onj) set -- "$@" --set turns.enabled=true ;;
            on500) set -- "$@" --set turns.enabled=true --set turns.reader_ms=0 ;;
            on100) set -- "$@" --set turns.enabled=true --set turns.reader_ms=0 --set turns.hold_min_ms=100 ;;
            *) echo "$0: unknown VARIANT $t" >&2; exit 2 ;;
        esac
        out=/tmp/ftu-$name
        rm -rf "$out"
        load0=$(cut -d' ' -f1-3 /proc/loadavg) started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        flock -o -w 900 /tmp/fasgd-netns.lock "$top/scripts/testbed" --build "$top/build" --data "$top/data/mnist" \
            --out "$out" "$@" > "/tmp/ftu-$name.out" 2>&1
        cp "$out/summary.txt" "$here/$name.txt"
        gzip -n -9 < "$out/server.csv" > "$here/$name.csv.gz"
        case $t in
            off*) ;;
            *) grep -o '"turns_[a-z_]*": *[0-9]*' "$out/status-final.json" | tr -d '" ' | tr ':' '=' \
                   > "$here/$name.turns" ;;
        esac
        # The command in quotes: --client-rate's list has commas.
        echo "$name,$t,$r,\"scripts/testbed $*\",$(git -C "$top" rev-parse --short HEAD),$started,$load0,$(cut -d' ' -f1-3 /proc/loadavg)" \
            >> "$here/runs.csv"
    done
done
