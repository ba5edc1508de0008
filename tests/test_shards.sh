#!/bin/sh
# A model sharded across two fasgd-servers on loopback: each holds its part
# of theta; fasgd-clients given both shards' endpoints train the MNIST MLP
# and report validation; a client given one shard, or one shard twice, is
# refused; shard 1 is killed and resumed from its checkpoint while a client
# trains on, joining that shard again and keeping its session on shard 0;
# a checkpoint of another shard is refused. TAP output.
tap_name=shards
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 30

# Ports from below the ephemeral range, as in test_cluster.sh: the resumed
# shard binds the same ones again.
for i in 0 1; do
    cat > "$tmp/s$i.yaml" <<YAML
push_endpoint: "tcp://127.0.0.1:![20000-32000]"
fetch_endpoint: "tcp://127.0.0.1:![20000-32000]"
control_endpoint: tcp://127.0.0.1:*
rule: {name: fasgd, lr: 0.005}
shard: {count: 2, index: $i}
data: {dir: "$data"}
eval: {csv: "$tmp/s$i.csv"}
checkpoint: {file: "$tmp/ck$i", seconds: 0, updates: 500}
heartbeat: {interval_ms: 200, expiry_ms: 3000}
log: {level: info}
YAML
done

start_shard() {   # start_shard I [options]: $shardI its pid; $push and $fetch kept
    shard_i=$1; shift
    shard_push=${push:-} shard_fetch=${fetch:-}
    serve "$tmp/p$shard_i" "$tmp/s$shard_i.log" "$server" -c "$tmp/s$shard_i.yaml" "$@"
    shard_rc=$?
    eval "shard$shard_i=\$server_pid"
    push=$shard_push fetch=$shard_fetch
    return $shard_rc
}
port() { sed -n "s/^$1=//p" "$tmp/p$2"; }   # port push|fetch|control I
# status_key I KEY: a number of shard I's STATUS (tap.sh's ctl_number).
status_key() { ctl_number "$tmp/p$1" "$2"; }

check "shard 0 starts" start_shard 0
check "shard 1 starts" start_shard 1
cp "$tmp/s0.log" "$tmp/server.log"
check "each shard logs its part of the 79,510 parameters" sh -c "
    grep -q 'shard 0 of 2: parameters 0 to 39754 of 79510' '$tmp/s0.log' &&
    grep -q 'shard 1 of 2: parameters 39755 to 79509 of 79510' '$tmp/s1.log'"
part="$(status_key 1 params) $(status_key 1 shard) $(status_key 1 shards) $(status_key 1 offset) $(status_key 1 length)"
check "STATUS says which part a shard holds ($part)" test "$part" = "79510 1 2 39755 39755"
push="$(port push 0),$(port push 1)"
fetch="$(port fetch 0),$(port fetch 1)"

# Two clients, 1500 steps each.
for k in 1 2; do
    "$client" -s "$push" -f "$fetch" --data "$data" --name "c$k" --seed "$k" -n 1500 --eval-every 500 --quiet \
        > "$tmp/c$k.out" 2> "$tmp/c$k.log" &
    eval "c$k=\$!"
    pids="$pids $!"
done
wait "$c1"; rc1=$?
wait "$c2"; rc2=$?
cat "$tmp/c1.out" "$tmp/c2.out" > "$tmp/out"
cat "$tmp/c1.log" "$tmp/c2.log" > "$tmp/err"
check "two clients train with both shards and exit 0" test "$rc1" = 0 -a "$rc2" = 0
# A step pushes to both shards: each client counts its 1500 steps once,
# and says that its message counts are the shards' sum.
check "a step is counted once, the pushes said to be summed over the 2 shards" sh -c "
    [ \$(grep -c ': 1500 steps in .*, [0-9]* pushes, .*(messages and bytes summed over 2 shards)' '$tmp/out') = 2 ]"
