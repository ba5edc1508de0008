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
#   offng2, onng2  offng and onng again, run on 5a08897 or later, where
#           a reply without a turn (its client's path found slower)
#           waits its order instead of going at once
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
setting=(--clients 8 --batch 4 --server-rate 1gbit --client-rate 100mbit,10mbit --updates 3000 --duration 300
         --set eval.every=100 --set rule.name=fasgd --set rule.lr=0.005)
variant_args() {
    args=(--set seed="$2")
    case $1 in
        off) ;;
        on) args+=(--set turns.enabled=true) ;;
        offng|offng2) args+=(--set guard.enabled=false) ;;
        onng|onng2) args+=(--set turns.enabled=true --set guard.enabled=false) ;;
        *) echo "$0: unknown VARIANT $1 (off, on, offng, onng, offng2, onng2)" >&2; exit 2 ;;
    esac
}
keep_more() {
    keep_rollbacks "$2" "$3"
    case $1 in
        on*) keep_turns "$2" "$3" ;;
    esac
}
. "$here/../runs-in-turn.sh"
runs_in_turn "$runs" het fhe 10.77.11 "$@"
