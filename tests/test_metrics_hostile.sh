#!/bin/sh
# Hostile scrapes cannot stall training: while two clients train, the
# metrics endpoint gets garbage, requests that never end, scrapes whose
# replies are never read and 1,000 idle connections (tests/hostile_scrape.py,
# 8 s). T keeps rising at a comparable rate (at least a quarter of the
# rate before: the scrapers share this machine's CPUs) and the loop never
# pauses for long (its status line comes every second), the server's open
# descriptors stay bounded, and the endpoint answers again afterwards.
# TAP output.
tap_name=metrics-hostile
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

if [ ! -x "$python" ]; then
    echo "1..0 # SKIP no $python for the hostile scrapers"; exit 0
fi
skip_without_metrics
plan_mnist 7

cat > "$tmp/server.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: ""
metrics: {endpoint: "http://127.0.0.1:0/metrics"}
clients: 2
rule: {name: fasgd, lr: 0.005}
data: {dir: "$data"}
eval: {enabled: false}
log: {status_seconds: 1}
YAML
"$server" -c "$tmp/server.yaml" --port-file "$tmp/ports" > "$tmp/server.log" 2>&1 &
server_pid=$!
pids="$pids $server_pid"
check "the server starts with a metrics endpoint" wait_for "grep -qs '^metrics=' '$tmp/ports'" 30
push=$(sed -n 's/^push=//p' "$tmp/ports")
fetch=$(sed -n 's/^fetch=//p' "$tmp/ports")
metrics=$(sed -n 's/^metrics=//p' "$tmp/ports")
mport=$(echo "$metrics" | sed 's|.*:||; s|/.*||')
for s in 1 2; do
    "$client" -s "$push" -f "$fetch" --data "$data" --name "c$s" --seed "$s" --quiet > /dev/null 2> "$tmp/c$s.log" &
    pids="$pids $!"
done

# T now, from the server's status line (the poll loop's, not the endpoint's).
T_now() { grep -o 'T=[0-9]*' "$tmp/server.log" | tail -1 | cut -d= -f2; }
wait_for "[ \"\$(grep -o 'T=[0-9]*' '$tmp/server.log' | tail -1 | cut -d= -f2)\" -gt 0 ] 2> /dev/null" 30
sleep 1
T0=$(T_now); sleep 6; T1=$(T_now)
before=$(( (T1 - T0) / 6 ))
check "training runs before the scrapers: $before updates a second" [ "$before" -gt 0 ]

fds_max=0
"$python" "$top_src/tests/hostile_scrape.py" 127.0.0.1 "$mport" 8 --idle 1000 --slow 100 > "$tmp/hostile.out" 2>&1 &
hostile=$!
pids="$pids $hostile"
sleep 1
T2=$(T_now)
from=$(grep -c 'notice: T=' "$tmp/server.log")
for i in 1 2 3 4 5 6; do
    sleep 1
    fds=$(ls "/proc/$server_pid/fd" 2> /dev/null | wc -l)
    [ "$fds" -gt "$fds_max" ] && fds_max=$fds
done
T3=$(T_now)
# The longest pause between the loop's status lines (one a second) while
# the scrapers ran: a loop held up by a scrape shows here first.
gap=$(grep 'notice: T=' "$tmp/server.log" | tail -n +"$from" | sed 's/^[^T]*T\([0-9]*\):\([0-9]*\):\([0-9.]*\)Z.*/\1 \2 \3/' \
      | awk '{ t = $1 * 3600 + $2 * 60 + $3; if (NR > 1 && t - last > max) max = t - last; last = t }
             END { printf "%.1f", max }')
wait "$hostile"
during=$(( (T3 - T2) / 6 ))
echo "# before: $before updates/s; under the scrapers: $during updates/s; $(cat "$tmp/hostile.out")"
echo "# the server's open descriptors at most $fds_max; the longest pause between its status lines ${gap} s"
check "under hostile scrapes T rises at least a quarter as fast ($during vs $before updates/s)" \
    [ $((during * 4)) -ge "$before" ]
check "no pause of the loop over 2.5 s while they ran (${gap} s between status lines)" \
    awk "BEGIN { exit !($gap < 2.5) }"
check "the scrapers ran: 1,000 idle connections and many bursts" \
    grep -q 'idle=1000 slow=100 .*unread=[1-9].*bursts=[1-9]' "$tmp/hostile.out"
check "the server's open descriptors stay bounded ($fds_max, under 300)" [ "$fds_max" -lt 300 ]
check "the endpoint answers again after them, with T" \
    wait_for "curl -sf --max-time 5 '$metrics' | grep -q '^fasgd_server_timestamp [1-9]'" 20
exit $((failed > 0))
