#!/bin/sh
# scripts/bench-link: bad arguments refused before anything is created;
# then a tiny run (100 Mbit/s links, a 100,000-value model, 2 clients,
# fasgd-server with 1 and 2 trips, compute-free and with fasgd-clients
# training on MNIST, one trip on the compact wire (bf16), one with the
# replies in turn (its server says so), and ps-lite when its benchmark is
# built): every system made steps, its link use is a share
# of the link (above 0, at most the rate, with 10% for the tbf's burst and
# the timing of the counters' reads), the training rows took CPU, a step of
# float32 moved 4*D bytes and its headers down, one on the compact wire
# about half that; then one
# trip with --in-turn, where each of the two clients' connections gets a
# priority of its own both ways, and whose namespaces run the congestion
# control --cc names (reno, which every host allows); and no namespace of
# the run's prefix (fbl, or $FASGD_NETNS_PREFIX) or process of the runs is
# left.
# Skipped where network namespaces or tc cannot be used. TAP.
tap_name=bench-link
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
bl="$top_src/scripts/bench-link"

# Its clients are Python (bench/bench-shards.py) over libfasgdclient, which
# under sanitizers would need the ASan runtime preloaded into every process.
if ldd "$top_build/client/.libs/libfasgdclient.so.0" 2> /dev/null | grep -q libasan; then
    echo "1..0 # SKIP libfasgdclient is built with sanitizers"
    exit 0
fi
plan_mnist 16
"$bl" --systems fasgd3 > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a system of 3 trips is refused (exit $rc)" sh -c "[ $rc = 2 ] && grep -q -- '--systems' '$tmp/err'"
"$bl" --rate 1 > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a rate of 1 bit/s is refused (exit $rc)" sh -c "[ $rc = 2 ] && grep -q -- '--rate' '$tmp/err'"
"$bl" --prefix 'a-b' > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a prefix with a dash is refused (exit $rc)" sh -c "[ $rc = 2 ] && grep -q -- '--prefix' '$tmp/err'"
"$bl" --systems train3 > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a training system of 3 trips is refused (exit $rc)" sh -c "[ $rc = 2 ] && grep -q -- '--systems' '$tmp/err'"
"$bl" --in-turn sideways > "$tmp/out" 2> "$tmp/err"
rc=$?
check "--in-turn of an unknown direction is refused (exit $rc)" sh -c "[ $rc = 2 ] && grep -q -- '--in-turn' '$tmp/err'"
"$bl" --cc no-such-control > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a congestion control the host does not allow is refused (exit $rc)" sh -c "[ $rc = 2 ] && grep -q -- '--cc' '$tmp/err'"

prefix=${FASGD_NETNS_PREFIX:-fbl}
systems=fasgd1,fasgd2,fasgd1+bf16,fasgd1+turns,train1,train2
[ -x "${PSLITE_BIN:-/tmp/pslite/build/bench_pushpull}" ] && systems=$systems,pslite
FASGD_NETNS_LOCK_WAIT=${FASGD_NETNS_LOCK_WAIT:-300} "$bl" --build "$top_build" --systems "$systems" \
    --params 100000 --rate 1e8 --clients 2 --seconds 1 --warmup 0.5 --rounds 1 --out "$tmp/bl" \
    --prefix "$prefix" --data "$data" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 77 ]; then
    reason=$(sed -n 's/.*SKIP: //p' "$tmp/err" | head -1)
    while [ "$n" -lt 16 ]; do n=$((n + 1)); echo "ok $n # SKIP ${reason:-network namespaces cannot be used here}"; done
    exit 0
