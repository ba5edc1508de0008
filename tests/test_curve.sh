#!/bin/sh
# CURVE on a live fasgd-server on loopback: fasgd-ctl keygen makes the
# keys; a client whose key is in the allowlist trains; an unknown key, a
# plain client, a client with the wrong server key and a plain fasgd-ctl
# are refused at once with their reasons; a connection with another
# allowed key cannot speak for a client it is not; a key removed and
# reloaded is revoked without a restart (its running client is dropped
# and refused), and allowed again after the next reload; the Python
# module trains secured; a secured client against a plain server is told
# so; bad security configurations are refused by -n. TAP output.
tap_name=curve
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
raw_peer="$top_build/tests/raw_peer"

plan_mnist 33

# run NAME COMMAND...: stdout in $tmp/NAME.out, stderr in $tmp/NAME.err,
# status in $rc, seconds taken in $took.
run() {
    name=$1; shift
    t0=$(date +%s)
    "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
    rc=$?
    took=$(($(date +%s) - t0))
    cp "$tmp/$name.err" "$tmp/err"
}

# Keys.
cd "$tmp" || exit 99
mkdir keys allowed
run keygen "$ctl" keygen keys/server
check "keygen writes NAME.key and NAME.key_secret" test $rc -eq 0 -a -f keys/server.key -a -f keys/server.key_secret
check "the secret file is mode 600, the public one 644" \
    test "$(stat -c %a keys/server.key_secret) $(stat -c %a keys/server.key)" = "600 644"
check "the public file holds no secret key" sh -c "! grep -q secret-key keys/server.key"
run keygen2 "$ctl" keygen keys/server.key
check "keygen refuses to overwrite a certificate (exit 1, says why)" \
    sh -c "test $rc -eq 1 && grep -q 'File exists' '$tmp/err'"
for k in alice bob carol; do "$ctl" keygen "keys/$k" > /dev/null || echo "# keygen $k failed"; done
cp keys/alice.key keys/carol.key allowed/
cd - > /dev/null || exit 99

