#!/bin/sh
# A request from a connection that fasgd-server turns away at its accept,
# or that is gone before its accept is read, is not served, though
# libzmq read it before the server read the accept (server/connections.c,
# s_refuse). The server's loop is held (its standard error a full pipe
# of one page, tests/held_stderr.py) while a peer takes the one greeting
# place of 127.0.0.2 and a client from 127.0.0.2 connects and sends
# JOIN, three times (one a second, unanswered), each JOIN read by
# libzmq's own thread; when the loop runs again it must neither answer
# nor count them. Then, the place free, a client from 127.0.0.2 joins
# and trains. TAP output.
tap_name=turned_away_request
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
stall="$top_src/tests/stall_peers.py"
accepted="$top_src/tests/accepted.py"

plan_mnist 5

mkdir "$tmp/held"
cat > "$tmp/server.yaml" <<EOF
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
data: {dir: "$data"}
log: {status_seconds: 1}
limits: {greeting_per_address: 1, greeting_ms: 60000}
EOF
serve "$tmp/ports" "$tmp/held.out" "$python" "$top_src/tests/held_stderr.py" "$tmp/held" \
    "$server" -c "$tmp/server.yaml" || echo "# the server did not start"
pids="$pids $(cat "$tmp/held/pid")"

# Hold the loop: it blocks at its next line to standard error (a status
# line comes every second).
touch "$tmp/held/hold"
wait_for "test -e '$tmp/held/full'" 10 || echo "# the pipe was not filled"
i=0
while "$ctl" -p "$tmp/ports" -t 1000 status > /dev/null 2>&1 && [ $i -lt 20 ]; do i=$((i + 1)); sleep 0.5; done
check "the server's loop is held (fasgd-ctl status unanswered after $i answers)" test $i -lt 20

"$python" "$stall" 127.0.0.1 "${push##*:}" 1 60 > "$tmp/stall.out" 2>&1 &
stall_pid=$!
pids="$pids $stall_pid"
check "libzmq accepts the holder's connection from 127.0.0.2 while the loop is held" \
    wait_for "'$python' '$accepted' ${push##*:} 127.0.0.2" 20
from="tcp://127.0.0.2:0;127.0.0.1:${push##*:}"
timeout 60 "$client" -s "$from" -f "$fetch" --data "$data" --quiet --steps 3 --timeout-ms 1000 \
    > "$tmp/out" 2> "$tmp/err" &
client_pid=$!
pids="$pids $client_pid"
# Its connection accepted and its JOIN sent: 3 s is ample for a
# handshake on loopback (the JOIN is read by libzmq's thread, not the
# loop).
sleep 3
touch "$tmp/held/release"
wait "$client_pid"
rc=$?
check "the client, unanswered, gives up (exit $rc)" test $rc -ne 0
joined=$(ctl_number "$tmp/ports" joins)
check "its JOIN, read before its connection's accept, was not served ($joined joins)" test "$joined" = 0

{ kill "$stall_pid"; wait "$stall_pid"; } 2> /dev/null
timeout 60 "$client" -s "$from" -f "$fetch" --data "$data" --quiet --steps 3 --timeout-ms 3000 \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "with the place free a client from 127.0.0.2 joins and trains (exit $rc, $(ctl_number "$tmp/ports" joins) joins)" test $rc -eq 0
cat "$tmp/held/log" >> "$tmp/server.log" 2> /dev/null
[ $failed -eq 0 ]
