#!/bin/sh
# fasgd-ctl against a live fasgd-server on loopback: two fasgd-clients
# train on the MNIST digits while fasgd-ctl asks for the status (text and
# JSON), forces checkpoints, and finds the endpoint from -e, -c and -p;
# bad usage exits 2, a dead endpoint exits 3 within the timeout, a server
# without checkpoint.file refuses CHECKPOINT (exit 1), and raw garbage on
# the control port leaves the server answering. TAP output.
tap_name=ctl
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
# ctl ARGS...: runs fasgd-ctl, stdout in $tmp/out, stderr in $tmp/err, status in $rc.
ctl() { "$ctl" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?; }
# json_check PYTHON-EXPRESSION: true when it holds for the object j in $tmp/out.
json_check() {
    python3 -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$tmp/out"
}

plan_mnist 29

# The guard judges sizes only (no reference, no loss check: test_guard*
# test those): the second checkpoint needs T to move, and once the two
# clients' pushes on average predict ascent of the held-out loss the guard
# ignores them all and T stands still (a parallel suite once saw 82,000
# ignored in a row).
cat > "$tmp/server.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
clients: 2
rule: {name: fasgd, lr: 0.005}
gates: {push: {gate: every, every: 2}}
data: {dir: "$data"}
eval: {every: 100}
checkpoint: {file: "$tmp/ckpt", seconds: 0}
limits: {bandwidth: 1e9}
guard: {examples: 0, loss_examples: 0}
log: {status_seconds: 1, level: info}
YAML
serve "$tmp/ports" "$tmp/server.log" "$server" -c "$tmp/server.yaml"
check "the server writes push=, fetch= and control= to its port file" \
    grep -q '^control=tcp://127.0.0.1:[0-9]' "$tmp/ports"
sed -n 3p "$tmp/ports" | grep -q '^control=' || echo "# control= is not the third line"

ctl --help
check "--help exits 0 with the usage" test $rc -eq 0 -a -n "$(grep 'Usage: fasgd-ctl \[-e ENDPOINT | -c SERVER.yaml | -p PORTFILE\]' "$tmp/out")"
ctl --version
check "--version prints fasgd-ctl VERSION" sh -c "test $rc -eq 0 && grep -q '^fasgd-ctl [0-9][0-9.]*' '$tmp/out'"

usage_errors() {
    for args in "" "-p $tmp/ports frobnicate" "-p $tmp/ports status checkpoint" "-e $control -p $tmp/ports status" \
                "-p $tmp/ports --timeout-ms 0 status" "-p $tmp/ports --timeout-ms x status" "--nosuch status" \
                "-p $tmp/ports --set rule.lr=1 status" "-p $tmp/nonexistent status" "--set nosuch=1 status" \
                "-c $tmp/server.yaml status"; do
        # shellcheck disable=SC2086
        "$ctl" $args > "$tmp/out" 2> "$tmp/err"
        r=$?
        if [ $r -ne 2 ] || ! grep -q '^fasgd-ctl: ' "$tmp/err"; then
            echo "# fasgd-ctl $args: exit $r, not 2 with a message"; return 1
        fi
    done
}
check "bad usage exits 2 with a message, asking nothing" usage_errors
ctl -c "$tmp/server.yaml" status
check "-c with an ephemeral control port points at the port file" grep -q 'no fixed port.*-p FILE' "$tmp/err"

