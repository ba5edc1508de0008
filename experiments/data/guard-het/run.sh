#!/usr/bin/env bash
# The guard's held-out loss check with honest clients
# (experiments/turns-het.md found it rolling back honest training in
# docs/RESULTS.md's heterogeneous-links setting): is it the links or the
# learning rate? 8 client hosts, the server's link 1 Gbit/s, fasgd, mu =
# 4, until T = 3,000, seed R for run R; for each run R the VARIANTs in
# turn (their order reversed for even R):
#   het25, het25ng  c1, c3, c5, c7 behind 100 Mbit/s and the others behind
#                   10 Mbit/s (turns-het's setting), lr 0.0025, half of
#                   turns-het's, the guard on (the default) and off
#   hom5, hom5ng    every client behind 100 Mbit/s, lr 0.005 (turns-het's)
# Kept here: each run's summary.txt and server.csv (gzipped), the number
# of the guard's roll-backs in its log (NAME.guard), and runs.csv.
# report.py prints the table of experiments/guard-het.md.
# Usage: experiments/data/guard-het/run.sh RUNS VARIANT...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
runs=${1:?RUNS}; shift
setting=(--clients 8 --batch 4 --server-rate 1gbit --updates 3000 --duration 300 --set eval.every=100
         --set rule.name=fasgd)
variant_args() {
    args=(--set seed="$2")
    case $1 in
        het25*) args+=(--client-rate 100mbit,10mbit --set rule.lr=0.0025) ;;
        hom5*) args+=(--client-rate 100mbit --set rule.lr=0.005) ;;
        *) echo "$0: unknown VARIANT $1 (het25, het25ng, hom5, hom5ng)" >&2; exit 2 ;;
    esac
    case $1 in
        *ng) args+=(--set guard.enabled=false) ;;
    esac
}
keep_more() {
    keep_rollbacks "$2" "$3"
}
. "$here/../runs-in-turn.sh"
runs_in_turn "$runs" guard fgh 10.77.12 "$@"