# Configurations refused before serving.
base="push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
data: {dir: \"$data\"}
eval: {every: 100}
heartbeat: {interval_ms: 200, expiry_ms: 3000}"
refused_config() {   # refused_config WHAT-TO-FIND YAML-LINES
    printf '%s\n%s\n' "$base" "$2" > "$tmp/bad.yaml"
    "$server" -c "$tmp/bad.yaml" -n > "$tmp/out" 2> "$tmp/err"
    r=$?
    [ $r -ne 0 ] && grep -q "$1" "$tmp/err"
}
check "-n refuses security.curve.clients without server_cert" \
    refused_config "clients needs security.curve.server_cert" "security: {curve: {clients: $tmp/allowed}}"
check "-n refuses both clients and allow_any" refused_config "not both" \
    "security: {curve: {server_cert: $tmp/keys/server.key_secret, clients: $tmp/allowed, allow_any: true}}"
mkdir "$tmp/public" && cp "$tmp/keys/bob.key" "$tmp/public/"
check "-n refuses a server certificate without its secret key" refused_config "holds no secret key" \
    "security: {curve: {server_cert: $tmp/public/bob.key, allow_any: true}}"
check "-n refuses an allowlist directory it cannot read" refused_config "cannot read $tmp/nonexistent" \
    "security: {curve: {server_cert: $tmp/keys/server.key_secret, clients: $tmp/nonexistent}}"

printf '%s\nsecurity: {curve: {server_cert: %s, clients: %s}}\n' "$base" "$tmp/keys/server.key_secret" \
    "$tmp/allowed" > "$tmp/server.yaml"
serve "$tmp/ports" "$tmp/server.log" "$server" -c "$tmp/server.yaml"
check "a CURVE server starts and says so" grep -q 'CURVE on' "$tmp/server.log"
secured_ctl() { "$ctl" -p "$tmp/ports" -k "$tmp/keys/server.key" --cert "$tmp/keys/server.key_secret" "$@"; }
# status_has PYTHON-EXPRESSION: true when it holds for the JSON status j.
status_has() {
    secured_ctl --json status > "$tmp/status.json" 2> "$tmp/err" &&
        python3 -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
            "$tmp/status.json"
}
train() {   # train NAME KEY [options]: a client with KEY's certificate
    name=$1; key=$2; shift 2
    run "$name" "$client" -s "$push" -f "$fetch" --data "$data" --name "$name" --quiet --timeout-ms 10000 \
        --server-key "$tmp/keys/server.key" --cert "$tmp/keys/$key.key_secret" "$@"
}

train alice alice --steps 100
check "a client whose key is allowed trains (100 steps)" \
    sh -c "test $rc -eq 0 && grep -q ': 100 steps' '$tmp/alice.out'"
# 100 pushes: the first 16 on probation (guard.probation), judged but not
# applied, the others applied.
check "STATUS says CURVE, two keys allowed, 100 pushes (16 on probation)" \
    status_has "j['security'] == 'curve' and j['allowed_keys'] == 2 and j['pushes'] + j['guard_ignored'] == 100 and j['guard_ignored'] >= 16"

train bob bob --steps 10
check "an unknown key is refused at once, with the reason" \
    sh -c "test $rc -eq 1 -a $took -lt 10 && grep -q \"refused this client's CURVE key\" '$tmp/err'"
run plain "$client" -s "$push" -f "$fetch" --data "$data" --quiet --timeout-ms 10000 --steps 10
check "a plain client is refused at once, told the server requires CURVE" \
    sh -c "test $rc -eq 1 -a $took -lt 10 && grep -q 'requires CURVE' '$tmp/err'"
train wrongkey alice --steps 10 --server-key "$tmp/keys/bob.key"
check "a client with the wrong server key is refused at once, asked about the key" \
    sh -c "test $rc -eq 1 -a $took -lt 10 && grep -q 'is the server key right' '$tmp/err'"
run plainctl "$ctl" -p "$tmp/ports" status
check "a plain fasgd-ctl is refused at once, told the server requires CURVE and what to give" \
    sh -c "test $rc -eq 1 && grep -q 'requires CURVE.*-c SERVER.yaml.*--server-key' '$tmp/err' && ! grep -q fasgd_client_set_curve '$tmp/err'"
check "STATUS counts the refused key and the failed handshakes" \
    status_has "j['auth_refused'] >= 1 and j['handshake_failed'] >= 2 and j['clients'] == 0"
check "the refusal is logged with the peer's address and key" \
    grep -q "refused a connection from 127.0.0.1: CURVE key $(sed -n 's/.*public-key = "\(.*\)"/\1/p' \
        "$tmp/keys/bob.key" | sed 's/[][\.*^$/]/\\&/g') is not in the allowlist" "$tmp/server.log"

# A client id belongs to the key that joined with it.
"$client" -s "$push" -f "$fetch" --data "$data" --name alice --quiet --delay-ms 20 \
    --server-key "$tmp/keys/server.key" --cert "$tmp/keys/alice.key_secret" \
    > "$tmp/alice2.out" 2> "$tmp/alice2.err" &
alice_pid=$!
pids="$pids $alice_pid"
# wait_status PYTHON-EXPRESSION SECONDS: until status_has holds.
wait_status() {
    i=0
    while ! status_has "$1"; do i=$((i + 1)); [ $i -gt $(($2 * 5)) ] && return 1; sleep 0.2; done
}
check "a second client with the allowed key joins; STATUS names its key" \
    wait_status "len(j.get('per_client', [])) == 1 and j['per_client'][0]['key_name'] == 'alice'" 20
alice_id=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['per_client'][0]['id'])" \
    "$tmp/status.json")
"$raw_peer" "$push" "$tmp/keys/server.key" "$tmp/keys/alice.key_secret" HEARTBEAT "$alice_id" > "$tmp/out" 2> "$tmp/err"
check "a request for that id without its session gets 401, even with its key" grep -q '^status 401$' "$tmp/out"
# A peer with alice's key joins, and tells its session to carol.
"$raw_peer" "$push" "$tmp/keys/server.key" "$tmp/keys/alice.key_secret" JOIN 0 > "$tmp/out" 2> "$tmp/err"
peer_id=$(sed -n 's/^id \([0-9]*\) session .*/\1/p' "$tmp/out")
peer_session=$(sed -n 's/^id [0-9]* session \([0-9]*\)$/\1/p' "$tmp/out")
"$raw_peer" "$push" "$tmp/keys/server.key" "$tmp/keys/carol.key_secret" LEAVE "$peer_id" "$peer_session" \
    > "$tmp/out" 2> "$tmp/err"
check "LEAVE for that id and session from another allowed key gets 401" grep -q '^status 401$' "$tmp/out"
"$raw_peer" "$fetch" "$tmp/keys/server.key" "$tmp/keys/carol.key_secret" FETCH "$peer_id" "$peer_session" \
    > "$tmp/out" 2> "$tmp/err"
check "FETCH for that id and session from another allowed key gets 401" grep -q '^status 401$' "$tmp/out"
"$raw_peer" "$push" "$tmp/keys/server.key" "$tmp/keys/alice.key_secret" LEAVE "$peer_id" "$peer_session" \
    > "$tmp/out" 2> "$tmp/err"