err1=$(sed -n 's/.*validation error \([0-9.]*\)$/\1/p' "$tmp/c1.out")
err2=$(sed -n 's/.*validation error \([0-9.]*\)$/\1/p' "$tmp/c2.out")
check "their validation error falls below 0.15 (client 1: ${err1:-none}, client 2: ${err2:-none})" \
    awk -v a="${err1:-1}" -v b="${err2:-1}" 'BEGIN { exit !(a < 0.15 && b < 0.15) }'
# Every step is a push to each shard; a step that a shard's guard refused
# (422) is not counted and is tried again, while the other shard applied its
# part; a push a shard's guard left out (an outsized spike without a
# reference: acknowledged, not applied) is counted and not tried again. So
# each shard saw the same pushes, 3000 counted steps and the retries:
# T_s + refused_s + ignored_s is the same on both, and T_s + ignored_s is at
# least 3000.
t0=$(status_key 0 T); t1=$(status_key 1 T)
r0=$(status_key 0 guard_refused); r1=$(status_key 1 guard_refused)
i0=$(status_key 0 guard_ignored); i1=$(status_key 1 guard_ignored)
check "each shard applied the clients' gradients (T = $t0 and $t1 of 3000 steps, $r0 and $r1 refused, $i0 and $i1 left out)" \
    sh -c "[ \$(($t0 + $i0)) -ge 3000 ] && [ \$(($t1 + $i1)) -ge 3000 ] &&
           [ \$(($t0 + $r0 + $i0)) = \$(($t1 + $r1 + $i1)) ]"
check "the clients' validations reach the shards' eval.csv" sh -c "
    [ \$(tail -n +2 '$tmp/s0.csv' | wc -l) -ge 6 ] && [ \$(tail -n +2 '$tmp/s1.csv' | wc -l) -ge 6 ]"

"$ctl" -p "$tmp/p0" -p "$tmp/p1" status > "$tmp/out" 2> "$tmp/err"
rc=$?
check "fasgd-ctl asks both shards: a line for all, both answered (exit $rc)" sh -c "
    [ $rc = 0 ] && tail -1 '$tmp/out' | grep -q '^all 2 servers: 2 answered; T [0-9]* \\(on each\\|to [0-9]* (each its own)\\),.*shards: 2 of 2 answered'"
"$ctl" -j -p "$tmp/p0" -p "$tmp/p1" status > "$tmp/out" 2> "$tmp/err"
check "... and with --json, an array of the two answers" \
    "$python" -c "import json, sys; d = json.load(open('$tmp/out')); sys.exit(not (len(d) == 2 and d[1]['shard'] == 1))"

# Refusals.
"$client" -s "$(port push 0)" -f "$(port fetch 0)" --data "$data" -n 10 --quiet > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a client given shard 0 alone is refused (exit 1), told to list all 2 shards" sh -c "
    [ $rc = 1 ] && grep -q 'shard 0 of 2: give the push and fetch endpoints of all 2 shards' '$tmp/err'"
"$client" -s "$(port push 0),$(port push 0)" -f "$(port fetch 0),$(port fetch 0)" --data "$data" -n 10 --quiet \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a client given shard 0 twice is refused (exit 1)" sh -c "
    [ $rc = 1 ] && grep -q 'both shard 0' '$tmp/err'"
"$client" -s "$push" -f "$(port fetch 0)" --data "$data" -n 10 --quiet > "$tmp/out" 2> "$tmp/err"
rc=$?
check "two push endpoints and one fetch endpoint: usage error (exit 2)" sh -c "
    [ $rc = 2 ] && grep -q 'the same number' '$tmp/err'"
check "the shards kept no refused client" test "$(status_key 0 clients)" = 0

# Shard 1 killed and resumed while a client trains: the client trains on
# with shard 0, tries shard 1 again every second, and joins it when it is
# back, keeping its session with shard 0 throughout.
"$client" -s "$push" -f "$fetch" --data "$data" --name survivor --seed 3 -n 8000 --delay-ms 1 \
    --timeout-ms 1000 --quiet > "$tmp/c3.out" 2> "$tmp/c3.log" &
