# The parts the scripts share; sourced (bash) after `set -euo pipefail`:
#     . "$(dirname "$0")/lib.sh"
# Sets $top, the top of the source tree (nothing else runs on sourcing), and
# defines:
#   ensure_built [PROGRAM...]  build in $top/build (scripts/build) when one
#                              of the programs (e.g. server/fasgd-server) is
#                              missing there; with none, always (make then
#                              rebuilds only what changed)
#   ensure_mnist               get the MNIST digits into data/mnist when
#                              they are missing (scripts/get-mnist)
#   make_workdir NAME          $work, a new /tmp/fasgd-NAME-XXXXXX, and an
#                              EXIT trap that kills every pid in $pids and
#                              removes $work
#   kill_pids                  kill (TERM) every pid in $pids that is still
#                              this shell's child, and reap them
#   start_server PORTFILE LOG COMMAND...
#                              COMMAND --port-file PORTFILE in the background
#                              (output appended to LOG), its pid in
#                              $server_pid and $pids; waits up to 20 s
#                              (SERVER_WAIT) for the port file, then sets $push, $fetch and
#                              $control from it; fails (the log's tail on
#                              stderr) when the server does not start
#   portfile_get FILE KEY      the endpoint KEY (push, fetch, control) there
#   progress TEXT              a progress line on stderr, at most one every
#                              4 s (PROGRESS_SECONDS): rewritten in place on
#                              a terminal, a plain line otherwise
#   progress_done              ends a rewritten progress line
#   wait_below N TEXT          waits until fewer than N of this shell's
#                              background jobs run (1: none), TEXT and the
#                              count still running as progress
#   provenance PROGRAM         $commit: the commit PROGRAM was built from
#                              (build-commit in its build folder, which make
#                              writes: "+changes" when the code differed
#                              from it), followed by "(tree at HEAD)" and a
#                              warning on stderr when the tree's HEAD is
#                              another ("unknown" without build-commit);
#                              $binhash (PROGRAM's SHA-256, 16 hex digits)
#                              and $machine, for kept runs
#   pids_using DIR             the pids, other than this shell's, whose
#                              working folder or an open file is in DIR
#                              (files deleted since included): what a
#                              daemon left behind there, whoever its parent
#   keep_csv CSV OUT COLUMN... CSV's COLUMNs (by name; fails on a missing
#                              one) gzipped into OUT, through OUT.tmp (gzip
#                              -n: the same CSV makes the same bytes)
#   client_refused FILE...     the gradients refused (422) that the
#                              fasgd-client summary lines in FILEs count,
#                              summed (0 for a file without one)
#   has_curve DIR FILE LIST    whether DIR keeps the curve FILE: loose in
#                              DIR, or named in the file LIST (what
#                              scripts/kept-curves list DIR printed, taken
#                              once: its pack is read whole)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pids=()

