#!/bin/sh
# examples/torch_mnist.py as a cluster on loopback: fasgd-server holding the
# CNN as an external model on ephemeral ports, N worker processes (one torch
# thread each) training it asynchronously, worker 0 reporting validation
# results, and a last evaluation of the final parameters on the 2,000
# validation digits once the workers are done.
#
# Usage: examples/torch_cluster.sh [OPTION]...
#   --clients N       worker processes (default 4)
#   --updates N       the workers stop together once the server's timestamp
#                     reaches N (default 6000)
#   --steps N         and each after at most N gradient steps (default: no limit)
#   --batch B         minibatch size (default 32)
#   --lr LR           the server's rule.lr (default: torch_mnist.py's)
#   --eval-every N    worker 0 evaluates every N steps (default 250)
#   --max-error E     exit 1 when the final validation error is above E
#   --set KEY=VALUE   a server configuration key (repeatable), e.g.
#                     --set rule.name=sasgd --set gates.fetch.gate=bfasgd
#   --csv FILE        keep the server's validation CSV there
#   --quiet           print only the final line
# Environment: FASGD_TOP_BUILDDIR (default: build/ of this tree, or the tree
# itself when built in place), FASGD_SERVER (the fasgd-server to run),
# FASGD_PYTHON (default /usr/bin/python3).
# Exit status: 0, or 1 when a process failed or the error is above --max-error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
nclients=4; updates=6000; steps=0; batch=32; lr=""; eval_every=250; max_error=""; csv=""; quiet=0
sets=""
while [ $# -gt 0 ]; do
    case "$1" in
        --clients) nclients=$2; shift ;;
        --updates) updates=$2; shift ;;
        --steps) steps=$2; shift ;;
        --batch) batch=$2; shift ;;
        --lr) lr=$2; shift ;;
        --eval-every) eval_every=$2; shift ;;
        --max-error) max_error=$2; shift ;;
        --set) sets="$sets
$2"; shift ;;
        --csv) csv=$2; shift ;;
        --quiet) quiet=1 ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "torch_cluster.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    [ $# -gt 0 ] && shift
done
for v in "$nclients" "$updates" "$steps" "$batch" "$eval_every"; do
    case "$v" in ''|*[!0-9]*) echo "torch_cluster.sh: '$v' is not a number" >&2; exit 2 ;; esac
done
[ "$nclients" -ge 1 ] || { echo "torch_cluster.sh: --clients must be at least 1" >&2; exit 2; }
[ "$updates" -ge 1 ] || [ "$steps" -ge 1 ] || { echo "torch_cluster.sh: --updates 0 needs --steps" >&2; exit 2; }

python=${FASGD_PYTHON:-/usr/bin/python3}
if [ -z "${FASGD_TOP_BUILDDIR:-}" ]; then
    if [ -x "$top/build/server/fasgd-server" ]; then FASGD_TOP_BUILDDIR=$top/build
    elif [ -x "$top/server/fasgd-server" ]; then FASGD_TOP_BUILDDIR=$top
    fi
fi
server=${FASGD_SERVER:-${FASGD_TOP_BUILDDIR:+$FASGD_TOP_BUILDDIR/server/fasgd-server}}
[ -n "$server" ] && [ -x "$server" ] || server=$(command -v fasgd-server || true)
if [ -z "$server" ]; then
    echo "torch_cluster.sh: no fasgd-server: build the tree (scripts/build build) or set FASGD_SERVER" >&2
    exit 1
fi
[ -n "${FASGD_TOP_BUILDDIR:-}" ] && export FASGD_TOP_BUILDDIR
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1
say() { [ "$quiet" = 1 ] || echo "$@"; }