c3=$!
pids="$pids $c3"
wait_number "$tmp/p1" T 4000 30
kill -9 "$shard1"
wait "$shard1" 2>/dev/null
p1push=$(port push 1); p1fetch=$(port fetch 1)
sleep 1.5
ta=$(status_key 0 T); sleep 1; tb=$(status_key 0 T)
check "while shard 1 is down, shard 0 trains on (T from $ta to $tb in 1 s)" test "${tb:-0}" -gt "${ta:-0}"
check "shard 1 resumes from its checkpoint on its ports" \
    start_shard 1 --resume --set "push_endpoint=$p1push" --set "fetch_endpoint=$p1fetch"
check "... at the T of its checkpoint" grep -q 'resumed from .*ck1 at T=[1-9]' "$tmp/s1.log"
wait "$c3"; rc=$?
cp "$tmp/c3.log" "$tmp/err"; cp "$tmp/c3.out" "$tmp/out"
check "the client finishes its 8000 steps (exit 0), having joined shard 1 again by itself" sh -c "
    [ $rc = 0 ] && grep -q ' 8000 steps' '$tmp/c3.out' && grep -q 'the other shards train on' '$tmp/c3.log' &&
    grep -q 'joined the shard at endpoint 2 again' '$tmp/c3.log'"
check "no client refused the honest shards' theta" \
    sh -c "! grep -l 'that no server holds' '$tmp/c1.log' '$tmp/c2.log' '$tmp/c3.log'"
check "it joined shard 0 once: its session there outlived shard 1's loss" sh -c "
    [ \$(grep -c '(survivor) joined' '$tmp/s0.log') = 1 ] && [ \$(grep -c '(survivor) joined' '$tmp/s1.log') = 2 ]"
t_resumed=$(sed -n 's/.*resumed from .* at T=\([0-9]*\).*/\1/p' "$tmp/s1.log")
t_now=$(status_key 1 T)
check "shard 1 trains on after the resume (T from ${t_resumed:-?} to ${t_now:-?})" \
    test "${t_now:-0}" -gt "${t_resumed:-0}"

# Per-shard B-FASGD on the compact wire: each shard's v-bar drives its own
# gates, so the shards see different pushes; every step still reaches both
# (a push or a repeat), and the model still trains.
for i in 0 1; do
    cat > "$tmp/g$i.yaml" <<YAML
push_endpoint: "tcp://127.0.0.1:*"
fetch_endpoint: "tcp://127.0.0.1:*"
control_endpoint: tcp://127.0.0.1:*
rule: {name: fasgd, lr: 0.005}
shard: {count: 2, index: $i}
wire: {push: bf16, params: bf16}
gates:
  fetch: {gate: bfasgd, c: 0.1}
  push: {gate: bfasgd, c: 0.1, skip: resend-last}
YAML
    "$server" -c "$tmp/g$i.yaml" --port-file "$tmp/pg$i" >> "$tmp/g$i.log" 2>&1 &
    pids="$pids $!"
    wait_for "test -s '$tmp/pg$i'" 20
done
gpush="$(sed -n 's/^push=//p' "$tmp/pg0"),$(sed -n 's/^push=//p' "$tmp/pg1")"
gfetch="$(sed -n 's/^fetch=//p' "$tmp/pg0"),$(sed -n 's/^fetch=//p' "$tmp/pg1")"
"$client" -s "$gpush" -f "$gfetch" --data "$data" --seed 1 -n 2000 --eval-every 2000 --quiet > "$tmp/out" 2> "$tmp/err"
rc=$?
gkey() { ctl_number "$tmp/pg$1" "$2"; }
g0="$(gkey 0 T) $(gkey 0 pushes) $(gkey 0 repeats)"; g1="$(gkey 1 T) $(gkey 1 pushes) $(gkey 1 repeats)"
gerr=$(sed -n 's/.*validation error \([0-9.]*\)$/\1/p' "$tmp/out")
check "gated shards on bf16: each applies a push or a repeat a step (T pushes repeats: $g0 / $g1)" \
    awk -v a="$g0" -v b="$g1" -v rc="$rc" 'BEGIN { split(a, x, " "); split(b, y, " ")
        exit !(rc == 0 && x[1] == 2000 && y[1] == 2000 && x[2] + x[3] == 2000 && y[2] + y[3] == 2000) }'
