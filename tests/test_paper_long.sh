#!/bin/sh
# The long runs (issue 26): experiments/grid-long.conf is
# experiments/grid.conf but for the figures' iteration count and where its
# runs are kept, as scripts/paper-report reads a grid; and
# experiments/data/paper-long/report.md is what `scripts/paper-report --grid
# experiments/grid-long.conf` makes of the runs kept beside it (and of
# experiments/data/paper's), byte for byte: never edited by hand; a kept
# run changed changes it (one Fig. 3 run's last test error, in a copy);
# the figures it names are kept beside it. TAP.
tap_name=paper-long
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2> /dev/null; then
    echo "1..0 # SKIP $python (3.6 or later) not found"; exit 0
fi
echo "1..5"
grid_alike() {
    "$python" - "$top_src" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1] + "/scripts")
from paperreport.common import read_grid
g = read_grid(sys.argv[1] + "/experiments/grid.conf")
long = read_grid(sys.argv[1] + "/experiments/grid-long.conf")
own = {"include": ["grid.conf"], "kept": ["experiments/data/paper-long"], "lr.kept": ["experiments/data/paper"],
       "fig.iterations": ["100000"]}
for k, v in own.items():
    assert long.pop(k) == v, k
g.pop("fig.iterations")
assert long == g, sorted(set(long.items()) ^ set(g.items()))
PY
}
check "grid-long.conf is grid.conf at 100,000 iterations, kept in experiments/data/paper-long" grid_alike
kept="$top_src/experiments/data/paper-long"
if [ ! -f "$kept/runs.csv" ]; then
    for i in 2 3 4 5; do echo "ok $i # SKIP no kept long runs"; done; exit $failed
fi
regenerate() {
    "$python" "$top_src/scripts/paper-report" --grid "$top_src/experiments/grid-long.conf" --results "$kept" \
        --output "$tmp/report.md" --figures '' > "$tmp/out" 2> "$tmp/err"
}
check "the long runs' report regenerates from the kept runs" regenerate
check "byte-identical to experiments/data/paper-long/report.md" cmp "$tmp/report.md" "$kept/report.md"
# A copy of the kept runs with one Fig. 3 run's last test error changed
# (the first one runs.csv names): its report's Fig. 3 differs from the kept
# report's (the lines before it name the copy's folder).
changed() {
    run=$(awk -F, '$1 ~ /^fig3-/ { print $1; exit }' "$kept/runs.csv")
    [ -n "$run" ] || return 1
    mkdir -p "$tmp/copy" && cp "$kept"/*.csv.gz "$kept/runs.csv" "$tmp/copy/" || return 1
    gzip -dc "$kept/$run.csv.gz" | awk -F, -v OFS=, '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == "test_error") c = i }
        { line[NR] = $0 } END {
            for (i = 1; i < NR; i++) print line[i]
            $0 = line[NR]; $c = $c + 0.5; print
        }' | gzip -n > "$tmp/copy/$run.csv.gz" || return 1
    "$python" "$top_src/scripts/paper-report" --grid "$top_src/experiments/grid-long.conf" --results "$tmp/copy" \
        --output "$tmp/copy.md" --figures '' > "$tmp/out" 2> "$tmp/err" || return 1
    sed -n '/^## Fig. 3$/,$p' "$kept/report.md" > "$tmp/a"
    sed -n '/^## Fig. 3$/,$p' "$tmp/copy.md" > "$tmp/b"
    [ -s "$tmp/a" ] && ! cmp -s "$tmp/a" "$tmp/b"
}
check "a kept Fig. 3 run changed changes the report" changed
figures() {
    grep -o '](figures/[^)]*\.png)' "$kept/report.md" | sed 's/^](//; s/)$//' | sort -u > "$tmp/figs"
    [ -s "$tmp/figs" ] || return 1
    while read -r f; do [ -s "$kept/$f" ] || { echo "missing: $f"; return 1; }; done < "$tmp/figs"
}
check "every figure the report names is kept beside it" figures
exit $failed
