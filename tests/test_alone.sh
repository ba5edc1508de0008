#!/bin/sh
# An attacker left alone with the server (docs/ALGORITHMS.md, "The
# guard"): one honest fasgd-client trains alone and is never refused
# (what the held-out loss check did to it is in the message); then
# tests/attacker --mode thin (its gradient negated at one push in two,
# whose pushes the first-order score reads as neutral) comes when the
# honest one is gone and pushes alone: the validation error stays within
# 0.15 of where the honest client left it, and the loss check holds the
# attacker's updates to a third of its pushes or less. TAP output.
tap_name=alone
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 5

guard_server_yaml "$tmp/server.yaml" '{every: 100}'

key() { json_number "$tmp/$1.status" "$2"; }

# run NAME [SET...]: the server (with SET), an honest client of 1500
# steps alone, then the thin attacker for 1500 pushes alone; STATUS (JSON) when the honest client is gone in
# $tmp/NAME.honest.status, at the end in $tmp/NAME.status; the
# validation error when the honest client left (the last evaluation
# before) in $left, at the end in $final.
run() {
    name=$1
    shift
    serve "$tmp/$name.ports" "$tmp/$name.log" "$server" -c "$tmp/server.yaml" --set "eval.csv=$tmp/$name.csv" "$@" ||
        return 1
    spid=$server_pid
    timeout 120 "$client" -s "$push" -f "$fetch" --data "$data" --name honest --seed 1 -n 1500 --quiet \
        > "$tmp/$name.honest.out" 2> "$tmp/$name.honest.err"
    hrc=$?
    "$ctl" -j -p "$tmp/$name.ports" status > "$tmp/$name.honest.status"
    timeout 120 "$top_build/tests/attacker" -s "$push" -f "$fetch" --data "$data" --mode thin --seed 9 --steps 1500 \
        > "$tmp/$name.thin.out" 2> "$tmp/$name.thin.err"
    "$ctl" -j -p "$tmp/$name.ports" status > "$tmp/$name.status"
    kill -TERM "$spid"
    wait "$spid"
    T=$(key "$name.honest" T)
    left=$(awk -F, -v t="$T" 'NR > 1 && $1 <= t && $1 % 100 == 0 { e = $3 } END { print e }' "$tmp/$name.csv")
    final=$(tail -1 "$tmp/$name.csv" | cut -d, -f3)
    return $hrc
}

check "an honest client alone, then the thin attacker alone (exit 0)" run guarded
cp "$tmp/guarded.log" "$tmp/server.log"
check "the honest client alone was never refused ($(key guarded.honest guard_loss_cut) pushes cut in part by the loss check, $(key guarded.honest guard_loss_ignored) of them to 1/8, $(key guarded.honest guard_loss_rollbacks) set back; $(key guarded.honest guard_ignored) ignored, by probation and the score)" \
    test "$(key guarded.honest guard_refused)" = 0
check "the honest client alone trained: validation error ${left:-none} below 0.1" \
    awk -v e="${left:-1}" 'BEGIN { exit !(e < 0.1) }'
# The thin attacker alone: before the loss check saved θ only where
# clients in good standing carried it, and measured the loss once more as
# the server stops, the validation error rose by 0.13 to 0.49 in 4 of 17
# runs of this test (3 above the 0.15 checked here); since, by at most
# 0.064 in 40 (docs/ALGORITHMS.md,
# "Left alone with the server"), and under guard.staleness: movement,
# the default since, by −0.012 to +0.007 in 12. Its updates alone, which without the
# check (guard.loss_examples: 0) were above a third of its 1,500 pushes
# in 17 of 22 runs (11 to 1,482), were 0 to 260 with it (62 runs).
check "the attacker alone did not undo the run (${left:-none} to ${final:-none}, less than 0.15 more)" \
    awk -v a="${left:-1}" -v f="${final:-1}" 'BEGIN { exit !(f < a + 0.15) }'
alone() { a=$(key "$1.honest" T) b=$(key "$1" T); echo $((${b:-0} - ${a:-0})); }
g_alone=$(alone guarded)
check "the loss check held the attacker alone to a third of its 1500 pushes or less ($g_alone updates alone)" \
    test "$g_alone" -le 500
