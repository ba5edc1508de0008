#!/bin/sh
# The scripts' shared parts, without building or training: scripts/build
# in a tree configured in place stops with what to run; scripts/lib.sh
# starts a server from its port file, fails with the log when none comes,
# and prints a progress line at most every few seconds; the provenance of
# kept runs (scripts/lib.sh and scripts/keptruns.py) names the commit a
# program was built from, and the tree's HEAD beside it when it has moved
# since, and make writes that commit; they pin OpenBLAS's kernels
# (scripts/blas-kernels) and name them; keeping the runs of one part leaves
# the rows other parts kept; the machines phrase of the reports' cost
# lines names every machine. TAP output.
tap_name=scripts
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..16"

# A tree configured in place: a copy of scripts/build beside a configure
# script that must not run and the config.status that ./configure leaves.
mkdir -p "$tmp/tree/scripts"
cp "$top_src/scripts/build" "$tmp/tree/scripts/"
printf '#!/bin/sh\necho configure ran > "%s/ran"\n' "$tmp" > "$tmp/tree/configure"
chmod +x "$tmp/tree/configure"
touch "$tmp/tree/configure.ac" "$tmp/tree/Makefile.am" "$tmp/tree/Makefile.in" "$tmp/tree/config.status"
touch -d '2000-01-01' "$tmp/tree/configure.ac" "$tmp/tree/Makefile.am"
bash "$tmp/tree/scripts/build" "$tmp/tree/build" > "$tmp/out" 2> "$tmp/err"
rc=$?
check "scripts/build in a tree configured in place exits 1 (exit $rc), running nothing" \
    sh -c "[ $rc -eq 1 ] && [ ! -e '$tmp/ran' ]"
check "... and says what to run instead" \
    sh -c "grep -q 'configured in place' '$tmp/err' && grep -q 'make distclean' '$tmp/err'"

# A fake server: writes its port file (as fasgd-server does, at once) or
# dies without one.
cat > "$tmp/fake-server" <<'SH'
#!/bin/sh
# fake-server MODE --port-file FILE
echo "fake server starting ($1)"
[ "$1" = die ] && { echo "fake server: bad configuration"; exit 1; }
printf 'push=tcp://127.0.0.1:1111\nfetch=tcp://127.0.0.1:2222\ncontrol=tcp://127.0.0.1:3333\n' > "$3.tmp"
mv "$3.tmp" "$3"
exec sleep 30
SH
chmod +x "$tmp/fake-server"
cat > "$tmp/use-lib" <<SH
set -euo pipefail
. "$top_src/scripts/lib.sh"
make_workdir libtest
echo "work=\$work"
start_server "\$work/ports" "\$work/log" "$tmp/fake-server" "\$1" || exit 3
echo "push=\$push fetch=\$fetch control=\$control pid=\$server_pid"
SH
bash "$tmp/use-lib" ok > "$tmp/out" 2> "$tmp/err"
rc=$?
pid=$(sed -n 's/.* pid=//p' "$tmp/out")
work=$(sed -n 's/^work=//p' "$tmp/out")
check "start_server reads push, fetch and control from the port file" \
    grep -q '^push=tcp://127.0.0.1:1111 fetch=tcp://127.0.0.1:2222 control=tcp://127.0.0.1:3333 ' "$tmp/out"
check "at exit the server is killed and the work folder removed" \
    sh -c "[ $rc -eq 0 ] && [ -n '$pid' ] && ! kill -0 '$pid' 2>/dev/null && [ -n '$work' ] && [ ! -e '$work' ]"
bash "$tmp/use-lib" die > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a server that dies without a port file: a failure at once, with its log (exit $rc)" \
    sh -c "[ $rc -eq 3 ] && grep -q 'bad configuration' '$tmp/err' && grep -q 'did not start' '$tmp/err'"

# progress, not on a terminal: plain lines, at most one every
# PROGRESS_SECONDS (here 1) however often it is called.
PROGRESS_SECONDS=1 bash -c ". '$top_src/scripts/lib.sh'; t0=\$EPOCHSECONDS
    for i in \$(seq 30); do progress \"step \$i\"; sleep 0.1; done
    progress_done; echo \$((EPOCHSECONDS - t0)) > '$tmp/secs'" > "$tmp/out" 2> "$tmp/err"