fi
check "a run of $systems ends (exit $rc)" test $rc -eq 0
# The table's rows: system, steps/s, (min-max), down%, up%, x-pslite, cpu.
check "every system made steps and used between 0 and 110% of the link both ways" awk -v want="$systems" '
    $1 ~ /^(fasgd[12]|fasgd1\+(bf16|turns)|train[12]|pslite)$/ && NF == 7 {
        down = $4 + 0; up = $5 + 0      # "85.4%" reads as 85.4
        if ($2 > 0 && down > 0 && down <= 110 && up > 0 && up <= 110) ok[$1] = 1 }
    END { n = split(want, w, ","); for (i = 1; i <= n; i++) if (!ok[w[i]]) exit 1 }' "$tmp/bl/results.txt"
check "the training rows took CPU, the others say none" awk '
    $1 ~ /^train[12]$/ && NF == 7 && $7 > 0 { t++ }
    $1 ~ /^(fasgd[12]|pslite)$/ && NF == 7 && $7 == "-" { f++ }
    END { exit !(t == 2 && f >= 2) }' "$tmp/bl/results.txt"
# Bytes down a step, over the whole run (the links' bytes over the first
# server's replies carrying theta): float32's 4 bytes a value with at most
# 15% more (headers, the pushes' ACKs), bf16's 2 bytes a value against
# float32's 4, with the same headers a message; every fasgd and train row
# has the figure, ps-lite's none.
check "a step of float32 moved 4*D bytes down and 15% more at most; on the compact wire 0.4 to 0.6 of that" awk '
    /^round 1 / { sub(/:$/, "", $3); if (match($0, /bytes down a step [0-9]+/)) b[$3] = substr($0, RSTART + 18, RLENGTH - 18) + 0
                  else if ($0 ~ /bytes down a step/) bad = 1
                  if ($3 == "pslite" && ($3 in b)) bad = 1
                  if ($3 ~ /^(fasgd|train)/ && !($3 in b)) bad = 1 }
    END { f = b["fasgd1"]; h = b["fasgd1+bf16"]
          for (s in b) if (s ~ /^(fasgd|train)/ && b[s] <= 0) bad = 1
          exit !(!bad && f >= 400000 && f <= 460000 && h / f >= 0.4 && h / f <= 0.6 && b["train1"] > 0 && b["train2"] > 0) }' "$tmp/bl/results.txt"
# fasgd1+turns is the last fasgd system of round 1: s0.log is its server's.
check "the server of fasgd1+turns sent its replies in turn, and its round says how many turns it cut" sh -c "
    grep -q 'replies in turn' '$tmp/bl/s0.log' &&
    grep -q '^round 1 fasgd1+turns: .*, turns cut [0-9][0-9]*)\$' '$tmp/bl/results.txt'"
FASGD_NETNS_LOCK_WAIT=${FASGD_NETNS_LOCK_WAIT:-300} "$bl" --build "$top_build" --systems fasgd1 --in-turn both \
    --cc reno --params 100000 --rate 1e8 --clients 2 --seconds 1 --warmup 0.5 --rounds 1 --out "$tmp/bt" \
    --prefix "$prefix" > "$tmp/out" 2> "$tmp/err"
rc=$?
check "a run of fasgd1 --in-turn ends (exit $rc)" test $rc -eq 0
check "--in-turn gave each client's connection a priority both ways and the link was used" sh -c "
    grep -q '^round 1 fasgd1: .*in turn down/up [2-9]/[2-9])' '$tmp/bt/results.txt' &&
    awk '\$1 == \"fasgd1\" && NF == 7 && \$2 > 0 && \$4 + 0 > 0 && \$4 + 0 <= 110 { ok = 1 } END { exit !ok }' '$tmp/bt/results.txt'"
check "its namespaces ran the congestion control of --cc" \
    grep -q '^# .*TCP congestion control reno$' "$tmp/bt/results.txt"
check "its namespaces ($prefix-*) are gone" sh -c "! ip netns list 2>/dev/null | grep -q '^$prefix-'"
check "no server or client of the runs is left" sh -c "! ps -eo args | grep -v grep | grep -Eq '$tmp/b[lt]/'"
[ "$failed" -eq 0 ]