ensure_built() {
    local p
    if [ $# -eq 0 ]; then "$top/scripts/build" "$top/build"; return; fi
    for p in "$@"; do
        [ -x "$top/build/$p" ] || { "$top/scripts/build" "$top/build"; return; }
    done
}

ensure_mnist() {
    [ -f "$top/data/mnist/train-images-idx3-ubyte.gz" ] || "$top/scripts/get-mnist"
}

kill_pids() {
    local p
    # Only those still this shell's children: a pid that ended long ago
    # may since name another process (pid_max is 32768 on some machines).
    for p in "${pids[@]+"${pids[@]}"}"; do
        [ "$(ps -o ppid= -p "$p" 2> /dev/null | tr -d ' ')" = "$$" ] && kill "$p" 2> /dev/null || true
    done
    wait 2> /dev/null || true
}

pids_using() {
    # find's -lname matches the links' targets with a * that spans '/'.
    # Processes that end during the walk make find fail: not an error here
    # (callers run under set -e and pipefail, some in an EXIT trap).
    { find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$1" -o -lname "$1/*" -o -lname "$1 (deleted)" \) 2> /dev/null || true
      find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -lname "$1/*" 2> /dev/null || true; } \
        | cut -d/ -f3 | sort -un | { grep -vx "$$" || true; }
}

make_workdir() {
    work=$(mktemp -d "/tmp/fasgd-$1-XXXXXX")
    trap 'kill_pids; rm -rf "$work"' EXIT
}

portfile_get() { sed -n "s/^$2=//p" "$1"; }

start_server() {
    local pf=$1 log=$2 i
    shift 2
    rm -f "$pf"
    "$@" --port-file "$pf" >> "$log" 2>&1 8>&- &
    server_pid=$!
    pids+=("$server_pid")
    # The server writes the file atomically, once it listens.
    for i in $(seq $((${SERVER_WAIT:-20} * 10))); do
        [ -s "$pf" ] && break
        kill -0 "$server_pid" 2> /dev/null || break
        sleep 0.1
    done
    if [ ! -s "$pf" ]; then
        tail -5 "$log" >&2
        echo "$(basename "$0"): the server did not start (log: $log)" >&2
        return 1
    fi
    push=$(portfile_get "$pf" push)
    fetch=$(portfile_get "$pf" fetch)
    control=$(portfile_get "$pf" control)
}

progress_last=0
progress_open=0
progress() {
    local now=${EPOCHSECONDS:-$(date +%s)}
    [ $((now - progress_last)) -ge "${PROGRESS_SECONDS:-4}" ] || return 0
    progress_last=$now
    if [ -t 2 ]; then
        printf '\r%s: %s\033[K' "$(basename "$0")" "$*" >&2
        progress_open=1
    else
        echo "$(basename "$0"): $*" >&2
    fi
}
progress_done() {
    if [ "$progress_open" = 1 ]; then echo >&2; progress_open=0; fi
}

wait_below() {
    local n
    while n=$(jobs -rp | wc -l) && [ "$n" -ge "$1" ]; do
        progress "$2 ($n running, $SECONDS s since the start)"
        sleep 0.5
    done
}

provenance() {
    local built head
    # make writes build-commit beside the program folders (build/sim,
    # build/server, ...) at every build; HEAD may have moved since.
    built=$(cat "$(dirname "$(dirname "$1")")/build-commit" 2> /dev/null || true)
    head=$(git -C "$top" rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
    commit=${built:-unknown}
    if [ "${commit%+changes}" != "$head" ]; then
        echo "$(basename "$0"): $1 was built from commit $commit, but the tree is at $head (make rebuilds it)" >&2
        commit="$commit (tree at $head)"
    fi
    binhash=$(sha256sum "$1" | cut -c1-16)
    machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, $(uname -s) $(uname -r)"
    blas_kernels
    machine="$machine, OpenBLAS $("$top/scripts/blas-kernels" --name)"
}

# blas_kernels: pins the OpenBLAS kernels scripts/blas-kernels names
# (exports OPENBLAS_CORETYPE), for every run this script starts.
blas_kernels() {
    local k
    k=$("$top/scripts/blas-kernels")
    if [ -n "$k" ]; then export OPENBLAS_CORETYPE=$k; fi
}

client_refused() {
    local f n sum=0
    for f in "$@"; do
        n=$(sed -n 's/.* \([0-9]*\) gradients refused (422).*/\1/p' "$f" | tail -1)
        sum=$((sum + ${n:-0}))
    done
    echo "$sum"
}

has_curve() {
    [ -f "$1/$2" ] || grep -qxF "$2" "$3"
}

keep_csv() {
    local csv=$1 out=$2
    shift 2
    awk -F, -v OFS=, -v want="$*" 'NR == 1 {
        n = split(want, w, " ")
        for (i = 1; i <= NF; i++) col[$i] = i
        for (j = 1; j <= n; j++) if (!(w[j] in col)) { print "no column " w[j] > "/dev/stderr"; exit 1 }
    }
    { line = $(col[w[1]]); for (j = 2; j <= n; j++) line = line OFS $(col[w[j]]); print line }' "$csv" \
        | gzip -n -9 > "$out.tmp" && mv "$out.tmp" "$out"
}