start_client() {   # start_client NAME [options]
    name=$1; shift
    "$client" -s "$push" -f "$fetch" --data "$data" --name "$name" --quiet "$@" \
        > "$tmp/$name.out" 2> "$tmp/$name.log" &
    pids="$pids $!"
}
start_client c1 --seed 1
start_client c2 --seed 2
# A few hundred updates, both clients in, the rates' window past a second.
check "two clients train: T reaches 300" wait_for \
    "'$ctl' -p '$tmp/ports' --json status > '$tmp/out' 2> '$tmp/err' &&
     python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j[\"T\"] >= 300 and j[\"clients\"] == 2 and j[\"window_s\"] >= 1))' '$tmp/out'" 30

ctl -p "$tmp/ports" status
check "status exits 0 and names the server" sh -c "test $rc -eq 0 && grep -q '^fasgd-server [0-9.]* at $control (protocol [0-9]*)' '$tmp/out'"
check "status shows 2 clients and a timestamp > 0" sh -c "
    grep -q '^clients  *2 connected' '$tmp/out' &&
    grep -q '^timestamp T  *[1-9][0-9]*$' '$tmp/out'"
check "status shows rates with units and the client table" sh -c "
    grep -q '^  pushes  *[0-9.]* /s   total [1-9]' '$tmp/out' &&
    grep -q '^  bytes out  *[0-9.]* [kMG]*B/s  total ' '$tmp/out' &&
    grep -q '^ *id  name  *connected  *idle  *pushes  *repeats  *fetches  *304s  *last tau$' '$tmp/out' &&
    grep -q '^ *[0-9][0-9]*  c1  *[0-9.]* s ' '$tmp/out' && grep -q '^ *[0-9][0-9]*  c2  *[0-9.]* s ' '$tmp/out'"
check "status shows the tau histogram, 0 to 1024+" sh -c "
    grep -q '^0  *[0-9]* *[0-9.]*%' '$tmp/out' && grep -q '^2-3  *[0-9]' '$tmp/out' &&
    grep -q '^1024+  *[0-9]' '$tmp/out'"
check "status shows the wire format" grep -q '^wire  *gradients as f32, parameters as f32$' "$tmp/out"
check "limits.bandwidth gives the provisioning line" \
    grep -q '^provisioning  *[0-9.]* [kMG]*B/s per client: room for [0-9][0-9]* more client' "$tmp/out"

ctl -p "$tmp/ports" --json status
check "--json exits 0 and is valid JSON (python3 -m json.tool)" sh -c "
    test $rc -eq 0 && python3 -m json.tool '$tmp/out' > /dev/null"
check "--json has the expected keys" json_check "all(k in j for k in (
    'endpoint', 'status', 'protocol', 'version', 'time', 'uptime_s', 'T', 'rule', 'vbar', 'clients',
    'window_s', 'update_rate', 'push_rate', 'repeat_rate', 'fetch_rate', 'not_modified_rate', 'pushes',
    'repeats', 'fetches', 'not_modified', 'push_repeat_ratio', 'fetch_not_modified_ratio',
    'bytes_in_rate', 'bytes_out_rate', 'bytes_in', 'bytes_out', 'tau_mean', 'tau_max', 'val_error',
    'val_nll', 'val_T', 'bandwidth_budget', 'bandwidth_used', 'bandwidth_per_client', 'more_clients',
    'per_client', 'tau_histogram', 'wire_push', 'wire_params')) and j['status'] == 200 and j['rule'] == 'fasgd' and
    j['wire_push'] == 'f32' and j['wire_params'] == 'f32'"
check "--json: 2 clients, c1 and c2, each pushing and fetching" json_check "
    j['clients'] == 2 and sorted(c['name'] for c in j['per_client']) == ['c1', 'c2'] and
    all(c['pushes'] > 0 and c['fetches'] > 0 and c['connected_s'] > 0 and 'last_tau' in c for c in j['per_client'])"
# Every applied gradient, a PUSH or a PUSH_REPEAT, lands in one τ bucket;
# with the push gate 'every 2' about half the pushes the server sees are repeats.
check "--json: plausible rates, the histogram adds up, about half are repeats" json_check "
    j['T'] > 0 and 0 < j['update_rate'] < 1e6 and j['push_rate'] > 0 and j['fetch_rate'] > 0 and
    j['bytes_in_rate'] > 0 and j['bytes_out_rate'] > 0 and 0 < j['window_s'] <= 13 and
    len(j['tau_histogram']) == 12 and j['tau_histogram'][-1]['max'] is None and
    sum(b['count'] for b in j['tau_histogram']) == j['pushes'] + j['repeats'] and
    0.3 < j['push_repeat_ratio'] < 0.7 and 0 <= j['val_error'] <= 1 and j['val_T'] <= j['T']"
