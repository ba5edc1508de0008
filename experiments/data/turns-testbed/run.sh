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
slow=10mbit$(printf ',10gbit%.0s' $(seq 31))
setting=(--clients 32 --batch 4 --delay-ms 200 --server-rate 104630kbit --updates 1500 --duration 240)
variant_args() {
    args=(--set seed="$2" --set rule.name=fasgd --set rule.lr=0.001 --set rule.fasgd.statistic=std
          --set data.test=1000 --set eval.every=100 --set guard.enabled=false)
    case $1 in
        off) ;;
        on) args+=(--set turns.enabled=true) ;;
        offslow) args+=(--client-rate "$slow") ;;
        onslow) args+=(--client-rate "$slow" --set turns.enabled=true) ;;
        onslow0) args+=(--client-rate "$slow" --set turns.enabled=true --set turns.slow_factor=0) ;;
        onslowj) args+=(--client-rate "$slow" --set turns.enabled=true) ;;
        on0) args+=(--set turns.enabled=true --set turns.slow_factor=0) ;;
        onj) args+=(--set turns.enabled=true) ;;
        on500) args+=(--set turns.enabled=true --set turns.reader_ms=0) ;;
        on100) args+=(--set turns.enabled=true --set turns.reader_ms=0 --set turns.hold_min_ms=100) ;;
        *) echo "$0: unknown VARIANT $1 (off, on, on500, on100, offslow, onslow, onslow0, onslowj, on0, onj)" >&2
           exit 2 ;;
    esac
}
keep_more() {
    case $1 in
        off*) ;;
        *) keep_turns "$2" "$3" ;;
    esac
}
. "$here/../runs-in-turn.sh"
runs_in_turn "$runs" turns ftu 10.77.10 "$@"
