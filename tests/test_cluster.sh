#!/bin/sh
# A real training run on loopback: fasgd-server with 3 fasgd-clients on the
# MNIST digits, a 4th joining mid-run (pinned to a CPU), one killed with
# SIGKILL and expired while training goes on, validation error falling;
# then the server killed and resumed from its checkpoint, pinned to a CPU,
# with the clients carrying on. TAP output.
tap_name=cluster
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 17

# The restarted server must get its ports back, so they come from below the
# kernel's ephemeral range (32768 and up here): there no other test's
# connection, and no client reconnecting to a dead port (TCP can connect a
# socket to itself when the source port it picks is the destination), can
# be holding them when the server binds again.
cat > "$tmp/server.yaml" <<YAML
push_endpoint: "tcp://127.0.0.1:![20000-32000]"
fetch_endpoint: "tcp://127.0.0.1:![20000-32000]"
control_endpoint: tcp://127.0.0.1:*
clients: 4
rule: {name: fasgd, lr: 0.005}
data: {dir: "$data"}
eval: {every: 200, csv: "$tmp/server.csv"}
checkpoint: {file: "$tmp/ckpt", seconds: 0, updates: 500}
heartbeat: {interval_ms: 200, expiry_ms: 1500}
log: {status_seconds: 1, level: info}
YAML