lines=$(grep -c 'step' "$tmp/err")
secs=$(cat "$tmp/secs")
check "progress: a plain line a second, not one a call ($lines lines in $secs s of 30 calls)" \
    sh -c "[ $lines -ge 2 ] && [ $lines -le $((secs + 1)) ] && ! grep -q \"\$(printf '\\r')\" '$tmp/err'"

# Provenance: a tree at commit B whose program was built at commit A (the
# build-commit make writes in the build folder), then rebuilt at B.
git init -q "$tmp/prov" && mkdir -p "$tmp/prov/scripts" "$tmp/prov/build/sim" \
    && cp "$top_src/scripts/lib.sh" "$top_src/scripts/keptruns.py" "$top_src/scripts/blas-kernels" "$tmp/prov/scripts/" \
    && cp -r "$top_src/scripts/paperreport" "$tmp/prov/scripts/" \
    && echo program > "$tmp/prov/build/sim/prog" \
    && git -C "$tmp/prov" -c user.name=t -c user.email=t@t commit -q --allow-empty -m A \
    && git -C "$tmp/prov" rev-parse --short=12 HEAD > "$tmp/prov/build/build-commit" \
    && git -C "$tmp/prov" -c user.name=t -c user.email=t@t commit -q --allow-empty -m B
a=$(cat "$tmp/prov/build/build-commit")
b=$(git -C "$tmp/prov" rev-parse --short=12 HEAD)
prov_sh() { bash -c "set -euo pipefail; . '$tmp/prov/scripts/lib.sh'; provenance '$tmp/prov/build/sim/prog'; echo \"\$commit\"" 2> "$tmp/err"; }
prov_py() { "$python" -c "import sys; sys.path.insert(0, '$tmp/prov/scripts'); import keptruns
print(keptruns.built_commit('$tmp/prov/build/sim/prog', '$tmp/prov'))" 2> "$tmp/err"; }
got=$(prov_sh)
check "lib.sh provenance: built at A, tree at B: '$a (tree at $b)', said on stderr (got '$got')" \
    sh -c "[ '$got' = '$a (tree at $b)' ] && grep -q 'built from commit $a, but the tree is at $b' '$tmp/err'"
got=$(prov_py)
check "keptruns.py built_commit: the same (got '$got')" \
    sh -c "[ '$got' = '$a (tree at $b)' ] && grep -q 'built from commit $a, but the tree is at $b' '$tmp/err'"
echo "$b+changes" > "$tmp/prov/build/build-commit"
got="$(prov_sh) / $(prov_py)"
check "rebuilt at B with changes: '$b+changes' from both, and no warning (got '$got')" \
    sh -c "[ '$got' = '$b+changes / $b+changes' ] && [ ! -s '$tmp/err' ]"
# The OpenBLAS kernels kept runs pin (scripts/blas-kernels): SKYLAKEX on
# a processor with AVX-512, OpenBLAS's own choice elsewhere, and always
# what OPENBLAS_CORETYPE says; lib.sh's provenance exports them and names
# them in the machine.
want=$(grep -qw avx512f /proc/cpuinfo && echo SKYLAKEX || true)
got=$(env -u OPENBLAS_CORETYPE "$top_src/scripts/blas-kernels")
check "blas-kernels: '$want' on this processor (got '$got')" [ "$got" = "$want" ]
got=$(OPENBLAS_CORETYPE=HASWELL bash -c ". '$tmp/prov/scripts/lib.sh'; provenance '$tmp/prov/build/sim/prog' 2> /dev/null
    echo \"\$OPENBLAS_CORETYPE / \$machine\"")
check "provenance keeps OPENBLAS_CORETYPE and names it in the machine (got '$got')" \
    sh -c "case '$got' in 'HASWELL / '*', OpenBLAS HASWELL kernels') exit 0 ;; *) exit 1 ;; esac"
# Unpinned (no AVX-512), the machine names the kernels OpenBLAS chose, as
# OpenBLAS reports them, so that OPENBLAS_CORETYPE reruns a run elsewhere.
got=$(env -u OPENBLAS_CORETYPE "$top_src/scripts/blas-kernels" --name)
check "blas-kernels --name: the pin, or OpenBLAS's own choice by name (got '$got')" \
    sh -c 'case "$1" in "SKYLAKEX kernels") [ -n "$2" ] ;; unknown*|"") exit 1 ;; *" kernels (OpenBLAS"*"own choice)") [ -z "$2" ] ;; *) exit 1 ;; esac' \
    _ "$got" "$want"
# What make wrote in this build: the source tree's HEAD ("+changes" when
# its code differs), or "unknown" where the source is no git checkout.
if [ -e "$top_src/.git" ]; then
    want=$(git -C "$top_src" rev-parse --short=12 HEAD)
else
    want=unknown
fi
got=$(cat "$top_build/build-commit" 2> /dev/null)
check "make wrote build-commit: '$want', with or without +changes (got '$got')" \
    sh -c "[ '$got' = '$want' ] || [ '$got' = '$want+changes' -a '$want' != unknown ]"

# keptruns.keep: A and B kept before; an invocation that ran B again (its
# seed 1, and a new seed 2) keeps A's row as it was, B's old row with its
# provenance (it did not run again here), and B's seed 2 with this one's.
mkdir -p "$tmp/kept" && printf 'iteration,x\n1,2\n' > "$tmp/B-2.csv" && cp "$tmp/B-2.csv" "$tmp/B-1.csv"
printf 'setting,seed,file,command,commit,binary_sha256,cpu_s,machine\nA,1,A-1.csv.gz,c,old,h,1,m\nB,1,B-1.csv.gz,c,old,h,1,m\n' \
    > "$tmp/kept/finals.csv"
"$python" -c "import sys; sys.path.insert(0, '$top_src/scripts'); import keptruns
runs = [(('B', s), '$tmp/B-%s.csv' % s, ['seed=' + s]) for s in ('1', '2')]
keptruns.keep('$tmp/kept', ['setting', 'seed'], runs, {}, {'commit': 'new', 'binary_sha256': 'h', 'machine': 'm'},
              lambda row: row['setting'] != 'B')" > "$tmp/out" 2> "$tmp/err"
got=$(cut -d, -f1,2,5 "$tmp/kept/finals.csv" | tr '\n' ' ')
check "keep with others: A's row stays, B's seed 1 keeps its provenance, seed 2 is new (got '$got')" \
    sh -c "[ '$got' = 'setting,seed,commit A,1,old B,1,old B,2,new ' ] && [ -s '$tmp/kept/B-2.csv.gz' ]"

# keptruns.keep: a run kept before whose CSV is gone from results/ (a fresh
# checkout: only experiments/data/ holds it) stays as it was kept, its file
# untouched, beside a new one.
rm -f "$tmp/B-1.csv" "$tmp/B-2.csv" && printf 'iteration,x\n1,3\n' > "$tmp/B-3.csv"
"$python" -c "import sys; sys.path.insert(0, '$top_src/scripts'); import keptruns
runs = [(('B', s), '$tmp/B-%s.csv' % s, ['seed=' + s]) for s in ('1', '2', '3')]
keptruns.keep('$tmp/kept', ['setting', 'seed'], runs, {}, {'commit': 'newer', 'binary_sha256': 'h', 'machine': 'm'},
              lambda row: row['setting'] != 'B')" > "$tmp/out" 2> "$tmp/err"
got=$(cut -d, -f1,2,5 "$tmp/kept/finals.csv" | tr '\n' ' ')
check "keep: runs kept before and gone from results/ stay as kept, a new one is added (got '$got')" \
    sh -c "[ '$got' = 'setting,seed,commit A,1,old B,1,old B,2,new B,3,newer ' ] && [ -s '$tmp/kept/B-2.csv.gz' ] && [ -s '$tmp/kept/B-3.csv.gz' ]"

# keptruns.machines, the machines phrase of every report's cost line: each
# distinct machine once, sorted, joined with "; "; "no machine" for none.
got=$("$python" -c "import sys; sys.path.insert(0, '$top_src/scripts'); import keptruns
rows = [{'machine': 'm2'}, {'machine': 'm1'}, {'machine': 'm2'}, {'machine': ''}]
print(keptruns.machines(rows) + ' / ' + keptruns.machines([]) + ' / ' + keptruns.machines([{'machine': ''}]))" 2> "$tmp/err")
check "machines: two machines both named, each once; none is 'no machine' (got '$got')" \
    sh -c "[ '$got' = 'm1; m2 / no machine / no machine' ]"

[ $n -eq 16 ] || echo "# ran $n checks, planned 16"
[ $failed -eq 0 ]
