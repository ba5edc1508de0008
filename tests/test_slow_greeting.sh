#!/bin/sh
# A connection's first request that is still arriving is not closed as
# silent (limits.greeting_ms, server/connections.c): a client's first push
# of a large model over a slow or shared link takes longer than the
# greeting time, and closing it would lose that push. tests/slow_peer.py
# completes ZeroMQ's handshake, then sends its first request at a set
# rate: at 4,000 bytes a second (4 times the 1,000 that keep it waited
# for) for 5 greeting times it stays open, and once it stops sending it is
# closed; at 200 bytes a second, or silent, it is closed after one
# greeting time, as before. A client (the Python module over
# libfasgdclient) whose first push comes two and a half greeting times
# after its JOIN has none of its connections closed: it greets the push
# connection it opens after joining at once. TAP output.
tap_name=slow_greeting
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
peer="$top_src/tests/slow_peer.py"

echo "1..5"
if [ ! -x "$python" ]; then
    for k in 1 2 3 4 5; do echo "ok $k # SKIP no $python"; done
    exit 0
fi

cat > "$tmp/server.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
eval: {enabled: false}
log: {level: info, status_seconds: 0}
limits: {greeting_ms: 1000}
YAML
serve "$tmp/ports" "$tmp/server.log" "$server" -c "$tmp/server.yaml" || echo "# the server did not start"
port=${push##*:}

# A library built with --enable-sanitizers needs the ASan runtime first.
asan=$(ldd "$top_build/client/.libs/libfasgdclient.so.0" 2> /dev/null | awk '/libasan/ { print $3 }')
FASGD_TOP_BUILDDIR=$top_build PYTHONDONTWRITEBYTECODE=1 LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0 \
    timeout 60 "$python" - "$top_src/python" "$push" "$fetch" > "$tmp/out" 2> "$tmp/err" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import fasgd
c = fasgd.Client(sys.argv[2], sys.argv[3])
theta = c.fetch()
time.sleep(2.5)
try:
    c.push(np.full_like(theta, 1e-3))
except fasgd.Refused as e:
    print("refused:", e)
c.leave()
print("pushed")
PY
rc=$?
closed=$(grep -c 'sent no valid request' "$tmp/server.log")
check "a client's first push 2.5 s after its JOIN: none of its connections closed as silent (exit $rc, $closed closed)" \
    sh -c "[ $rc = 0 ] && grep -q pushed '$tmp/out' && [ $closed = 0 ]"

# slow RATE SECONDS WAIT: the peer's line: open|closed BYTES SINCE-FIRST SINCE-LAST.
slow() { timeout 60 "$python" "$peer" 127.0.0.1 "$port" "$@" 2>&1; }

set -- $(slow 4000 5 6)
check "a first request arriving at 4,000 bytes a second stays open while it comes ($*: 5 s of it)" \
    sh -c "[ '$1' = open ] || awk 'BEGIN { exit !($3 >= 5) }'"
check "... and is closed once it stops (within 6 s of its last byte)" \
    sh -c "[ '$1' = closed ] && awk 'BEGIN { exit !($3 >= 5 && $4 <= 6) }'"
set -- $(slow 200 5 6)
check "one at 200 bytes a second is closed after limits.greeting_ms, as a silent one ($*)" \
    sh -c "[ '$1' = closed ] && awk 'BEGIN { exit !($3 < 3.5) }'"
set -- $(slow 0 0 6)
check "a silent one is closed after limits.greeting_ms ($*)" \
    sh -c "[ '$1' = closed ] && awk 'BEGIN { exit !($4 < 3.5) }'"
exit $((failed > 0))
