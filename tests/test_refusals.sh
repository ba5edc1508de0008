#!/bin/sh
# Refused gradients (422) are handled by going on, and counted apart from
# the steps: by the C example of fasgd_client(3), extracted from the page,
# built against this tree's library and run against a server that refuses
# every third gradient it computes (NaN); and by fasgd-client, whose
# summary line and its --metrics count them apart from its pushes. Against
# a server that refuses every gradient, fasgd-client backs off: at its
# longest wait it pushes about once a second (it pushed hundreds a second
# without). Against one that refuses many of them (a fixed bound amid the
# gradients' norms), each accepted push ends the wait, so that it trains
# on at speed. TAP output.
tap_name=refusals
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 10

# The page's example, as written: the first literal display of EXAMPLES,
# with roff's escapes undone and the server's endpoints filled in below.
awk '/^\.Sh EXAMPLES/ { on = 1; next } on && /^\.Bd -literal/ { lit = 1; next }
     lit && /^\.Ed/ { exit } lit' "$top_src/man/fasgd_client.3.in" \
    | sed 's/\\e/\\/g; s/\\-/-/g' > "$tmp/worker.c"
cat > "$tmp/model.c" <<'C'
#include <math.h>
#include <stddef.h>
/* A gradient toward theta = 1; every third one holds a NaN.  */
void
compute_gradient (const float *theta, float *grad, size_t n)
{
    static unsigned long calls;
    for (size_t i = 0; i < n; i++)
        grad [i] = 0.1f * (theta [i] - 1.0f);
    if (++calls % 3 == 0)
        grad [n / 2] = NAN;
}
C
cat > "$tmp/ext.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
external: {tensors: "w:10x100"}
rule: {name: asgd, lr: 0.01}
YAML
serve "$tmp/pe" "$tmp/server.log" "$server" -c "$tmp/ext.yaml"
lib="$top_build/client/.libs"
san=""
ldd "$lib/libfasgdclient.so.0" 2> /dev/null | grep -q libasan && san=-fsanitize=address
sed "s|tcp://server.example:5555|$push|; s|tcp://server.example:5556|$fetch|" "$tmp/worker.c" > "$tmp/w.c"
check "the example of fasgd_client(3) builds against libfasgdclient" \
    ${CC:-cc} $san -o "$tmp/worker" "$tmp/w.c" "$tmp/model.c" -I"$top_src/include" -L"$lib" -lfasgdclient \
    -Wl,-rpath,"$lib" -lm
"$tmp/worker" > "$tmp/out" 2> "$tmp/err" &
wpid=$!
pids="$pids $wpid"
wait_number "$tmp/pe" T 200 30
kill -TERM "$wpid"
wait "$wpid"; rc=$?
steps=$(sed -n 's/^worker: \([0-9]*\) steps, .*/\1/p' "$tmp/out")
refused=$(sed -n 's/^worker: .* steps, \([0-9]*\) gradients refused$/\1/p' "$tmp/out")
check "it goes on past refused gradients until signalled (exit $rc; ${steps:-?} steps, ${refused:-?} refused)" \
    sh -c "[ $rc = 0 ] && [ '${steps:-0}' -ge 200 ] && [ '${refused:-0}' -ge 66 ]"
check "... counting them apart: the server applied its steps ($(ctl_number "$tmp/pe" T)) and refused the rest ($(ctl_number "$tmp/pe" guard_refused))" \
    test "$(ctl_number "$tmp/pe" T) $(ctl_number "$tmp/pe" guard_refused)" = "${steps:-x} ${refused:-x}"

# fasgd-client against a server whose bound refuses every gradient.
cat > "$tmp/mlp.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
eval: {enabled: false}
limits: {grad_norm: 1e-9, grad_norm_action: refuse, refusals: 0}
YAML
serve "$tmp/pm" "$tmp/server.log" "$server" -c "$tmp/mlp.yaml"
metrics=""
printf 'eval: {enabled: false}\n' > "$tmp/probe.yaml"
"$server" -c "$tmp/probe.yaml" -n -s metrics.endpoint=http://127.0.0.1:0/metrics 2>&1 \
    | grep -q 'without libmicrohttpd' || metrics="--metrics http://127.0.0.1:0/metrics"
