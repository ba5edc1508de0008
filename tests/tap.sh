# The shell tests' common part, sourced after setting tap_name: the build
# and source trees, a temporary folder $tmp removed at exit (with every
# process in $pids killed first), and TAP helpers. A failed check shows
# what the test left in $tmp/out, $tmp/err and $tmp/server.log.
top_src=${FASGD_TOP_SRCDIR:-.}
top_build=${FASGD_TOP_BUILDDIR:-.}
tmp=$(mktemp -d "/tmp/fasgd-test-$tap_name-XXXXXX") || exit 99
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# The programs under test, and the MNIST digits most tests train on.
server="$top_build/server/fasgd-server"
client="$top_build/client/fasgd-client"
ctl="$top_build/ctl/fasgd-ctl"
data="${FASGD_DATA_DIR:-$top_src/data}/mnist"
python=${FASGD_PYTHON:-/usr/bin/python3}
# plan_mnist N: the TAP plan of N checks; stops at once, failing, when the
# digits are missing.
plan_mnist() {
    echo "1..$1"
    if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
        echo "not ok 1 - MNIST digits missing: run scripts/get-mnist"; exit 1
    fi
}

# guard_server_yaml FILE EVAL: FILE, the configuration of a server on
# loopback (ports picked by the kernel) training the MLP on the digits with
# fasgd at lr 0.005 and the guard's defaults, logging at info
# without status lines; EVAL is its eval block ("{every: 500}").
guard_server_yaml() {
    cat > "$1" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
rule: {name: fasgd, lr: 0.005}
data: {dir: "$data"}
eval: $2
log: {level: info, status_seconds: 0}
YAML
}

# skip_without_metrics: the whole test skipped (a SKIP plan, exit 0) when
# this build serves no metrics (configured --without-microhttpd).
skip_without_metrics() {
    printf 'eval: {enabled: false}\n' > "$tmp/probe.yaml"
    if "$server" -c "$tmp/probe.yaml" -n -s metrics.endpoint=http://127.0.0.1:0/metrics 2>&1 \
            | grep -q 'without libmicrohttpd'; then
        echo "1..0 # SKIP this build has no libmicrohttpd (configured --without-microhttpd)"; exit 0
    fi
}

n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
    for f in "$tmp/out" "$tmp/err"; do [ -s "$f" ] && sed 's/^/# /' "$f" | head -20; done
    [ -s "$tmp/server.log" ] && tail -5 "$tmp/server.log" | sed 's/^/# server: /'
    return 0
}
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
# Whether every line but the empty ones of file $1 is a whole line of
# file $2 with $3 before it (a report's output shown in a page); the
# first that is not goes to $tmp/err.
lines_in_page() {
    [ -s "$1" ] || return 1
    grep -v '^$' "$1" > "$tmp/lines"
    while IFS= read -r line; do
        grep -qxF -- "$3$line" "$2" || { echo "not in $2: $line" >> "$tmp/err"; return 1; }
    done < "$tmp/lines"
}
# json_number FILE KEY: the number KEY of a `fasgd-ctl -j status` saved in
# FILE (- for stdin); empty when it has none.
# ctl_number PORTFILE KEY: the same, asked now of the server of PORTFILE.
json_number() { sed -n "s/^ *\"$2\": \([0-9.]*\),*$/\1/p" "$1"; }
ctl_number() { "$ctl" -j -p "$1" status | json_number - "$2"; }
# wait_number PORTFILE KEY MIN SECONDS: waits up to SECONDS for that number
# to reach MIN; false if it never did.
wait_number() {
    wn_i=0
    until [ "$(ctl_number "$1" "$2")" -ge "$3" ] 2>/dev/null; do
        wn_i=$((wn_i + 1)); [ $wn_i -gt $(($4 * 10)) ] && return 1; sleep 0.1
    done
}
# Waits up to $2 seconds for command $1 (a string) to succeed.
wait_for() { i=0; while ! sh -c "$1"; do i=$((i + 1)); [ $i -gt $(($2 * 10)) ] && return 1; sleep 0.1; done; }
# slurm_folder FILE: the folder scripts/slurm-local named in the "one-node
# Slurm up" line it wrote to FILE (empty when it wrote none).
slurm_folder() { sed -n 's/.*one-node Slurm up: .*(\(\/tmp\/fasgd-slurm-[A-Za-z0-9]*\)).*/\1/p' "$1"; }
# pids_using DIR: the processes that hold a file, or their working folder,
# in DIR (scripts/lib.sh's, which is bash).
pids_using() { bash -c '. "$1/scripts/lib.sh"; pids_using "$2"' _ "$top_src" "$1"; }
# serve PORTFILE LOG COMMAND...: COMMAND --port-file PORTFILE in the
# background, its output added to LOG, its pid in $server_pid (and $pids);
# waits up to 20 s for the port file (written at once, when the server
# listens), then sets $push, $fetch and $control from it (and $i, as
# wait_for does). False when the file never came. (scripts/lib.sh's
# start_server, for the scripts.)
serve() {
    serve_pf=$1 serve_log=$2; shift 2
    rm -f "$serve_pf"
    "$@" --port-file "$serve_pf" >> "$serve_log" 2>&1 &
    server_pid=$!
    pids="$pids $server_pid"
    wait_for "test -s '$serve_pf'" 20 || return 1
    push=$(sed -n 's/^push=//p' "$serve_pf")
    fetch=$(sed -n 's/^fetch=//p' "$serve_pf")
    control=$(sed -n 's/^control=//p' "$serve_pf")
}
