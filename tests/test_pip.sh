#!/bin/sh
# The Python module as pip installs it (python/pyproject.toml), offline:
# a fresh virtual environment (--system-site-packages, for numpy), `pip
# install --no-index --no-build-isolation` of a copy of python/, then
# `import fasgd` outside the source tree; the library found through
# FASGD_LIBRARY or the pkg-config file of a prefix, a clear message when
# it is nowhere; and README.md's training loops, numpy and PyTorch, run
# as written (tests/readme_snippet.py). Skipped without Debian's python3 with venv,
# pip, setuptools and numpy. Reports TAP.
tap_name=pip
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ -x "$python" ] || skip "$python not found"
"$python" -c 'import venv, ensurepip' 2> /dev/null || skip "no venv for $python (Debian: python3-venv)"
"$python" -m pip --version > /dev/null 2>&1 || skip "no pip for $python (Debian: python3-pip)"
"$python" -c 'import setuptools' 2> /dev/null || skip "no setuptools for $python (Debian: python3-setuptools)"
"$python" -c 'import numpy' 2> /dev/null || skip "no numpy for $python (Debian: python3-numpy)"
plan_mnist 8
lib=$top_build/client/.libs/libfasgdclient.so.0
# A library built with --enable-sanitizers needs the ASan runtime loaded
# before anything else in the interpreter (as in test_python.sh); Python's
# own allocations at exit are not leaks of ours.
asan=$(ldd "$lib" 2> /dev/null | awk '/libasan/ { print $3 }')
asan_env=""
if [ -n "$asan" ]; then
    asan_env="LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0"
    LD_PRELOAD=$asan; export LD_PRELOAD
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS
fi
version=$("$server" --version | sed -n 's/^fasgd-server \([^ ]*\).*/\1/p')

cp -r "$top_src/python" "$tmp/src"
rm -f "$tmp/src/fasgd/_config.py"
venv=$tmp/venv
"$python" -m venv --system-site-packages "$venv" > "$tmp/out" 2> "$tmp/err"
check "python3 -m venv --system-site-packages makes a fresh environment" test -x "$venv/bin/python"
(cd "$tmp" && "$venv/bin/python" -m pip install --no-index --no-build-isolation "$tmp/src") \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
check "pip install --no-index --no-build-isolation python/ into it (exit $rc)" test $rc -eq 0
# Out of the source tree, with nothing of the build's environment.
vpy() { (cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp" $asan_env "$@") > "$tmp/out" 2> "$tmp/err"; }
vpy "$venv/bin/python" -c '
import importlib.metadata, sys, fasgd
print(fasgd.__file__, importlib.metadata.version("fasgd"))
sys.exit(not (fasgd.__file__.startswith(sys.prefix) and importlib.metadata.version("fasgd") == sys.argv[1]))' \
    "$version"
check "import fasgd loads the installed package, version $version as configure's" test $? -eq 0
vpy FASGD_LIBRARY="$lib" "$venv/bin/python" -c '
import sys, fasgd
sys.exit(fasgd.library_version() != sys.argv[1])' "$version"
check "FASGD_LIBRARY names the library" test $? -eq 0
# A prefix that make install would leave: the library and its fasgd.pc.
mkdir -p "$tmp/prefix/lib/pkgconfig"
cp "$lib" "$tmp/prefix/lib/"
sed -e "s|^prefix=.*|prefix=$tmp/prefix|" -e "s|^exec_prefix=.*|exec_prefix=$tmp/prefix|" \
    -e "s|^libdir=.*|libdir=$tmp/prefix/lib|" "$top_build/fasgd.pc" > "$tmp/prefix/lib/pkgconfig/fasgd.pc"
vpy PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" "$venv/bin/python" -c '
import sys, fasgd
print(fasgd.library_path())
sys.exit(fasgd.library_path() != sys.argv[1])' "$tmp/prefix/lib/libfasgdclient.so.0"
check "the library of a make install prefix is found through its fasgd.pc (PKG_CONFIG_PATH)" test $? -eq 0
if /sbin/ldconfig -p 2> /dev/null | grep -q libfasgdclient; then
    ok "a missing library is said clearly # SKIP libfasgdclient is installed on this system"
else
    vpy "$venv/bin/python" -c '
import fasgd
try:
    fasgd.Client(join=False)
except OSError as e:
    print(e)' 
    check "a missing library is said clearly: where it looked, and what to do" sh -c "
        grep -q 'cannot load libfasgdclient' '$tmp/out' && grep -q 'make install' '$tmp/out' &&
        grep -q 'FASGD_LIBRARY' '$tmp/out' && grep -q 'pkg-config fasgd\\|PKG_CONFIG_PATH' '$tmp/out'"
fi
vpy FASGD_LIBRARY="$lib" OPENBLAS_NUM_THREADS=1 timeout 120 "$venv/bin/python" \
    "$top_src/tests/readme_snippet.py" "$top_src/README.md" "$server" "$data"
rc=$?
cat "$tmp/out"
check "README.md's training loop, as written: a refused gradient counted, a lost server joined again (exit $rc)" \
    test $rc -eq 0
if [ -n "$asan" ]; then
    # Every torch allocation would go through ASan (test_torch.sh skips too).
    ok "README.md's PyTorch loop # SKIP libfasgdclient is built with sanitizers"
elif "$venv/bin/python" -c 'import torch' 2> /dev/null; then
    vpy FASGD_LIBRARY="$lib" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 timeout 120 "$venv/bin/python" \
        "$top_src/tests/readme_snippet.py" --torch "$top_src/README.md" "$server" "$data"
    rc=$?
    cat "$tmp/out"
    check "README.md's PyTorch loop, as written: the same (exit $rc)" test $rc -eq 0
else
    ok "README.md's PyTorch loop # SKIP no torch (Debian: python3-torch)"
fi
[ "$failed" -eq 0 ]
