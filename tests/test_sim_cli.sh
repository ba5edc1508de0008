#!/bin/sh
# fasgd-sim as a user runs it: options, configuration errors with their
# file:line:col, a short real run on the MNIST digits, and thread-count
# independence of the CSV. Reports TAP.
tap_name=sim-cli
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
sim="$top_build/sim/fasgd-sim"
data="${FASGD_DATA_DIR:-$top_src/data}/mnist"

echo "1..17"

"$sim" --help > "$tmp/out" 2> "$tmp/err"
check "--help exits 0 and shows usage" test $? -eq 0 -a -n "$(grep 'Usage: fasgd-sim -c FILE' "$tmp/out")"

"$sim" --version > "$tmp/out" 2> "$tmp/err"
check "--version" grep -q '^fasgd-sim [0-9]' "$tmp/out"

"$sim" > "$tmp/out" 2> "$tmp/err"
check "no configuration: exit 2 with a hint" test $? -eq 2 -a -n "$(grep 'configuration file is required' "$tmp/err")"

cat > "$tmp/bad.yaml" <<'YAML'
clients: 0
rule:
  name: adam
  lrr: 0.1
batch: [1, 2]
YAML
"$sim" -c "$tmp/bad.yaml" > "$tmp/out" 2> "$tmp/err"
rc=$?
check "bad configuration: exit 1" test $rc -eq 1
check "every error with file:line:col" sh -c "
    grep -q '^$tmp/bad.yaml:1:10: error: clients must be in \[1, 1000000\] (got 0)' '$tmp/err' &&
    grep -q '^$tmp/bad.yaml:3:9: error: rule.name must be one of asgd, sasgd, softsync, fasgd, dcasgd, gap-aware (got .adam.)' '$tmp/err' &&
    grep -q \"^$tmp/bad.yaml:4:3: error: unknown key 'rule.lrr' (did you mean 'rule.lr'?)\" '$tmp/err' &&
    grep -q '^$tmp/bad.yaml:5:8: error: batch must be an integer, not a list' '$tmp/err' &&
    grep -q '4 errors in the configuration' '$tmp/err'"

"$sim" -c "$tmp/bad.yaml" --set nosuch=1 > "$tmp/out" 2> "$tmp/err"
check "--set with an unknown key is an error too" grep -q "^--set nosuch: error: unknown key 'nosuch'" "$tmp/err"

cat > "$tmp/ok.yaml" <<YAML
iterations: 600
clients: 8
batch: 16
data: {dir: "$data"}
eval: {every: 100}
output: {progress: off}
YAML
"$sim" -c "$tmp/ok.yaml" --set data.dir=/nonexistent > "$tmp/out" 2> "$tmp/err"
check "missing data: exit 1 naming the folder" test $? -eq 1 -a -n "$(grep '/nonexistent' "$tmp/err")"

"$sim" -c "$tmp/ok.yaml" --set 'model.sizes=[100, 10]' > "$tmp/out" 2> "$tmp/err"
check "model that does not fit the data: exit 1, naming the --set" test $? -eq 1 -a -n "$(grep "784 pixels but the model's input size is 100 (model.sizes' first, --set model.sizes)" "$tmp/err")"

cp "$tmp/ok.yaml" "$tmp/sizes.yaml"
printf 'model:\n  sizes: [784, 100, 7]\n' >> "$tmp/sizes.yaml"
"$sim" -c "$tmp/sizes.yaml" > "$tmp/out" 2> "$tmp/err"
check "a model with too few outputs: exit 1, naming the file's line" test $? -eq 1 -a -n "$(grep "labels go up to 9 but the model has 7 outputs (model.sizes' last, $tmp/sizes.yaml:8:10)" "$tmp/err")"

if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
    for i in 10 11 12 13 14 15 16 17; do echo "not ok $i - MNIST digits missing: run scripts/get-mnist"; done
    exit 1
fi

"$sim" -c "$tmp/ok.yaml" -n > "$tmp/out" 2> "$tmp/err"
check "-n checks configuration and data" grep -q 'configuration OK (8000 training and 2000 validation examples, 79510 parameters)' "$tmp/out"

"$sim" -c "$tmp/ok.yaml" -t 1 -o "$tmp/a.csv" > "$tmp/out" 2> "$tmp/err"
check "a short run exits 0 with a summary" test $? -eq 0 -a -n "$(grep '^fasgd-sim: fasgd clients=8 batch=16 .*600 iterations, T=600, validation error' "$tmp/out")"
check "the CSV has a header and a row per validation" sh -c "
    head -1 '$tmp/a.csv' | grep -q '^iteration,timestamp,sim_time,val_error,val_nll,fetches,potential_fetches,pushes,potential_pushes,repeats,bytes,mean_tau,max_tau$' &&
    test \$(wc -l < '$tmp/a.csv') -eq 8 && ! test -e '$tmp/a.csv.tmp'"

"$sim" -c "$tmp/ok.yaml" -t 2 -o "$tmp/b.csv" > /dev/null 2> "$tmp/err"
check "two threads write the same CSV byte for byte" cmp -s "$tmp/a.csv" "$tmp/b.csv"

# An output that exists but is not a file (/dev/null, a FIFO) is written in
# place: renaming a temporary file over it would replace the device.
mkfifo "$tmp/fifo"
timeout 60 cat "$tmp/fifo" > "$tmp/from-fifo" &
"$sim" -c "$tmp/ok.yaml" -t 1 -o "$tmp/fifo" > /dev/null 2> "$tmp/err"
wait
check "a FIFO as output stays a FIFO and gets the CSV" sh -c "
    test -p '$tmp/fifo' && cmp -s '$tmp/a.csv' '$tmp/from-fifo' && ! test -e '$tmp/fifo.tmp'"

# Validation error falls on the real digits: the last row beats the first.
# shellcheck disable=SC2016
check "validation error falls" awk -F, 'NR == 2 { first = $4 } END { exit !($4 < first - 0.3) }' "$tmp/a.csv"

# Progress by default off a terminal too (a plain line every 5 s, and the
# last one at the end); -q gives none.
grep -v progress "$tmp/ok.yaml" > "$tmp/default.yaml"
"$sim" -c "$tmp/default.yaml" -t 1 -o "$tmp/d.csv" > "$tmp/out" 2> "$tmp/err"
check "progress lines off a terminal by default" grep -q '^600/600 it .* it/s' "$tmp/err"
"$sim" -c "$tmp/default.yaml" -t 1 -q -o "$tmp/d.csv" > "$tmp/out" 2> "$tmp/err"
check "-q: no progress line" test ! -s "$tmp/err"

[ "$failed" -eq 0 ]