work=$(mktemp -d /tmp/fasgd-torch-cluster-XXXXXX)
pids=""; server_pid=""
# shellcheck disable=SC2317  # run by the trap
cleanup() {
    for p in $pids $server_pid; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$python" "$here/torch_mnist.py" --write-server-config "$work" > "$work/config.out"
# Loopback ports the kernel picks; a control socket only where the server has one.
set -- --set 'push_endpoint=tcp://127.0.0.1:*' --set 'fetch_endpoint=tcp://127.0.0.1:*' \
    --set "eval.csv=$work/server.csv" --set "clients=$nclients"
if "$server" --keys | grep -q '^ *control_endpoint '; then set -- "$@" --set 'control_endpoint='; fi
[ -n "$lr" ] && set -- "$@" --set "rule.lr=$lr"
while IFS= read -r kv; do [ -n "$kv" ] && set -- "$@" --set "$kv"; done <<EOF
$sets
EOF
"$server" -c "$work/server.yaml" --port-file "$work/ports" "$@" > "$work/server.log" 2>&1 &
server_pid=$!
i=0
while [ ! -s "$work/ports" ]; do
    i=$((i + 1))
    if [ $i -gt 300 ] || ! kill -0 "$server_pid" 2>/dev/null; then
        cat "$work/server.log" >&2
        echo "torch_cluster.sh: the server did not start" >&2
        exit 1
    fi
    sleep 0.1
done
push=$(sed -n 's/^push=//p' "$work/ports")
fetch=$(sed -n 's/^fetch=//p' "$work/ports")
say "== fasgd-server: $(sed -n 's/^# //p' "$work/server.yaml" | head -1), push $push, fetch $fetch"

t0=$(date +%s)
i=0
while [ $i -lt "$nclients" ]; do
    "$python" "$here/torch_mnist.py" -s "$push" -f "$fetch" --index $i --updates "$updates" --steps "$steps" \
        --batch "$batch" --eval-every "$eval_every" > "$work/worker-$i.out" 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
done
say "== $nclients workers, minibatches of $batch digits, until T=$updates"

# Worker 0's validation lines as they come; then every worker's status.
shown=0; failed=0
while :; do
    if [ "$quiet" = 0 ]; then
        n=$(grep -c 'validation error' "$work/worker-0.out" 2>/dev/null || true)
        if [ "${n:-0}" -gt "$shown" ]; then
            grep 'validation error' "$work/worker-0.out" | sed -n "$((shown + 1)),${n}p"
            shown=$n
        fi
    fi
    running=0
    for p in $pids; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
    [ "$running" -eq 0 ] && break
    sleep 0.5
done
i=0
for p in $pids; do
    if ! wait "$p"; then
        failed=$((failed + 1))
        echo "torch_cluster.sh: worker $i failed:" >&2
        tail -5 "$work/worker-$i.out" >&2
    fi
    [ "$quiet" = 1 ] || grep -v 'validation error' "$work/worker-$i.out" || true
    i=$((i + 1))
done
pids=""
t1=$(date +%s)

"$python" "$here/torch_mnist.py" -s "$push" -f "$fetch" --evaluate > "$work/final.out" 2>&1 || failed=$((failed + 1))
kill -TERM "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
[ -n "$csv" ] && [ -f "$work/server.csv" ] && cp "$work/server.csv" "$csv"
final=$(sed -n 's/.*validation error \([0-9.]*\).*/\1/p' "$work/final.out")
if [ -z "$final" ]; then
    cat "$work/final.out" >&2
    echo "torch_cluster.sh: no final evaluation" >&2
    exit 1
fi
T=$(sed -n 's/^T=\([0-9]*\).*/\1/p' "$work/final.out")
echo "== final validation error: $final (T=$T, $nclients workers, $((t1 - t0)) s of training)"
[ "$failed" -eq 0 ] || exit 1
if [ -n "$max_error" ] && awk -v e="$final" -v m="$max_error" 'BEGIN { exit !(e > m) }'; then
    echo "torch_cluster.sh: $final is above --max-error $max_error" >&2
    exit 1
fi
exit 0
