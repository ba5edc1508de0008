#!/bin/sh
# fasgd-plot as a user runs it: every kind as PNG and SVG from a short
# fasgd-sim run and a hand-written fasgd-server CSV, file names and labels
# that need quoting, and every usage and input error with its exit status
# and message. Reports TAP; skipped when gnuplot is not installed.
tap_name=plot
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
plot="$top_build/scripts/fasgd-plot"
sim="$top_build/sim/fasgd-sim"
data="${FASGD_DATA_DIR:-$top_src/data}/mnist"

if ! command -v gnuplot > /dev/null 2>&1; then
    echo "1..0 # SKIP gnuplot is not installed (Debian: gnuplot-nox)"
    exit 0
fi

# fasgd-plot's own temporary folders go here, to check that it leaves none.
mkdir "$tmp/t"
TMPDIR=$tmp/t
export TMPDIR

# run ARG...: fasgd-plot, its output in out and err, its status in rc.
run() { "$plot" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?; }

# png_ok FILE [W H]: a PNG signature, a size a drawn plot has, and (when
# given) the width and height of its IHDR chunk.
png_ok() {
    [ -f "$1" ] || { echo "no $1" >> "$tmp/err"; return 1; }
    [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "not a PNG" >> "$tmp/err"; return 1; }
    size=$(wc -c < "$1")
    if [ "$size" -lt 10000 ] || [ "$size" -gt 5000000 ]; then echo "size $size" >> "$tmp/err"; return 1; fi
    [ $# -lt 3 ] && return 0
    dims=$(od -An -tu1 -j16 -N8 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 "x" $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
    [ "$dims" = "$2x$3" ] || { echo "$dims, not $2x$3" >> "$tmp/err"; return 1; }
}

# svg_has FILE TEXT...: an SVG that holds every TEXT.
svg_has() {
    f=$1; shift
    if [ ! -f "$f" ] || ! head -c 300 "$f" | grep -q '<svg'; then echo "no SVG $f" >> "$tmp/err"; return 1; fi
    for t in "$@"; do
        grep -qF -- "$t" "$f" || { echo "the SVG lacks: $t" >> "$tmp/err"; return 1; }
    done
}

# plotted: the last run exited 0 and said nothing.
plotted() { [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ]; }

# ran_png FILE [W H]: the last run exited 0, silent, and FILE is such a PNG.
ran_png() { plotted && png_ok "$@"; }

# said STATUS TEXT: the last run exited STATUS and said TEXT on stderr.
said() { [ "$rc" -eq "$1" ] && grep -qF -- "$2" "$tmp/err"; }

echo "1..46"

run --help
check "--help exits 0 and shows usage" sh -c "[ $rc -eq 0 ] && grep -q '^Usage: fasgd-plot \[OPTION\]... CSV...' '$tmp/out'"
run --version
check "--version" grep -q '^fasgd-plot [0-9]' "$tmp/out"

# The CSVs: a short simulated run with simulated time and B-FASGD gates
# (fewer copies than opportunities), and a fasgd-server CSV as
# server/server.c writes it, with repeated pushes.
cat > "$tmp/sim.yaml" <<YAML
iterations: 600
clients: 8
batch: 16
mode: events
data: {dir: "$data"}
eval: {every: 100}
gates:
  fetch: {gate: bfasgd, c: 0.001}
  push: {gate: bfasgd, c: 0.0001}
output: {progress: off}
YAML
if [ -f "$data/train-images-idx3-ubyte.gz" ] || [ -f "$data/train-images-idx3-ubyte" ]; then
    "$sim" -c "$tmp/sim.yaml" -t 1 -o "$tmp/sim.csv" > /dev/null 2> "$tmp/err"
    check "fasgd-sim writes a CSV to plot" test -s "$tmp/sim.csv"
else
    echo "MNIST digits missing in $data: run scripts/get-mnist" > "$tmp/err"
    not_ok "fasgd-sim writes a CSV to plot"
fi
cat > "$tmp/server.csv" <<'CSV'
timestamp,wall_s,val_error,val_nll,clients,pushes,repeats,fetches,not_modified,bytes_in,bytes_out,mean_tau,max_tau
0,0.005,0.910000,2.430288,0,0,0,0,0,0,0,0.0000,0
200,0.258,0.106500,0.369670,3,197,2,179,0,62986078,56942435,1.3650,7
400,0.411,0.100000,0.334543,3,393,6,364,0,125336163,115792155,1.4250,7
600,0.574,0.067500,0.241317,3,589,10,552,0,187686359,175596091,1.4133,7
800,0.731,0.070000,0.225367,4,787,12,731,0,250672302,232537379,1.4587,9
1000,0.941,0.066500,0.220923,4,987,12,913,0,314294436,290432883,1.4670,9
CSV

# png_kind KIND W: -k KIND of both CSVs as a PNG of W x 650.
png_kind() {
    run -k "$1" -o "$tmp/$1.png" "$tmp/sim.csv" "$tmp/server.csv"
    plotted && png_ok "$tmp/$1.png" "$2" 650
}
check "-k error: a PNG" png_kind error 1000
check "-k error-time: a PNG" png_kind error-time 1000
check "-k nll: a PNG" png_kind nll 1000
check "-k tau: a PNG" png_kind tau 1000
check "-k copies: a PNG, two panels wide" png_kind copies 1600

# svg_kind KIND TEXT...: -k KIND of both CSVs as an SVG holding TEXT...
# and the legend's file names.
svg_kind() {
    k=$1; shift
    run -k "$k" -o "$tmp/$k.svg" "$tmp/sim.csv" "$tmp/server.csv"
    plotted && svg_has "$tmp/$k.svg" "$@" sim.csv server.csv
}
x_ts="server timestamp T (updates applied)"
y_err="validation error (fraction misclassified)"
check "-k error: an SVG with title and axis labels" \
    svg_kind error "Validation error" "$x_ts" "$y_err"
check "-k error-time: an SVG with title and axis labels" \
    svg_kind error-time "Validation error over time" "time (s): simulated for fasgd-sim, wall-clock for fasgd-server" "$y_err"
check "-k nll: an SVG with title and axis labels" \
    svg_kind nll "Validation negative log-likelihood" "$x_ts" "validation NLL (nats per example)"
check "-k tau: an SVG with title, axis labels, and what each line is" \
    svg_kind tau "Staleness τ: mean and maximum" "$x_ts" "staleness τ per validation interval (timestamps)" \
    "sim.csv: mean τ" "sim.csv: max τ" "server.csv: mean τ" "server.csv: max τ"
check "-k copies: an SVG with title, both panels' axis labels and the y = x line" \
    svg_kind copies "Copies of θ sent: actual vs potential" \
    "potential fetches (opportunities to fetch)" "fetches (copies of θ sent)" \
    "potential pushes (opportunities to push)" "pushes (gradients sent)" "every opportunity (y = x)"

run -k error -o "$tmp/simonly.svg" "$tmp/sim.csv"
check "simulator CSVs alone: the x axis is the iteration" \
    svg_has "$tmp/simonly.svg" "iteration (client minibatch gradients)"
run -k error-time -o "$tmp/simtime.svg" "$tmp/sim.csv"
check "simulator CSVs alone: error-time is over simulated time" \
    svg_has "$tmp/simtime.svg" "simulated time (s)"
run -k error-time -o "$tmp/walltime.svg" "$tmp/server.csv"
check "server CSVs alone: error-time is over wall-clock time" \
    svg_has "$tmp/walltime.svg" "wall-clock time the server ran (s)"
run -k tau -o "$tmp/servertau.svg" "$tmp/server.csv"
check "server CSVs alone: tau says the values are per validation interval" \
    svg_has "$tmp/servertau.svg" "staleness τ per validation interval (timestamps)"

run --size 640x480 --logy -k nll -o "$tmp/small.png" "$tmp/sim.csv"
check "--size 640x480 --logy: a PNG of 640x480" ran_png "$tmp/small.png" 640 480

# Titles and labels reach gnuplot as data, never as commands.
title='A "title" with '\''quotes'\'', \n, `touch '"$tmp"'/pwned`, $(id) and @x'
run -t "$title" --label 'sim_{1}^2 & <it'\''s>' --label '$HOME \ `id`' -o "$tmp/quoted.svg" "$tmp/sim.csv" "$tmp/server.csv"
check "-t and --label: printed as given, nothing run" sh -c "[ $rc -eq 0 ] && [ ! -e '$tmp/pwned' ]"
check "the SVG holds the title and labels" svg_has "$tmp/quoted.svg" \
    'A "title" with '\''quotes'\'', \n, `touch' '$(id) and @x' "sim_{1}^2 &amp; &lt;it's" '$HOME \ `id`'

# File names that need quoting in gnuplot and in the shell.
odd="$tmp/it's a \"run\" \\ [1].csv"
cp "$tmp/server.csv" "$odd"
cp "$tmp/server.csv" "$tmp/-dash.csv"
run -o "$tmp/odd name's.png" -- "$odd" "$tmp/-dash.csv"
check "CSVs named with quotes, spaces, a backslash and a leading dash, into an odd image name" \
    ran_png "$tmp/odd name's.png"
run -k copies -o "$tmp/odd.svg" "$odd"
check "... and the legend shows the file's name" svg_has "$tmp/odd.svg" 'it'\''s a "run" \ [1].csv'

run "$tmp/sim.csv" -k nll "$tmp/server.csv" -o "$tmp/late.png"
check "options after and between the CSVs" sh -c "[ $rc -eq 0 ] && [ -s '$tmp/late.png' ]"
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$plot" "$tmp/server.csv" > /dev/null 2> "$tmp/err")
check "the image is fasgd-plot.png by default" png_ok "$tmp/cwd/fasgd-plot.png"

sed 's/$/\r/' "$tmp/server.csv" > "$tmp/crlf.csv"
run -o "$tmp/crlf.svg" "$tmp/crlf.csv"
check "a CSV with CRLF line ends" sh -c "[ $rc -eq 0 ] && grep -q 'crlf.csv' '$tmp/crlf.svg'"

# A server CSV appended to by a restarted server (a new run from T=0, then
# a resumed one whose wall_s starts again) and cut short mid-row.
{ cat "$tmp/server.csv"; sed -n '2,4p' "$tmp/server.csv"
  echo "600,0.100,0.060000,0.200000,2,600,0,601,0,1,1,1.0,4"; printf '800,0.3,0.05'; } > "$tmp/restarts.csv"
run -k error-time -o "$tmp/restarts.png" "$tmp/restarts.csv"
check "a server CSV holding restarts and a half-written last row" plotted

# Bad usage: exit 2 and say why.
run -o "$tmp/x.png"
check "no CSV: exit 2" said 2 "no CSV to plot"
run -k histogram -o "$tmp/x.png" "$tmp/sim.csv"
check "unknown kind: exit 2 naming it and the kinds" said 2 "unknown kind 'histogram': use error, error-time, nll, tau or copies"
run -o "$tmp/x.pdf" "$tmp/sim.csv"
check "unknown image format: exit 2" said 2 "cannot tell the image format of '$tmp/x.pdf': its name must end in .png or .svg"
run --label one -o "$tmp/x.png" "$tmp/sim.csv" "$tmp/server.csv"
check "one --label for two CSVs: exit 2" said 2 "1 --label for 2 CSVs: give one per CSV, in order, or none"
run --size 640 -o "$tmp/x.png" "$tmp/sim.csv"
check "--size without a height: exit 2" said 2 "--size must be WIDTHxHEIGHT in pixels"
run --size 50x50 -o "$tmp/x.png" "$tmp/sim.csv"
check "--size out of bounds: exit 2" said 2 "--size: width and height must be 100 to 20000 pixels"
run --bogus "$tmp/sim.csv"
check "unknown option: exit 2" said 2 "unknown option '--bogus'"
run "$tmp/sim.csv" -k
check "an option without its value: exit 2" said 2 "option '-k' needs a value"
run --label "$(printf 'two\nlines')" -o "$tmp/x.png" "$tmp/sim.csv"
check "a label of two lines: exit 2" said 2 "--label must be one line"

# Bad input: exit 1 naming the file.
run -o "$tmp/x.png" "$tmp/sim.csv" "$tmp/nosuch.csv"
check "a missing CSV: exit 1 naming it" said 1 "$tmp/nosuch.csv: no such file"
: > "$tmp/empty.csv"
run -o "$tmp/x.png" "$tmp/empty.csv"
check "an empty CSV: exit 1" said 1 "$tmp/empty.csv: the file is empty"
head -1 "$tmp/sim.csv" > "$tmp/header.csv"
run -o "$tmp/x.png" "$tmp/header.csv"
check "a header and no rows: exit 1" said 1 "$tmp/header.csv: no rows under the header"
printf 'epoch,loss\n1,0.5\n' > "$tmp/other.csv"
run -o "$tmp/x.png" "$tmp/other.csv"
check "a CSV from elsewhere: exit 1 naming it and its header" \
    said 1 "$tmp/other.csv: not a fasgd-sim or fasgd-server CSV (its first line is 'epoch,loss')"
run -o "$tmp/x.png" "$tmp"
check "a folder: exit 1" said 1 "$tmp: is a folder, not a CSV"
sed 's/^\([0-9]*\),\([0-9]*\),[0-9.]*,/\1,\2,0.000000,/' "$tmp/sim.csv" > "$tmp/notime.csv"
run -k error-time -o "$tmp/x.png" "$tmp/notime.csv"
check "error-time without simulated time: exit 1 with the fix" \
    said 1 "$tmp/notime.csv: sim_time is 0 in every row: fasgd-sim simulates time only with mode: events"
check "failed runs wrote no image" test ! -e "$tmp/x.png" -a ! -e "$tmp/x.pdf"

GNUPLOT=$tmp/no/gnuplot "$plot" -o "$tmp/x.png" "$tmp/sim.csv" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "gnuplot missing: exit 1 naming the Debian package" said 1 "apt-get install gnuplot-nox"
GNUPLOT=false "$plot" -o "$tmp/x.png" "$tmp/sim.csv" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "gnuplot failing: exit 1, no image" sh -c "[ $rc -eq 1 ] && grep -q 'gnuplot failed' '$tmp/err' && [ ! -e '$tmp/x.png' ]"
run -o "$tmp/no/such/folder/x.png" "$tmp/sim.csv"
check "an image that cannot be written: exit 1" said 1 "$tmp/no/such/folder/x.png: cannot write it"

check "no temporary folders left behind" test -z "$(ls -A "$tmp/t")"

[ "$failed" -eq 0 ]
