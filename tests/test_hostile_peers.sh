#!/bin/sh
# Peers that would take the server's resources, on a live fasgd-server on
# loopback. With 64 file descriptors, 300 TCP connections opened at once
# and held: the server turns those beyond limits.connections away, does
# not spin a core (ZeroMQ's listener on EMFILE would), still answers
# fasgd-ctl on its control socket, and trains a client once they are
# gone. A client that sends PUSH with THEN_FETCH and never reads the
# parameters it asked for: the server's memory stays bounded (its replies
# are dropped at the peer's high-water mark) and an honest client trains
# beside it. TAP output.
tap_name=hostile
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
flood_peer="$top_build/tests/flood_peer"

plan_mnist 10

cat > "$tmp/server.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
data: {dir: "$data"}
eval: {every: 200}
heartbeat: {interval_ms: 200, expiry_ms: 3000}
YAML
# cpu_ticks PID: user + system clock ticks the process has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# rss_kb PID: its resident memory.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# status_json: fasgd-ctl's JSON status in $tmp/status.json.
status_json() { "$ctl" -p "$tmp/ports" --json status > "$tmp/status.json" 2> "$tmp/err"; }
# status_has PYTHON-EXPRESSION: true when it holds for the JSON status j.
status_has() {
    status_json && "$python" -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
        "$tmp/status.json"
}

# 64 descriptors: the server keeps 40 for itself, 24 for peers' connections.
serve "$tmp/ports" "$tmp/server.log" sh -c 'ulimit -n 64 && exec "$@"' sh "$server" -c "$tmp/server.yaml" --log-level info
check "with 64 file descriptors the server allows 24 connections" \
    grep -q 'connections: at most 24 open (64 file descriptors)' "$tmp/server.log"

# 300 connections at once, held for 8 s.
"$python" - "${push##*:}" > "$tmp/holder.out" 2>&1 <<'PY' &
import socket, sys, time
held = []
for i in range(300):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
        held.append(s)
    except OSError:
        pass
print("connected", len(held), flush=True)
time.sleep(8)
PY
holder_pid=$!
pids="$pids $holder_pid"
wait_for "grep -q connected '$tmp/holder.out'" 10
sleep 1
t0=$(cpu_ticks $server_pid)
sleep 2
t1=$(cpu_ticks $server_pid)
ticks_per_s=$(getconf CLK_TCK)
check "the server does not spin while they are held ($((t1 - t0)) ticks in 2 s, $ticks_per_s a second)" \
    test $((t1 - t0)) -lt $((ticks_per_s / 2))
check "fasgd-ctl is still answered on the control socket" status_json
check "STATUS: at most 24 connections, those beyond turned away" \
    status_has "j['connections_max'] == 24 and j['connections'] <= 24 + 16 and j['connections_shed'] >= 250"
check "the server says so in its log" \
    grep -Eq 'turned away a connection on the push socket|closed the oldest connection that has not sent' \
    "$tmp/server.log"
wait $holder_pid
wait_for "'$ctl' -p '$tmp/ports' --json status | grep -q '\"connections\": [0-3],'" 10 ||
    echo "# the held connections are still open"
"$client" -s "$push" -f "$fetch" --data "$data" --quiet --steps 50 --timeout-ms 5000 > "$tmp/out" 2> "$tmp/err"
check "once they are gone a client joins and trains (50 steps)" test $? -eq 0
kill $server_pid
wait $server_pid

# A client that never reads the parameters it asks for. Under
# AddressSanitizer freed blocks wait in a quarantine (256 MiB by default)
# before they are reused, which would count as growth here: keep it small.
: > "$tmp/server.log"
serve "$tmp/ports2" "$tmp/server.log" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" \
    "$server" -c "$tmp/server.yaml"
"$client" -s "$push" -f "$fetch" --data "$data" --quiet --steps 20 --timeout-ms 5000 > "$tmp/out" 2> "$tmp/err"
before=$(rss_kb $server_pid)
"$flood_peer" "$push" 6 > "$tmp/flood.out" 2> "$tmp/flood.err" &
flood_pid=$!
pids="$pids $flood_pid"
sleep 2
"$client" -s "$push" -f "$fetch" --data "$data" --quiet --steps 200 --timeout-ms 5000 > "$tmp/out" 2> "$tmp/err"
check "an honest client trains beside it (200 steps)" test $? -eq 0
peak=$(rss_kb $server_pid)
wait $flood_pid
sent=$(sed -n 's/^sent //p' "$tmp/flood.out")
check "the flooding peer sent its pushes (${sent:-none})" test "${sent:-0}" -ge 100
after=$(rss_kb $server_pid)
[ "$after" -gt "$peak" ] && peak=$after
grew=$(((peak - before) / 1024))
check "the server's memory stays bounded: RSS grew by $grew MiB (under 150)" test "$grew" -lt 150
check "the server still answers and stops cleanly" sh -c "kill $server_pid && wait $server_pid; true"
[ $n -eq 10 ] || echo "# ran $n checks, planned 10"
[ $failed -eq 0 ]