check "--json: the provisioning estimate is floor((budget - used) / per client)" json_check "
    abs(j['bandwidth_per_client'] - j['bandwidth_used'] / 2) <= 1 and
    abs(j['more_clients'] - (1e9 - j['bandwidth_used']) // j['bandwidth_per_client']) <= 1"

rm -f "$tmp/ckpt"
ctl -p "$tmp/ports" checkpoint
check "checkpoint writes the checkpoint file now" sh -c "
    test $rc -eq 0 && test -s '$tmp/ckpt' && grep -q '^checkpoint written to $tmp/ckpt at T=[1-9]' '$tmp/out'"
cp "$tmp/ckpt" "$tmp/ckpt.first"
T1=$(sed -n 's/.* at T=\([0-9]*\) .*/\1/p' "$tmp/out")
wait_for "'$ctl' -p '$tmp/ports' --json status > '$tmp/j' && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))[\"T\"] <= $T1)' '$tmp/j'" 10
# At most one checkpoint a second is written on request: a request sooner
# waits for it (tests/test_server.c counts the writes of a burst).
ctl -p "$tmp/ports" --json checkpoint
check "a second checkpoint updates it, at a later T (JSON reply)" sh -c "
    test $rc -eq 0 && ! cmp -s '$tmp/ckpt' '$tmp/ckpt.first' &&
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j[\"status\"] == 200 and j[\"T\"] > $T1 and j[\"file\"] == \"$tmp/ckpt\"))' '$tmp/out'"

# The server's configuration names the port with a wildcard host: -c asks 127.0.0.1.
port=${control##*:}
printf 'control_endpoint: "tcp://*:%s"\nrule: {name: fasgd}\n' "$port" > "$tmp/fixed.yaml"
ctl -c "$tmp/fixed.yaml" status
check "-c reads control_endpoint through the server's key table (* becomes 127.0.0.1)" sh -c "
    test $rc -eq 0 && grep -q '^fasgd-server .* at tcp://127.0.0.1:$port ' '$tmp/out'"
ctl --set "control_endpoint=tcp://0.0.0.0:$port" status
r1=$rc
ctl -e "$control" --timeout-ms 2000 status
check "--set control_endpoint alone (0.0.0.0 becomes 127.0.0.1), and -e" test $r1 -eq 0 -a $rc -eq 0

start=$(date +%s%N)
ctl -e tcp://127.0.0.1:1 --timeout-ms 500 status
end=$(date +%s%N)
check "a dead endpoint exits 3 within the timeout ($(( (end - start) / 1000000 )) ms)" sh -c "
    test $rc -eq 3 && grep -q 'no answer from tcp://127.0.0.1:1 within 500 ms' '$tmp/err' &&
    test $(( (end - start) / 1000000 )) -lt 2500"

# Raw bytes on the control port, not even ZeroMQ's handshake, then a
# ZeroMQ peer sending nonsense: the server drops or refuses them and answers.
python3 - "$port" <<'PY' 2> "$tmp/err"
import socket, sys
for payload in (b"\xff" * 64 + b"GET / HTTP/1.0\r\n\r\n", bytes(range(256)) * 40, b"\x00" * 10):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    try:
        s.sendall(payload)
        s.recv(64)
    except OSError:
        pass
    s.close()
PY
ctl -p "$tmp/ports" status
check "raw garbage on the control port: the server still answers" sh -c "
    test $rc -eq 0 && grep -q '^clients  *2 connected' '$tmp/out' && kill -0 $server_pid"

# A second server, without checkpoint.file or a bandwidth budget.
cat > "$tmp/bare.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
model: {sizes: [20, 8, 4]}
eval: {enabled: false}
log: {status_seconds: 0}
YAML
"$server" -c "$tmp/bare.yaml" --port-file "$tmp/bare.ports" > "$tmp/bare.log" 2>&1 &
bare_pid=$!
pids="$pids $bare_pid"
wait_for "grep -q '^control=' '$tmp/bare.ports' 2>/dev/null" 20
ctl -p "$tmp/bare.ports" checkpoint
check "checkpoint without checkpoint.file exits 1 with the reason" sh -c "
    test $rc -eq 1 && grep -q 'refused CHECKPOINT: 409 checkpoint.file is empty' '$tmp/err'"
ctl -p "$tmp/bare.ports" status
check "no budget, no provisioning line; no clients, no table" sh -c "
    test $rc -eq 0 && ! grep -q '^provisioning' '$tmp/out' && ! grep -q '^ *id  name' '$tmp/out' &&
    grep -q '^clients  *0 connected' '$tmp/out' && grep -q '^validation  *none yet' '$tmp/out'"
kill -TERM "$bare_pid"

# Port 0 binds an ephemeral port as * does: the port file, the log and
# fasgd-ctl -c name the port bound, or say it has none fixed.
sed 's/127\.0\.0\.1:\*/127.0.0.1:0/' "$tmp/bare.yaml" > "$tmp/zero.yaml"
"$server" -c "$tmp/zero.yaml" --port-file "$tmp/zero.ports" > "$tmp/zero.log" 2>&1 &
zero_pid=$!
pids="$pids $zero_pid"
wait_for "grep -q '^control=' '$tmp/zero.ports' 2>/dev/null" 20
ctl -p "$tmp/zero.ports" status
check "port 0: the port file names the ports bound, and fasgd-ctl -p reaches the server" sh -c "
    test $rc -eq 0 && ! grep -q ':0\$' '$tmp/zero.ports' && grep -q '^control=tcp://127.0.0.1:[1-9]' '$tmp/zero.ports'"
ctl -c "$tmp/zero.yaml" status
check "port 0: fasgd-ctl -c says it has no fixed port" sh -c "test $rc -eq 2 && grep -q 'no fixed port' '$tmp/err'"
kill -TERM "$zero_pid"

kill -TERM "$server_pid"
wait "$server_pid"
check "the server stops cleanly (exit 0)" test $? -eq 0
check "its log says the final checkpoint was written, and where" \
    grep -q "final checkpoint written at T=[1-9][0-9]* to $tmp/ckpt\$" "$tmp/server.log"
[ "$failed" -eq 0 ]
