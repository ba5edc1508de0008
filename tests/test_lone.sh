#!/bin/sh
# Honest work is never lost to the guard's score (docs/ALGORITHMS.md,
# "The guard"): one fasgd-client alone for 3000 steps, and then three
# side by side for 1500 each, against etc/fasgd-server.yaml's guard. Late
# in training an honest push predicts little descent of the held-out
# loss against one reference batch, and a score that asked a fixed mean
# of it ignored a lone client for tens of pushes and applied hundreds in
# part. None is refused, and past each client's probation
# (guard.probation, 16 pushes) at most 5% of the pushes are ignored or
# applied in part by the score (none in most runs; among three clients
# 2, 5, 11 and 47 of 4,500 have been seen, in 4 of about 40 runs, when a
# client's mean dips below zero by chance); what the held-out loss check
# did (it may cut a client after a spike of the loss) is in the message
# and counted apart. TAP output.
tap_name=lone
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 6

guard_server_yaml "$tmp/server.yaml" '{every: 500}'

key() { sed -n "s/^ *\"$2\": \([0-9.]*\),*$/\1/p" "$tmp/$1.status"; }

# run NAME CLIENTS STEPS: the server and CLIENTS honest fasgd-clients of
# STEPS steps each, side by side; STATUS (JSON) in $tmp/NAME.status.
run() {
    name=$1 nc=$2 steps=$3
    serve "$tmp/$name.ports" "$tmp/$name.log" "$server" -c "$tmp/server.yaml" --set "eval.csv=$tmp/$name.csv" ||
        return 1
    spid=$server_pid
    cp=""
    for k in $(seq "$nc"); do
        timeout 300 "$client" -s "$push" -f "$fetch" --data "$data" --name "honest-$k" --seed "$k" -n "$steps" \
            --quiet > "$tmp/$name.$k.out" 2> "$tmp/$name.$k.err" &
        cp="$cp $!"
        pids="$pids $!"
    done
    crc=0
    for p in $cp; do wait "$p" || crc=1; done
    "$ctl" -j -p "$tmp/$name.ports" status > "$tmp/$name.status"
    kill -TERM "$spid"
    wait "$spid"
    return $crc
}

# lost NAME CLIENTS: in $nlost the pushes the score did not apply in full
# past the clients' probation (ignored or weighted, less those the loss
# check cut), in $cut what the loss check did.
lost() {
    ign=$(key "$1" guard_ignored) wt=$(key "$1" guard_weighted) lc=$(key "$1" guard_loss_cut)
    cut="${lc:-?} cut in part by the loss check, $(key "$1" guard_loss_rollbacks) set back"
    nlost=$((${ign:-999999} - 16 * $2 + ${wt:-999999} - ${lc:-0}))
}

check "one honest client alone, 3000 steps (exit 0)" run one 1 3000
cp "$tmp/one.log" "$tmp/server.log"
check "... none of its pushes refused ($(key one guard_refused))" test "$(key one guard_refused)" = 0
lost one 1
check "... at most 150 ignored or applied in part by the score past its probation ($nlost; $cut; $(key one T) updates)" \
    test "$nlost" -le 150

check "three honest clients side by side, 1500 steps each (exit 0)" run three 3 1500
cp "$tmp/three.log" "$tmp/server.log"
check "... none of their pushes refused ($(key three guard_refused))" test "$(key three guard_refused)" = 0
lost three 3
check "... at most 225 ignored or applied in part by the score past their probation ($nlost; $cut; $(key three T) updates)" \
    test "$nlost" -le 225
