#!/bin/sh
# A client of a sharded model checks the theta each shard sends. Beside an
# honest shard 0, tests/fake_shard stands in for shard 1 with the real
# shard's description, and serves theta holding a NaN, or 3e38, from its
# first PARAMS or after some plausible ones. The client must refuse that
# theta, say so, and never push a gradient computed on it: with no part of
# shard 1 ever held it stops at once, non-zero, and shard 0 applies nothing;
# with a part held it trains on with shard 0 alone, which applies only sound
# gradients; when shard 0 then goes away, leaving only the fake, the client
# tries to join again for 20 s, then gives up, non-zero, saying no honest
# shard is left. An honest pair of shards sees no refusal. A single server
# serving NaN theta is refused the same way. TAP output.
tap_name=hostile_shard
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
fake="$top_build/tests/fake_shard"

plan_mnist 20

for i in 0 1 9; do
    count=2; [ $i = 9 ] && count=1 i_=0 || i_=$i
    cat > "$tmp/s$i.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
rule: {name: fasgd, lr: 0.005}
shard: {count: $count, index: $i_}
eval: {enabled: false}
heartbeat: {interval_ms: 200, expiry_ms: 3000}
YAML
done
serve "$tmp/p0" "$tmp/server.log" "$server" -c "$tmp/s0.yaml"
push0=$push fetch0=$fetch s0_pid=$server_pid
serve "$tmp/p1" "$tmp/s1.log" "$server" -c "$tmp/s1.yaml"
push1=$push fetch1=$fetch
key() { ctl_number "$tmp/p0" "$1"; }
refusal='that no server holds'

# run_client PUSH FETCH [options]: a client of shard 0 and the given shard 1,
# its exit status in $rc, its output in $tmp/out and its log in $tmp/err.
run_client() {
    p=$1 f=$2; shift 2
    "$client" -s "$push0,$p" -f "$fetch0,$f" --data "$data" --seed 1 --quiet --timeout-ms 1000 "$@" \
        > "$tmp/out" 2> "$tmp/err"
    rc=$?
}

# start_fake VALUE GOOD: a fake shard 1 ($fake_pid, $fpush, $ffetch).
start_fake() {
    serve "$tmp/pf" "$tmp/fake.out" "$fake" "$1" "$2" "$push1" || return 1
    fake_pid=$server_pid fpush=$push ffetch=$fetch
}
stop_fake() { kill "$fake_pid"; wait "$fake_pid" 2>/dev/null; }

run_client "$push1" "$fetch1" -n 200
check "honest shards: the client trains 200 steps and exits 0 (exit $rc)" \
    sh -c "[ $rc = 0 ] && grep -q ': 200 steps in' '$tmp/out'"
check "... and refuses no theta" sh -c "! grep -q '$refusal' '$tmp/err'"

for pair in nan:nan 3e38:3e+38; do
    value=${pair%:*} shown=${pair#*:}
    t_before=$(key T); a_before=$(key pushes)
    check "a fake shard 1 serving $value starts" start_fake "$value" 0
    run_client "$fpush" "$ffetch" -n 200
    check "$value from the first PARAMS: the client exits non-zero, no step taken (exit $rc)" \
        sh -c "[ $rc != 0 ] && grep -q ': 0 steps in' '$tmp/out'"
    check "... and says which value it refused" \
        grep -q "$refusal: value 59632 of 79510 is $shown.*refused" "$tmp/err"
    stop_fake
    check "... no gradient reached shard 0 (T $t_before, then $(key T); pushes $a_before, then $(key pushes))" \
        test "$(key T) $(key pushes)" = "$t_before $a_before"
done

# Plausible theta for the first 5 PARAMS, then NaN: the client keeps the
# part it holds, refuses the rest, and trains on with shard 0.
t_before=$(key T)
check "a fake shard 1 serving NaN after 5 plausible PARAMS starts" start_fake nan 5
run_client "$fpush" "$ffetch" -n 300 --delay-ms 2
stop_fake
t_after=$(key T)
check "the client trains on with shard 0 and exits 0 (exit $rc)" \
    sh -c "[ $rc = 0 ] && grep -q ': 300 steps in' '$tmp/out'"
check "... refusing the NaN theta, and saying so" \
    sh -c "grep -q '$refusal: value 59632 of 79510 is nan' '$tmp/err' && grep -q 'the other shards train on' '$tmp/err'"
check "shard 0 applied its gradients (T $t_before, then $t_after) and refused none ($(key guard_refused))" \
    sh -c "[ $((t_after - t_before)) -ge 290 ] && [ '$(key guard_refused)' = 0 ]"
check "... and its theta is finite" \
    sh -c "! '$ctl' -p '$tmp/p0' status | grep -iq 'nan\|inf'"

# One server, no shards: the same refusal, and the client stops.
serve "$tmp/p9" "$tmp/s9.log" "$server" -c "$tmp/s9.yaml"
serve "$tmp/pf" "$tmp/fake.out" "$fake" nan 0 "$push"
fake_pid=$server_pid
"$client" -s "$push" -f "$fetch" --data "$data" --quiet --timeout-ms 1000 -n 50 > "$tmp/out" 2> "$tmp/err"
rc=$?
stop_fake
check "a server serving NaN theta: the client exits non-zero, no step taken (exit $rc)" \
    sh -c "[ $rc != 0 ] && grep -q ': 0 steps in' '$tmp/out'"
check "... and says which value it refused" grep -q "$refusal: value 39755 of 79510 is nan" "$tmp/err"

# The fake beside shard 0 again, then shard 0 silent: no shard left whose
# theta the client can take. It tries to join again for 20 s (shard 0 may
# come back), then gives up.
check "a fake shard 1 serving NaN after 5 plausible PARAMS starts again" start_fake nan 5
t0=$(date +%s)
"$client" -s "$push0,$fpush" -f "$fetch0,$ffetch" --data "$data" --seed 1 --quiet --timeout-ms 1000 \
    --delay-ms 2 > "$tmp/out" 2> "$tmp/err" &
cpid=$!
pids="$pids $cpid"
wait_for "grep -q 'the other shards train on' '$tmp/err'" 30
# Stopped, not killed: its ports stay its own (a server started meanwhile
# could take them), and it answers nothing.
kill -STOP "$s0_pid"
i=0
while kill -0 "$cpid" 2> /dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 "$cpid" 2> /dev/null
wait "$cpid"; rc=$?
stop_fake
check "shard 0 silent, the fake left: the client gives up, non-zero, within 60 s (exit $rc after $(($(date +%s) - t0)) s)" \
    sh -c "[ $rc != 0 ] && [ $rc != 137 ]"
check "... saying no honest shard is left, and after how long" \
    sh -c "grep -q 'no honest shard left: endpoint 2 answers but sent θ no server holds' '$tmp/err' &&
        grep -q 'error: cannot join again: no honest shard left: .* tries in 2[0-9] s: giving up' '$tmp/err'"
