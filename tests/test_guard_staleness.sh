#!/bin/sh
# guard.staleness on the daemon (common/staleness.c, docs/ALGORITHMS.md,
# "The staleness an update counts for"): one honest fasgd-client beside
# the tiny attacker (tests/attacker --mode tiny: 8 ids pushing their
# gradient at 1e-4 of its norm), read from STATUS once 600 updates are
# made. With count the rule divides by tau itself: tau_rule_mean is
# tau_mean. With movement (the default) the attacker's updates count next
# to nothing, so the honest client's pushes are divided by about none
# and only the attacker's own see the honest updates: tau_rule_mean is
# about the honest share of the updates times tau_mean (0.5 in a trial
# run, where the attacker made 40% of them); the check asks 0.85 at most
# once the attacker made a quarter of the updates or more. TAP output.
tap_name=guard-staleness
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 6
guard_server_yaml "$tmp/server.yaml" '{every: 500}'
num() { sed -n "s/^ *\"$2\": \([0-9.]*\),*$/\1/p" "$tmp/$1.status"; }
str() { sed -n "s/^ *\"$2\": \"\([a-z]*\)\",*$/\1/p" "$tmp/$1.status"; }

# run STALENESS: the server with guard.staleness STALENESS, the attacker,
# then the client for 2000 steps, 4 ms apart (so that the attacker's ids
# have their share of the updates however loaded the machine: at full
# speed the client made 86% of them once under load); STATUS (JSON) in
# $tmp/STALENESS.status once T reached 600, while both push.
run() {
    serve "$tmp/$1.ports" "$tmp/$1.log" "$server" -c "$tmp/server.yaml" --set "guard.staleness=$1" \
        --set "eval.csv=$tmp/$1.csv" || return 1
    spid=$server_pid
    timeout 300 "$top_build/tests/attacker" -s "$push" -f "$fetch" --data "$data" --mode tiny --ids 8 --seed 9 \
        > "$tmp/$1.attacker" 2>&1 &
    apid=$!; pids="$pids $apid"
    timeout 300 "$client" -s "$push" -f "$fetch" --data "$data" --name honest --seed 1 -n 2000 --delay-ms 4 --quiet \
        > "$tmp/$1.client" 2>&1 &
    cpid=$!; pids="$pids $cpid"
    i=0 T=0
    while [ $i -lt 1200 ] && [ "${T:-0}" -lt 600 ] && kill -0 $cpid 2> /dev/null; do
        sleep 0.1; i=$((i + 1))
        T=$("$ctl" -j -p "$tmp/$1.ports" status 2> /dev/null | sed -n 's/^ *"T": \([0-9]*\),*$/\1/p')
    done
    "$ctl" -j -p "$tmp/$1.ports" status > "$tmp/$1.status"
    kill -INT $cpid $apid 2> /dev/null
    wait $cpid $apid
    kill -TERM $spid
    wait $spid
    [ "${T:-0}" -ge 600 ]
}
# The attacker's share of the pushes STATUS counts (its 8 ids against the
# honest client's), in hundredths.
share() {
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
a = sum(c["pushes"] for c in j["per_client"] if c["name"].startswith("attacker"))
h = sum(c["pushes"] for c in j["per_client"] if c["name"] == "honest")
print(int(100 * a / max(a + h, 1)))' "$tmp/$1.status"
}

check "count: 600 updates with the attacker and the honest client pushing" run count
check "count: STATUS says staleness=count, and the rule divided by tau itself (tau_rule_mean $(num count tau_rule_mean) = tau_mean $(num count tau_mean))" \
    sh -c "[ '$(str count staleness)' = count ] && [ '$(num count tau_rule_mean)' = '$(num count tau_mean)' ]"
check "movement: 600 updates with the attacker and the honest client pushing" run movement
a=$(share movement)
check "movement: the attacker made a quarter of the pushes or more ($a%)" test "${a:-0}" -ge 25
tm=$(num movement tau_mean) tr=$(num movement tau_rule_mean)
check "movement: STATUS says staleness=movement" test "$(str movement staleness)" = movement
check "movement: the rule divided by much less than tau (tau_rule_mean $tr, tau_mean $tm)" \
    python3 -c "import sys; sys.exit(not (float('${tm:-0}') > 0.3 and float('${tr:-9}') <= 0.85 * float('${tm:-0}')))"
exit $((failed > 0))
