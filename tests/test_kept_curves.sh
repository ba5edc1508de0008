#!/bin/sh
# The kept curves' storage (scripts/kept-curves, scripts/paperreport/
# curves.py): a pack holds what the loose files held, byte for byte, and
# the same curves always make the same pack; a curve kept after the pack is
# read before its packed namesake and folded by the next pack; a kept run
# whose curve is packed is not kept again; scripts/lib.sh's has_curve sees
# loose and packed curves alike; a missing curve or folder is an error.
# TAP output.
tap_name=kept-curves
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..9"
kc="$top_src/scripts/kept-curves"

# curve NAME ERR: a small CSV whose last error is ERR.
curve() {
    printf 'iteration,test_error\n0,0.9\n100,%s\n' "$2" > "$tmp/$1.csv"
}
mkdir -p "$tmp/a" "$tmp/b"
curve A 0.5 && curve B 0.25
gzip -n -c "$tmp/A.csv" > "$tmp/a/A.csv.gz" && gzip -n -c "$tmp/B.csv" > "$tmp/a/B.csv.gz"
packed() {
    "$python" "$kc" pack "$tmp/a" > "$tmp/out" 2> "$tmp/err" &&
        [ -s "$tmp/a/curves.tar.xz" ] && [ ! -e "$tmp/a/A.csv.gz" ] && [ ! -e "$tmp/a/B.csv.gz" ] &&
        "$python" "$kc" list "$tmp/a" > "$tmp/list" && printf 'A.csv.gz\nB.csv.gz\n' | cmp - "$tmp/list" &&
        "$python" "$kc" cat "$tmp/a" A.csv.gz | cmp - "$tmp/A.csv" &&
        "$python" "$kc" cat "$tmp/a" B.csv.gz | cmp - "$tmp/B.csv"
}
check "pack: two loose curves folded and removed, listed and read back byte for byte" packed

# The same curves kept the other way round, gzipped otherwise and an hour
# apart: the same pack.
gzip -9 -c "$tmp/B.csv" > "$tmp/b/B.csv.gz" && gzip -1 -c "$tmp/A.csv" > "$tmp/b/A.csv.gz"
touch -d '1 hour ago' "$tmp/b/A.csv.gz"
same() {
    "$python" "$kc" pack "$tmp/b" > "$tmp/out" 2> "$tmp/err" && cmp "$tmp/a/curves.tar.xz" "$tmp/b/curves.tar.xz"
}
check "pack: the same curves make the same bytes" same

cp "$tmp/a/curves.tar.xz" "$tmp/pack0"
nothing() {
    "$python" "$kc" pack "$tmp/a" > "$tmp/out" 2> "$tmp/err" && grep -q ': 0 loose curves folded' "$tmp/out" &&
        cmp "$tmp/a/curves.tar.xz" "$tmp/pack0"
}
check "pack with nothing loose leaves the pack as it was" nothing

# A run kept again after the pack: its loose file wins, and the next pack
# holds it in place of the old one.
curve A2 0.125 && gzip -n -c "$tmp/A2.csv" > "$tmp/a/A.csv.gz"
check "a loose curve is read before its packed namesake" \
    sh -c "'$python' '$kc' cat '$tmp/a' A.csv.gz | cmp - '$tmp/A2.csv'"
repack() {
    "$python" "$kc" pack "$tmp/a" > "$tmp/out" 2> "$tmp/err" && [ ! -e "$tmp/a/A.csv.gz" ] &&
        "$python" "$kc" cat "$tmp/a" A.csv.gz | cmp - "$tmp/A2.csv" &&
        "$python" "$kc" cat "$tmp/a" B.csv.gz | cmp - "$tmp/B.csv" &&
        [ "$("$python" "$kc" list "$tmp/a" | wc -l)" -eq 2 ]
}
check "the next pack folds it in place of the old one" repack

missing() {
    ! "$python" "$kc" cat "$tmp/a" C.csv.gz > "$tmp/out" 2> "$tmp/err" && grep -q 'keeps no curve C.csv.gz' "$tmp/err" &&
        ! "$python" "$kc" list "$tmp/nowhere" > "$tmp/out" 2> "$tmp/err" && grep -q 'no such directory' "$tmp/err" &&
        ! "$python" "$kc" pack "$tmp/a" "$tmp/nowhere" > "$tmp/out" 2> "$tmp/err"
}
check "a missing curve or folder: exit 1 with what is missing" missing

# scripts/lib.sh's has_curve, as scripts/paper's is_done calls it.
hascurve() {
    "$python" "$kc" list "$tmp/a" > "$tmp/list" &&
        curve D 0.5 && gzip -n -c "$tmp/D.csv" > "$tmp/a/D.csv.gz" &&
        bash -c ". '$top_src/scripts/lib.sh' && has_curve '$tmp/a' B.csv.gz '$tmp/list' &&
            has_curve '$tmp/a' D.csv.gz '$tmp/list' && ! has_curve '$tmp/a' C.csv.gz '$tmp/list'" &&
        rm "$tmp/a/D.csv.gz"
}
check "has_curve: a packed curve and a loose one are kept, another is not" hascurve

# keptruns.keep: a run kept before, its CSV gone from results/ and its
# curve packed, stays as it was kept, with no loose copy written.
printf 'setting,seed,file,command,commit,binary_sha256,cpu_s,machine\nB,1,B.csv.gz,c,old,h,1,m\n' > "$tmp/a/finals.csv"
keep() {
    "$python" -c "import sys; sys.path.insert(0, '$top_src/scripts'); import keptruns
keptruns.keep('$tmp/a', ['setting', 'seed'], [(('B', '1'), '$tmp/gone/B.csv', ['seed=1'])], {},
              {'commit': 'new', 'binary_sha256': 'h', 'machine': 'm'})" > "$tmp/out" 2> "$tmp/err" &&
        [ "$(cut -d, -f1,2,5 "$tmp/a/finals.csv" | tr '\n' ' ')" = 'setting,seed,commit B,1,old ' ] &&
        [ ! -e "$tmp/a/B.csv.gz" ]
}
check "keep: a run whose curve is packed stays as kept" keep

# The report's reader (paperreport.runs) reads a packed run.
report() {
    got=$("$python" -c "import sys; sys.path.insert(0, '$top_src/scripts')
from paperreport.runs import Results
r = Results('$tmp/a', 1).get('B', 100)
print(r.err if r else None)" 2> "$tmp/err") && [ "$got" = "[0.9, 0.25]" ]
}
check "the report's reader reads a packed run" report

[ $n -eq 9 ] || echo "# ran $n checks, planned 9"