start_server() {   # start_server [--resume]
    serve "$tmp/ports" "$tmp/server.log" "$server" -c "$tmp/server.yaml" "$@"
}
start_client() {   # start_client NAME [options]
    name=$1; shift
    "$client" -s "$push" -f "$fetch" --data "$data" --name "$name" --quiet "$@" \
        > "$tmp/$name.out" 2> "$tmp/$name.log" &
    pids="$pids $!"
    last_client=$!
}
# cpus_in STATUS-FILE: the CPU list a /proc status file allows ("0-1", "0,2-3").
cpus_in() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1"; }
# The CPUs this process may use: the pins go on the first; one past the
# last is one it may not use.
allowed=$(cpus_in /proc/self/status)
cpu0=$(echo "$allowed" | sed 's/[,-].*//')
cpu_bad=$(( $(echo "$allowed" | sed 's/.*[,-]//') + 1 ))
# cpus_of PID TASK-NAME: the CPU lists of the process's threads of that name
# (the main thread is named after the program).
cpus_of() {
    for t in /proc/$1/task/*; do
        [ "$(cat "$t/comm")" = "$2" ] && cpus_in "$t/status"
    done
}
# pinned PID PROGRAM: its main thread and ZeroMQ's I/O thread are on $cpu0 only.
pinned() {
    main=$(cpus_in "/proc/$1/status")
    io=$(cpus_of "$1" ZMQbg/IO/0)
    [ "$main" = "$cpu0" ] && [ "$io" = "$cpu0" ] || { echo "# $2: main $main, ZeroMQ I/O ${io:-none}"; return 1; }
}
rows() { test -f "$tmp/server.csv" && tail -n +2 "$tmp/server.csv" | wc -l || echo 0; }
last_T() { tail -1 "$tmp/server.csv" | cut -d, -f1; }

check "the server starts and writes its port file" start_server
start_client c1 --seed 1
start_client c2 --seed 2
start_client victim --seed 3; victim=$last_client
check "three clients train: validation rows appear" wait_for "[ \$(tail -n +2 '$tmp/server.csv' 2>/dev/null | wc -l) -ge 4 ]" 60

start_client late --seed 4 --delay-ms 5 --cpu "$cpu0"; late=$last_client
check "a fourth client joins mid-run" wait_for "grep -q 'client [0-9]* (late) joined; 4 connected' '$tmp/server.log'" 20
check "the client started with --cpu $cpu0 runs there, with ZeroMQ's I/O thread" pinned "$late" fasgd-client
"$client" -s "$push" -f "$fetch" --data "$data" --cpu "$cpu_bad" > "$tmp/out" 2> "$tmp/err"
rc=$?
check "--cpu $cpu_bad, a CPU the process may not use: exit 2, saying which it may" sh -c "
    [ $rc -eq 2 ] && grep -q 'CPU $cpu_bad is not one this process may run on ($allowed)' '$tmp/err'"

kill -9 "$victim"
check "a client killed with SIGKILL is expired" wait_for "grep -q 'client [0-9]* (victim) expired' '$tmp/server.log'" 20
r=$(rows)
check "training goes on after the expiry" wait_for "[ \$(tail -n +2 '$tmp/server.csv' | wc -l) -ge $((r + 3)) ]" 60

# Checkpoints come every 500 updates; wait for one, then kill the server hard.
wait_for "test -s '$tmp/ckpt'" 60
kill -9 "$server_pid"
T_before=$(last_T)
sleep 0.5
# The clients know the old ports: the resumed server binds the same ones.
check "the server resumes from its checkpoint, pinned to CPU $cpu0" \
    start_server --resume --set "push_endpoint=$push" --set "fetch_endpoint=$fetch" --set "cpu=$cpu0"
check "the update loop and ZeroMQ's I/O thread run on CPU $cpu0" pinned "$server_pid" fasgd-server
eval_cpus=$(cpus_of "$server_pid" fasgd-eval)
check "the evaluation thread is not pinned (CPUs ${eval_cpus:-none}; allowed $allowed)" test "$eval_cpus" = "$allowed"
"$server" -c "$tmp/server.yaml" --set "cpu=$cpu_bad" -n > "$tmp/out" 2> "$tmp/err"
rc=$?
check "cpu: $cpu_bad, a CPU the process may not use: the server does not start (exit $rc)" sh -c "
    [ $rc -eq 1 ] && grep -q 'cpu: CPU $cpu_bad is not one this process may run on ($allowed)' '$tmp/err'"
check "the resumed server starts near where it stopped, and clients rejoin" \
    wait_for "grep -q 'resumed from .* at T=' '$tmp/server.log' && [ \$(grep -c 'joined' '$tmp/server.log') -ge 7 ]" 30
r=$(rows)
check "training carries on after the restart" wait_for "[ \$(tail -n +2 '$tmp/server.csv' | wc -l) -ge $((r + 3)) ]" 60

# Validation error fell: the best of the last rows is well below the first row.
first=$(sed -n 2p "$tmp/server.csv" | cut -d, -f3)
best=$(tail -n +2 "$tmp/server.csv" | cut -d, -f3 | sort -g | head -1)
check "validation error falls (first $first, best $best; T was $T_before before the kill)" \
    awk -v a="$first" -v b="$best" 'BEGIN { exit !(b < 0.2 && b < a - 0.5) }'

# A hangup stops the server like SIGTERM: a final checkpoint at the
# timestamp it stopped at, exit 0.
kill -HUP "$server_pid"
wait "$server_pid"
rc=$?
stopped=$(sed -n 's/.*stopping at T=\([0-9]*\).*/\1/p' "$tmp/server.log" | tail -1)
check "SIGHUP stops the server cleanly with a final checkpoint (exit $rc, stopped at T=$stopped)" sh -c "
    test $rc -eq 0 && test -n '$stopped' && tail -3 '$tmp/server.log' | grep -q 'checkpoint written at T=$stopped\$' &&
    tail -1 '$tmp/server.log' | grep -q 'stopped by SIGHUP'"

# A client waiting for a server that does not answer (the one stopped
# above): the first SIGINT waits for the reply timeout (10 s here), a
# second exits at once with 130.
"$client" -s "$push" -f "$fetch" --data "$data" \
    --timeout-ms 10000 --quiet > "$tmp/out" 2> "$tmp/err" &
cpid=$!; pids="$pids $cpid"
# Once it catches SIGINT (SigCgt's bit 1), not while it would die of it.
wait_for "[ \$(( 0x\$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$cpid/status) & 2 )) -ne 0 ]" 20
sleep 0.3
kill -INT $cpid; sleep 0.3; kill -INT $cpid
t0=$(date +%s)
wait $cpid; rc=$?
t1=$(date +%s)
check "a second SIGINT exits at once (exit $rc after $((t1 - t0)) s)" test $rc -eq 130 -a $((t1 - t0)) -le 2
check "no client refused the server's theta" sh -c "! grep -l 'that no server holds' '$tmp'/*.log"
[ "$failed" -eq 0 ]
