#!/bin/sh
# Prometheus scrapes a training run: fasgd-server with metrics.endpoint on
# an ephemeral loopback port and two fasgd-clients; Debian's real
# prometheus (temporary storage, a scrape a second) scrapes it, and its
# own query API (/api/v1/query) gives back T, pushes_total and the
# staleness histogram's buckets, and a client's steps and round trips
# (fasgd-client --metrics). A bad metrics.endpoint is a
# configuration error naming the key. SKIP when prometheus is missing or
# cannot start here. TAP output.
tap_name=prometheus
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

prometheus=${FASGD_PROMETHEUS:-prometheus}
if ! command -v "$prometheus" > /dev/null 2>&1; then
    echo "1..0 # SKIP prometheus is not installed (Debian: prometheus)"; exit 0
fi
if [ ! -x "$python" ]; then
    echo "1..0 # SKIP no $python to read Prometheus's JSON"; exit 0
fi
skip_without_metrics
plan_mnist 12

cat > "$tmp/server.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: ""
metrics: {endpoint: "http://127.0.0.1:0/metrics"}
clients: 2
rule: {name: fasgd, lr: 0.005}
data: {dir: "$data"}
eval: {every: 500}
log: {status_seconds: 0}
YAML

"$server" -c "$tmp/server.yaml" -s metrics.endpoint=tcp://127.0.0.1:9464 -n > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a metrics.endpoint that is not http:// is a configuration error naming the key (exit 1)" \
    sh -c "[ $rc -eq 1 ] && grep -q 'error: metrics.endpoint: .tcp://127.0.0.1:9464. is not an http:// endpoint' '$tmp/err'"
"$server" -c "$tmp/server.yaml" -s metrics.endpoint=http://127.0.0.1:70000/metrics -n > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a port past 65535 is refused the same way" \
    sh -c "[ $rc -eq 1 ] && grep -q 'metrics.endpoint: .*the port must be a number from 0 to 65535' '$tmp/err'"

"$server" -c "$tmp/server.yaml" --port-file "$tmp/ports" > "$tmp/server.log" 2>&1 &
pids="$pids $!"
check "the server starts and writes its metrics= line" wait_for "grep -qs '^metrics=http://127.0.0.1:[1-9]' '$tmp/ports'" 30
push=$(sed -n 's/^push=//p' "$tmp/ports")
fetch=$(sed -n 's/^fetch=//p' "$tmp/ports")
metrics=$(sed -n 's/^metrics=//p' "$tmp/ports")
target=$(echo "$metrics" | sed 's|^http://||; s|/.*||')
# The first client serves its own metrics (--metrics), on a port it logs.
for s in 1 2; do
    extra=""
    [ $s = 1 ] && extra="--metrics http://127.0.0.1:0/metrics"
    "$client" -s "$push" -f "$fetch" --data "$data" --name "c$s" --seed "$s" --quiet $extra \
        > /dev/null 2> "$tmp/c$s.log" &
    pids="$pids $!"
done
check "the client with --metrics logs its endpoint" wait_for "grep -q 'metrics at http://127.0.0.1:[1-9]' '$tmp/c1.log'" 30
client_target=$(sed -n 's|.*metrics at http://\([^/]*\)/.*|\1|p' "$tmp/c1.log")

# Prometheus on a free loopback port (asked of the kernel, then freed: a
# race with another process is retried with the next one).
cat > "$tmp/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: fasgd
    metrics_path: /metrics
    static_configs: [{targets: ["$target"]}]
  - job_name: fasgd-client
    metrics_path: /metrics
    static_configs: [{targets: ["$client_target"]}]
YAML
free_port() {
    "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
started=no
for attempt in 1 2 3; do
    port=$(free_port)
    "$prometheus" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
        --web.listen-address="127.0.0.1:$port" --log.level=warn > "$tmp/prometheus.log" 2>&1 &
    prom_pid=$!
    pids="$pids $prom_pid"
    if wait_for "curl -sf 'http://127.0.0.1:$port/-/ready' > /dev/null" 30; then
        started=yes; break
    fi
    kill "$prom_pid" 2> /dev/null; wait "$prom_pid" 2> /dev/null
done
if [ $started = no ]; then
    n=3
    while [ $n -lt 12 ]; do
        n=$((n + 1)); echo "ok $n # SKIP prometheus did not start: $(tail -1 "$tmp/prometheus.log")"
    done
    exit $((failed > 0))
fi
api="http://127.0.0.1:$port/api/v1"
ok "prometheus starts on 127.0.0.1:$port"

# $query EXPR: the instant vector's samples, one "labels value" line each
# (a script, so that the checks' sh -c can run it).
query="$tmp/query"
cat > "$query" <<SH
#!/bin/sh
curl -sf --max-time 10 -G "$api/query" --data-urlencode "query=\$1" | "$python" -c '
import json, sys
r = json.load(sys.stdin)
assert r["status"] == "success", r
for s in r["data"]["result"]:
    labels = ",".join(k + "=" + v for k, v in sorted(s["metric"].items()) if k not in ("__name__", "job", "instance"))
    print(labels or "-", s["value"][1])'
SH
chmod +x "$query"
# Prometheus has scraped the target, T past 100, pushes, the histogram.
check "prometheus scrapes the server: its target is up" \
    wait_for "'$query' 'up{job=\"fasgd\"}' | grep -qx -- '- 1'" 30
check "T read back from prometheus rises past 100" \
    wait_for "'$query' fasgd_server_timestamp > '$tmp/T' && awk '{ n++; if (\$2 <= 100) bad = 1 } END { exit bad || n != 1 }' '$tmp/T'" 60
"$query" fasgd_server_pushes_total > "$tmp/pushes"
check "pushes_total read back from prometheus is positive" awk '{ n++; if ($2 <= 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/pushes"
"$query" fasgd_server_staleness_bucket > "$tmp/buckets"
"$query" 'fasgd_server_staleness_bucket{le="+Inf"} - ignoring(le) fasgd_server_staleness_count' > "$tmp/count"
"$query" 'fasgd_server_staleness_bucket{le="0"} > ignoring(le) fasgd_server_staleness_bucket{le="1"}' > "$tmp/decreasing"
check "the staleness histogram's 12 buckets, 0 to +Inf, cumulative, +Inf = count" sh -c "
    [ \$(wc -l < '$tmp/buckets') -eq 12 ] && grep -q '^le=0 ' '$tmp/buckets' && grep -q '^le=1023 ' '$tmp/buckets' \
    && grep -qx -- '- 0' '$tmp/count' \
    && [ ! -s '$tmp/decreasing' ]"
# Two scrapes must fall in the rate's window: on a loaded machine a scrape
# can come late, so the rate is asked again until it has them.
check "a rate over the scrapes: updates a second above 0" \
    wait_for "'$query' 'rate(fasgd_server_timestamp[10s])' > '$tmp/rate' && awk '{ n++; if (\$2 <= 0) bad = 1 } END { exit bad || n != 1 }' '$tmp/rate'" 30
"$query" fasgd_client_steps_total > "$tmp/steps"
check "the client's steps_total read back from prometheus is positive" \
    awk '{ n++; if ($2 <= 0) bad = 1 } END { exit bad || n != 1 }' "$tmp/steps"
"$query" 'fasgd_client_round_trip_seconds_count - fasgd_client_steps_total' > "$tmp/rtt"
check "its round-trip histogram counts every step it took" grep -qx -- '- 0' "$tmp/rtt"
exit $((failed > 0))
