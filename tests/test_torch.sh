#!/bin/sh
# examples/torch_cluster.sh as a test: fasgd-server holding a PyTorch CNN as
# an external model, 4 worker processes of examples/torch_mnist.py training
# it on the MNIST digits with rule fasgd; the final validation error on the
# 2,000 validation digits must be below 4%: one evaluation at the end of an
# asynchronous run, which in 7 suite runs (6 of a fresh clone, the 0.020
# of a local build) ended at 0.0155, 0.017, 0.017, 0.0175, 0.020, 0.021
# and once 0.032 (its worker 0 had seen
# 0.0205 at T=4208; 3% was the bound then). An untrained CNN is near 0.9.
# No worker may have a gradient refused (the guard judges sizes only here,
# an external model, and leaves out an honest spike).
# Skipped without PyTorch
# (python3-torch) for /usr/bin/python3. Reports TAP.
top_src=${FASGD_TOP_SRCDIR:-.}
top_build=${FASGD_TOP_BUILDDIR:-.}
python=${FASGD_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d /tmp/fasgd-test-torch-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if ! [ -x "$python" ] || ! "$python" -c 'import numpy, torch' 2> /dev/null; then
    echo "1..0 # SKIP PyTorch or numpy missing for $python (apt-get install python3-torch python3-numpy)"
    exit 0
fi
# Under --enable-sanitizers every torch allocation goes through ASan's
# allocator: the run takes several times as long and checks nothing of
# fasgd's that tests/test_python.sh does not check there already.
if ldd "$top_build/client/.libs/libfasgdclient.so.0" 2> /dev/null | grep -q libasan; then
    echo "1..0 # SKIP libfasgdclient is built with sanitizers (tests/test_python.sh covers it)"
    exit 0
fi
# scripts/test sets this for make distcheck, which would train it a second time.
if [ -n "${FASGD_SKIP_TORCH:-}" ]; then
    echo "1..0 # SKIP FASGD_SKIP_TORCH is set"
    exit 0
fi
echo "1..3"
if [ ! -f "${FASGD_DATA_DIR:-$top_src/data}/mnist/train-images-idx3-ubyte.gz" ]; then
    echo "not ok 1 - MNIST digits missing: run scripts/get-mnist"
    echo "not ok 2 - MNIST digits missing"
    echo "not ok 3 - MNIST digits missing"
    exit 1
fi

FASGD_TOP_BUILDDIR=$top_build FASGD_PYTHON=$python \
    timeout 900 sh "$top_src/examples/torch_cluster.sh" --clients 4 --max-error 0.04 \
    --csv "$tmp/server.csv" > "$tmp/out" 2>&1
rc=$?
final=$(sed -n 's/^== final validation error: \([0-9.]*\).*/\1/p' "$tmp/out")
# Worker 0's reports reached the server's CSV (an external model's validation).
if [ -s "$tmp/server.csv" ] && [ "$(tail -n +2 "$tmp/server.csv" | wc -l)" -ge 3 ]; then
    echo "ok 1 - the server's CSV holds the workers' validation reports"
else
    echo "not ok 1 - the server's CSV holds the workers' validation reports"
fi
if [ "$rc" -eq 0 ] && [ -n "$final" ]; then
    echo "ok 2 - 4 workers train the CNN to validation error $final (< 0.04)"
else
    echo "not ok 2 - 4 workers train the CNN below 4% validation error (exit $rc, final '${final:-none}')"
fi
# No honest gradient refused: each worker's summary line counts its 422s
# (an outsized spike of the CNN's gradient is left out, not refused:
# fasgd.yaml(5), limits.grad_norm_action).
workers=$(grep -c '^torch-[0-9]*: .* gradients refused (422)' "$tmp/out")
refused=$(sed -n 's/^torch-[0-9]*: .*, \([0-9]*\) gradients refused (422).*/\1/p' "$tmp/out" | awk '{ s += $1 } END { print s + 0 }')
if [ "$workers" -eq 4 ] && [ "$refused" -eq 0 ]; then
    echo "ok 3 - no worker's gradient refused (4 workers' summaries: 0 refused)"
else
    echo "not ok 3 - no worker's gradient refused ($workers of 4 workers' summaries; $refused refused in all)"
fi
sed 's/^/# /' "$tmp/out"
[ "$rc" -eq 0 ] && [ -n "$final" ] && [ "$workers" -eq 4 ] && [ "$refused" -eq 0 ]
