#!/bin/sh
# The held-out test set (data.test, data.test_images/test_labels): the
# simulator and the server evaluate it beside validation, on examples the
# validation rows never see, and refuse settings that leave nothing to
# validate on. TAP output.
tap_name=testset
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 12
sim="$top_build/sim/fasgd-sim"
base="$top_src/experiments/base.yaml"
run() { "$sim" -c "$base" -q --set "data.dir=\"$data\"" --set iterations=400 --set clients=8 "$@"; }

check "-n counts the three sets" sh -c "'$sim' -c '$base' -n --set 'data.dir=\"$data\"' --set data.test=500 > '$tmp/out' 2> '$tmp/err' \
    && grep -q '(8000 training, 1500 validation and 500 test examples' '$tmp/out'"
check "a test set that leaves no validation examples is refused" sh -c \
    "! '$sim' -c '$base' -n --set 'data.dir=\"$data\"' --set data.test=2000 > '$tmp/out' 2> '$tmp/err' \
     && grep -q 'test 2000 leaves no validation examples (the set has 2000)' '$tmp/err'"
check "test and test_images together are refused" sh -c \
    "! '$sim' -c '$base' -n --set 'data.dir=\"$data\"' --set data.test=10 \
         --set 'data.test_images=\"$data/t10k-images-idx3-ubyte.gz\"' --set 'data.test_labels=\"$data/t10k-labels-idx1-ubyte.gz\"' \
         > '$tmp/out' 2> '$tmp/err' && grep -q 'not both' '$tmp/err'"

run -t 1 -o "$tmp/full.csv" > "$tmp/out" 2> "$tmp/err"
run -t 1 --set data.test=1000 -o "$tmp/split.csv" > "$tmp/out" 2> "$tmp/err"
run -t 2 --set data.test=1000 -o "$tmp/split2.csv" > "$tmp/out2" 2> "$tmp/err"
check "the CSV ends with test_error,test_nll" sh -c "head -1 '$tmp/split.csv' | grep -q ',max_tau,test_error,test_nll\$'"
check "without a test set the CSV keeps its columns" sh -c "head -1 '$tmp/full.csv' | grep -q ',max_tau\$'"
check "the summary reports the test error" grep -q '^fasgd-sim: test error 0\.[0-9]*, nll [0-9.]* (1000 examples)' "$tmp/out"
# Validation does not steer training: at every row the 1,000 validation and
# 1,000 test mistakes of the split run add up to the whole set's 2,000.
additive() {
    paste -d, "$tmp/full.csv" "$tmp/split.csv" | tail -n +2 | awk -F, '
        { full = $4 * 2000; v = $17 * 1000; t = $27 * 1000
          if (int(full + 0.5) != int(v + 0.5) + int(t + 0.5)) { print "# row " NR ": " full " != " v " + " t; bad = 1 } }
        END { exit bad || NR < 4 }'
}
check "validation plus test mistakes are the whole set's, row by row" additive
check "the test columns are the same on 1 and 2 threads" cmp -s "$tmp/split.csv" "$tmp/split2.csv"
# A test set of its own files: given the validation file itself, the test
# columns repeat the validation columns exactly.
run -t 1 --set "data.test_images=\"$data/t10k-images-idx3-ubyte.gz\"" \
    --set "data.test_labels=\"$data/t10k-labels-idx1-ubyte.gz\"" -o "$tmp/files.csv" > "$tmp/out" 2> "$tmp/err"
same_as_validation() {
    tail -n +2 "$tmp/files.csv" | awk -F, '$4 != $14 || $5 != $15 { bad = 1 } END { exit bad || NR < 4 }'
}
check "a file pair works as a test set" same_as_validation

# The server: its eval.csv gets the test columns, and a file written
# without them is not appended to.
cat > "$tmp/server.yaml" <<YAML
push_endpoint: tcp://127.0.0.1:*
fetch_endpoint: tcp://127.0.0.1:*
control_endpoint: tcp://127.0.0.1:*
rule: {name: asgd, lr: 0.05}
data: {dir: "$data", test: 1000}
eval: {every: 50, csv: "$tmp/server.csv"}
log: {status_seconds: 0}
YAML
"$server" -c "$tmp/server.yaml" --port-file "$tmp/ports" > "$tmp/server.log" 2>&1 &
server_pid=$!; pids="$pids $server_pid"
if wait_for "test -s '$tmp/ports'" 20; then
    push=$(sed -n 's/^push=//p' "$tmp/ports"); fetch=$(sed -n 's/^fetch=//p' "$tmp/ports")
    "$client" -s "$push" -f "$fetch" --data "$data" --quiet --steps 300 > "$tmp/c.out" 2> "$tmp/c.log" &
    pids="$pids $!"
    # Three rows come after 150 of the client's steps: seconds on a quiet
    # machine, more under ASan on a loaded one.
    wait_for "[ \$(tail -n +2 '$tmp/server.csv' 2>/dev/null | wc -l) -ge 3 ]" 180 \
        || echo "# after 180 s the server's CSV had $(tail -n +2 "$tmp/server.csv" 2>/dev/null | wc -l) rows"
fi
# Read once the server has stopped, so that no row is read while written.
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
check "the server's CSV ends with test_error,test_nll" sh -c "head -1 '$tmp/server.csv' | grep -q ',max_tau,test_error,test_nll\$'"
check "its rows carry a test error in [0, 1]" sh -c "tail -n +2 '$tmp/server.csv' | awk -F, 'NF != 15 || \$14 < 0 || \$14 > 1 { bad = 1 } END { exit bad || NR < 3 }'"
sed -i 's/, test: 1000//' "$tmp/server.yaml"
check "a CSV with other columns is not appended to" sh -c \
    "! timeout 20 '$server' -c '$tmp/server.yaml' > '$tmp/out' 2> '$tmp/err' \
     && grep -q 'has other columns than this run writes (without a test set)' '$tmp/err'"
exit $failed