check "... each shard's own gates: their pushes differ, and most steps repeat" \
    awk -v a="$g0" -v b="$g1" 'BEGIN { split(a, x, " "); split(b, y, " ")
        exit !(x[2] != y[2] && x[2] < 1000 && y[2] < 1000 && x[2] > 20 && y[2] > 20) }'
check "... and the model trains (validation error ${gerr:-none} < 0.3)" \
    awk -v e="${gerr:-1}" 'BEGIN { exit !(e < 0.3) }'

# CURVE: each shard with a certificate of its own, the client given their
# public keys in the endpoints' order.
for i in 0 1; do
    (cd "$tmp" && "$ctl" keygen "k$i" > /dev/null)
    "$server" -c "$tmp/s$i.yaml" --set push_endpoint=tcp://127.0.0.1:* --set fetch_endpoint=tcp://127.0.0.1:* \
        --set control_endpoint= --set checkpoint.file= --set "security.curve.server_cert=$tmp/k$i.key_secret" \
        --set security.curve.allow_any=true --port-file "$tmp/pc$i" >> "$tmp/curve$i.log" 2>&1 &
    pids="$pids $!"
    wait_for "test -s '$tmp/pc$i'" 20
done
cpush="$(sed -n 's/^push=//p' "$tmp/pc0"),$(sed -n 's/^push=//p' "$tmp/pc1")"
cfetch="$(sed -n 's/^fetch=//p' "$tmp/pc0"),$(sed -n 's/^fetch=//p' "$tmp/pc1")"
"$client" -s "$cpush" -f "$cfetch" --data "$data" -n 200 --quiet --server-key "$tmp/k0.key,$tmp/k1.key" \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "with CURVE, one server key per shard: the client trains with both (exit $rc)" sh -c "
    [ $rc = 0 ] && grep -q ' 200 steps' '$tmp/out'"
"$client" -s "$cpush" -f "$cfetch" --data "$data" -n 200 --quiet --server-key "$tmp/k0.key,$tmp/k1.key,$tmp/k1.key" \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "three server keys for two shards: a usage error (exit 2) saying so" sh -c "
    [ $rc = 2 ] && grep -q '3 server keys for 2 shards' '$tmp/err'"
"$client" -s "$cpush" -f "$cfetch" --data "$data" -n 200 --quiet --timeout-ms 2000 --server-key "$tmp/k0.key" \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "shard 0's key alone for both: shard 1's handshake fails (exit $rc, not 0)" sh -c "
    [ $rc != 0 ] && grep -qi 'handshake' '$tmp/err'"

# Another shard's checkpoint, and a shard that does not exist.
"$server" -c "$tmp/s0.yaml" --set "checkpoint.file=$tmp/ck1" --set push_endpoint=tcp://127.0.0.1:* \
    --set fetch_endpoint=tcp://127.0.0.1:* --resume > "$tmp/out" 2> "$tmp/err"
rc=$?
check "shard 0 refuses to resume from shard 1's checkpoint" sh -c "
    [ $rc != 0 ] && grep -q 'cannot resume' '$tmp/err'"
"$server" -c "$tmp/s0.yaml" --set shard.index=2 > "$tmp/out" 2> "$tmp/err"
rc=$?
check "shard.index 2 of 2 is refused, saying why" sh -c "
    [ $rc != 0 ] && grep -q 'shard 2 of 2 does not exist' '$tmp/err'"

[ "$failed" -eq 0 ]