"$client" -s "$push" -f "$fetch" --data "$data" --quiet $metrics > "$tmp/out" 2> "$tmp/err" &
cpid=$!
pids="$pids $cpid"
wait_number "$tmp/pm" guard_refused 10 30
# At its longest wait (1 s, from the 8th refusal in a row), a fixed window:
# the pushes refused in it, with a generous bound.
r0=$(ctl_number "$tmp/pm" guard_refused)
sleep 5
r1=$(ctl_number "$tmp/pm" guard_refused)
# The client's metrics into $tmp/metrics, true once they count 10 refused
# gradients.
cat > "$tmp/scrape.sh" <<SH
url=\$(sed -n 's|.*metrics at \\(http://[^ ]*\\).*|\\1|p' '$tmp/err')
[ -n "\$url" ] && '$python' -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "\$url" > '$tmp/metrics' 2> /dev/null &&
    sh '$tmp/counted.sh'
SH
cat > "$tmp/counted.sh" <<SH
awk '/^fasgd_client_refusals_total\\{cause="gradient"\\}/ { found = \$2 >= 10 } END { exit !found }' '$tmp/metrics'
SH
[ -n "$metrics" ] && wait_for "sh '$tmp/scrape.sh'" 20
kill -INT "$cpid"
wait "$cpid"; rc=$?
g=$(sed -n 's/.* \([0-9]*\) gradients refused (422).*/\1/p' "$tmp/out")
check "fasgd-client goes on past refused gradients until signalled (exit $rc)" \
    sh -c "[ $rc = 0 ] && grep -q ': 0 steps in .* 0 pushes,' '$tmp/out'"
check "... and its summary counts them apart (${g:-none} refused; the server refused $(ctl_number "$tmp/pm" guard_refused))" \
    sh -c "[ '${g:-0}' -ge 10 ] && [ '$g' = '$(ctl_number "$tmp/pm" guard_refused)' ]"
check "... logging each refusal" sh -c "[ \$(grep -c '422' '$tmp/err') -ge 10 ]"
check "... backing off: $((r1 - r0)) gradients refused in 5 s at the longest wait (at most 15)" \
    test "$((r1 - r0))" -le 15
w=$(sed -n 's/.* gradients refused (422), \([0-9]*\) waits after refusals.*/\1/p' "$tmp/out")
check "... its summary counts the waits (${w:-none}: one after each refusal but the first) and its log says so" \
    sh -c "[ '${w:-x}' = $((${g:-0} - 1)) ] && grep -q '2 gradients refused in a row: waiting 10 ms' '$tmp/err'"
if [ -n "$metrics" ]; then
    check "... and its --metrics count them apart from the pushes ($(grep '^fasgd_client_\(pushes_total\|refusals_total{cause="gradient"\)' "$tmp/metrics" 2> /dev/null | tr '\n' ' '))" \
        sh -c "grep -q '^fasgd_client_pushes_total 0\$' '$tmp/metrics' && grep -q '^fasgd_client_steps_total 0\$' '$tmp/metrics' &&
            sh '$tmp/counted.sh'"
else
    ok "... and its --metrics count them apart # SKIP this build has no libmicrohttpd"
fi

# A fixed bound amid the gradients' norms (the parameters barely move, so
# the norms stay where they are): about a third refused, in short runs.
# Each accepted push ends the wait; were it to last, each refusal would
# cost a second and 300 steps minutes.
cat > "$tmp/some.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
eval: {enabled: false}
rule: {name: asgd, lr: 1e-9}
guard: {probation: 0}
limits: {grad_norm: 2.2, grad_norm_action: refuse, refusals: 0}
YAML
serve "$tmp/ps" "$tmp/server.log" "$server" -c "$tmp/some.yaml"
t0=$(date +%s)
timeout 60 "$client" -s "$push" -f "$fetch" --data "$data" --quiet --seed 1 -n 300 > "$tmp/out" 2> "$tmp/err"
rc=$? took=$(($(date +%s) - t0))
g=$(sed -n 's/.* \([0-9]*\) gradients refused (422).*/\1/p' "$tmp/out")
check "a server refusing some gradients: 300 steps in ${took} s (at most 30), ${g:-?} refused (at least 30; exit $rc)" \
    sh -c "[ $rc = 0 ] && grep -q ': 300 steps in' '$tmp/out' && [ $took -le 30 ] && [ '${g:-0}' -ge 30 ]"
[ "$failed" -eq 0 ]