check "the same request with the key and session that joined gets 200" grep -q '^status 200$' "$tmp/out"
check "the first client is still there, the requests counted as forbidden" \
    status_has "j['clients'] == 1 and j['forbidden'] >= 3 and j['per_client'][0]['id'] == $alice_id"

# Revoked without a restart, allowed again after the next reload.
mv "$tmp/allowed/alice.key" "$tmp/"
run reload secured_ctl reload
check "reload drops the key and the client joined with it" \
    sh -c "test $rc -eq 0 && grep -q '1 keys allowed, 1 clients revoked' '$tmp/reload.out'"
check "the revoked client is refused when it joins again, and exits 1" \
    wait_for "! kill -0 $alice_pid 2>/dev/null" 20
wait "$alice_pid"; alice_rc=$?
cp "$tmp/alice2.err" "$tmp/err"
check "its reason: the server no longer allows its key, said as an error" \
    sh -c "test $alice_rc -eq 1 && grep -q \"error: .*no longer allows this client's CURVE key\" '$tmp/alice2.err'"
check "it does not blame a restart or an expiry, nor join again" \
    sh -c "! grep -q 'expired us\\|joining again' '$tmp/alice2.err'"
check "nor warns after the error that its LEAVE was refused: it sends none" \
    sh -c "! grep -q 'warn: leave' '$tmp/alice2.err'"
train alice3 alice --steps 10
check "a new connection with the revoked key is refused" sh -c "test $rc -eq 1"
mv "$tmp/alice.key" "$tmp/allowed/"
run reload2 secured_ctl reload
train alice4 alice --steps 50
check "after the key is back and reloaded, the client trains again" \
    sh -c "test $rc -eq 0 && grep -q ': 50 steps' '$tmp/alice4.out'"

# The Python module, secured.
if [ -x "$python" ] && "$python" -c 'import numpy' 2> /dev/null; then
    asan=$(ldd "$top_build/client/.libs/libfasgdclient.so.0" 2> /dev/null | awk '/libasan/ { print $3 }')
    cat > "$tmp/secured.py" <<'PY'
import sys
import numpy as np
import fasgd
push, fetch, keys = sys.argv[1:4]
with fasgd.Client(push, fetch, server_key=keys + "/server.key", cert=keys + "/carol.key_secret",
                  name="py") as c:
    theta = c.fetch()
    for _ in range(20):
        c.step_gated(np.zeros(c.nparams, dtype=np.float32), theta)
    print("trained", c.public_key)
try:
    fasgd.Client(push, fetch, timeout_ms=10000)
    print("plain joined")
except fasgd.Error as e:
    print("plain refused", e.code == fasgd.ESECURITY, e)
PY
    LD_PRELOAD=$asan ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        PYTHONPATH="$top_src/python:$top_build/python" PYTHONDONTWRITEBYTECODE=1 \
        timeout 60 "$python" "$tmp/secured.py" "$push" "$fetch" "$tmp/keys" > "$tmp/out" 2> "$tmp/err"
    carol=$(sed -n 's/.*public-key = "\(.*\)"/\1/p' "$tmp/keys/carol.key")
    check "the Python module trains secured, with its certificate's key" \
        grep -qxF "trained $carol" "$tmp/out"
    check "a plain Python client is refused with ESECURITY and the reason" \
        grep -q "plain refused True .*requires CURVE" "$tmp/out"
else
    echo "ok $((n + 1)) # SKIP python3 with numpy not found"
    echo "ok $((n + 2)) # SKIP python3 with numpy not found"
    n=$((n + 2))
fi

# A secured client against a plain server.
printf '%s\n' "$base" > "$tmp/plain.yaml"
serve "$tmp/plain-ports" "$tmp/plain-server.log" "$server" -c "$tmp/plain.yaml"
run secured "$client" -s "$push" -f "$fetch" \
    --data "$data" --quiet --timeout-ms 10000 --steps 10 --server-key "$tmp/keys/server.key" \
    --cert "$tmp/keys/alice.key_secret"
# The plain server's refusal may reach the client as a closed connection
# before its greeting is read: then the client asks about both.
check "a secured client against a plain server is refused at once, told so" \
    sh -c "test $rc -eq 1 -a $took -lt 10 && grep -q 'the server does not use CURVE\|does the server use CURVE' '$tmp/err'"

[ $n -eq 31 ] || echo "# ran $n checks, planned 31"
[ $failed -eq 0 ]
