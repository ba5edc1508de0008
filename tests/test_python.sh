#!/bin/sh
# The Python module fasgd (python/fasgd) against live fasgd-servers on
# loopback: tests/python_api.py, which reports TAP. Uses Debian's
# /usr/bin/python3 with numpy (python3-numpy); skipped without them.
top_src=${FASGD_TOP_SRCDIR:-.}
top_build=${FASGD_TOP_BUILDDIR:-.}
python=${FASGD_PYTHON:-/usr/bin/python3}

if ! [ -x "$python" ]; then
    echo "1..0 # SKIP $python not found"; exit 0
fi
if ! "$python" -c 'import numpy' 2> /dev/null; then
    echo "1..0 # SKIP numpy missing for $python (apt-get install python3-numpy)"; exit 0
fi
if [ ! -f "${FASGD_DATA_DIR:-$top_src/data}/mnist/train-images-idx3-ubyte.gz" ]; then
    echo "1..1"; echo "not ok 1 - MNIST digits missing: run scripts/get-mnist"; exit 1
fi
# A library built with --enable-sanitizers needs the ASan runtime loaded
# before anything else in the interpreter; Python's own allocations at exit
# are not leaks of ours.
asan=$(ldd "$top_build/client/.libs/libfasgdclient.so.0" 2> /dev/null | awk '/libasan/ { print $3 }')
if [ -n "$asan" ]; then
    LD_PRELOAD=$asan; export LD_PRELOAD
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS
fi
# The test's files go in a folder removed however the interpreter ends.
tmp=$(mktemp -d /tmp/fasgd-test-python-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
TMPDIR=$tmp FASGD_TOP_SRCDIR=$top_src FASGD_TOP_BUILDDIR=$top_build PYTHONDONTWRITEBYTECODE=1 \
    OMP_NUM_THREADS=1 timeout 300 "$python" "$top_src/tests/python_api.py"
