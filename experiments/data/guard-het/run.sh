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
#   het5, het5ng    turns-het's setting itself (its off and offng)
#   het5nj          the same, guard.loss_jump 0: the loss check weighs
#                   clients but never sets the parameters back
#   het5nl          the same, guard.loss_examples 0: no loss check
# Kept here: each run's summary.txt and server.csv (gzipped), the number
# of the guard's roll-backs in its log (NAME.guard), what keep_status.py
# keeps of the final STATUS (NAME.status: the guard's counts; NAME.clients:
# each client's pushes applied and fetches), the saved loss each
# roll-back went back to, in order (NAME.saved), the server log's lines
# of the loss check's jumps and cuts (NAME.jumps), and runs.csv. NAME is
# guard-VARIANT-rR, or PREFIX-VARIANT-rR with PREFIX set (the runs of
# another build: row-*, the daemon of 87164c2, which counted a row of
# jumps as fasgd.yaml(5) says, reverted after).
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
        het5*) args+=(--client-rate 100mbit,10mbit --set rule.lr=0.005) ;;
        hom5*) args+=(--client-rate 100mbit --set rule.lr=0.005) ;;
        *) echo "$0: unknown VARIANT $1 (het25, het25ng, hom5, hom5ng, het5, het5ng, het5nj, het5nl)" >&2
           exit 2 ;;
    esac
    case $1 in
        *ng) args+=(--set guard.enabled=false) ;;
        *nj) args+=(--set guard.loss_jump=0) ;;
        *nl) args+=(--set guard.loss_examples=0) ;;
    esac
}
keep_more() {
    keep_rollbacks "$2" "$3"
    python3 "$here/keep_status.py" "$3/status-final.json" "$here/$2"
    sed -n 's/.*the held-out loss jumped from \([0-9.e+-]*\) to.*/\1/p' "$3/server.log" > "$here/$2.saved"
    grep -E 'held-out loss jumped|rose by a factor|kept as they are' "$3/server.log" | cut -c1-400 \
        > "$here/$2.jumps" || true
}
. "$here/../runs-in-turn.sh"
runs_in_turn "$runs" "${PREFIX:-guard}" fgh 10.77.12 "$@"
