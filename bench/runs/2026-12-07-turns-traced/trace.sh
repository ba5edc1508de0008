#!/usr/bin/env bash
# trace.sh OUT -- COMMAND...: runs COMMAND with the kernel's tcp_probe and
# tcp_retransmit_skb tracepoints on for the connections of port 5555 (a
# fasgd-server's push port: one-trip replies go back on it), in a
# tracefs instance of its own, written to OUT (as root; at most 10 min).
set -euo pipefail
[ $# -ge 3 ] && [ "$2" = -- ] || { echo "usage: $0 OUT -- COMMAND..." >&2; exit 2; }
out=$1; shift 2
T=/sys/kernel/tracing
[ -d "$T/events/tcp/tcp_probe" ] || { echo "$0: no tcp_probe tracepoint under $T" >&2; exit 77; }
I=$T/instances/fasgd-turns-trace
mkdir "$I"
stop() {
    echo 0 > "$I/events/tcp/tcp_probe/enable" || true
    echo 0 > "$I/events/tcp/tcp_retransmit_skb/enable" || true
    [ -z "${reader:-}" ] || { sleep 1; kill "$reader" 2> /dev/null || true; wait "$reader" 2> /dev/null || true; }
    rmdir "$I" || true
}
trap stop EXIT
echo 16384 > "$I/buffer_size_kb"
for e in tcp_probe tcp_retransmit_skb; do
    echo 'sport == 5555 || dport == 5555' > "$I/events/tcp/$e/filter"
    echo 1 > "$I/events/tcp/$e/enable"
done
timeout 660 cat "$I/trace_pipe" > "$out" &
reader=$!
timeout 600 "$@"
