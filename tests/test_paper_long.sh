#!/bin/sh
# The long runs (issue 26): experiments/grid-long.conf is
# experiments/grid.conf but for the figures' iteration count and where its
# runs are kept, and experiments/grid-1m.conf is grid-long.conf but for
# those and how often Fig. 3's runs are evaluated, as scripts/paper-report
# reads a grid; and each one's report (experiments/data/paper-long/
# report.md, experiments/data/paper-1m/report.md) is what `scripts/
# paper-report --grid` makes of the runs kept beside it (and of the grid's
# it includes), byte for byte: never edited by hand; a kept run changed
# changes it (one Fig. 3 run's last test error, in a copy); the figures
# it names are kept beside it. TAP.
tap_name=paper-long
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2> /dev/null; then
    echo "1..0 # SKIP $python (3.6 or later) not found"; exit 0
fi
echo "1..10"
# grid_alike GRID BASE OWN-KEYS-AS-PYTHON: GRID has OWN's keys and values,
# and BASE's for every other key.
grid_alike() {
    "$python" - "$top_src" "$1" "$2" "$3" <<'PY'
import ast
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1] + "/scripts")
from paperreport.common import read_grid
g = read_grid(sys.argv[1] + "/experiments/" + sys.argv[3])
long = read_grid(sys.argv[1] + "/experiments/" + sys.argv[2])
own = ast.literal_eval(sys.argv[4])
for k, v in own.items():
    assert long.pop(k) == v, k
    g.pop(k, None)
assert long == g, sorted(set((k, tuple(v)) for k, v in long.items()) ^ set((k, tuple(v)) for k, v in g.items()))
PY
}
# one GRID KEPT TITLE BASE OWN: the five checks of one long grid.
one() {
    grid=$1 kept=$top_src/$2
    check "$grid is $4 $3, kept in $2" grid_alike "$grid" "$4" "$5"
    if [ ! -f "$kept/runs.csv" ]; then
        for _ in 2 3 4 5; do echo "ok $((n + 1)) # SKIP no runs kept in $2"; n=$((n + 1)); done; return
    fi
    regenerate() {
        "$python" "$top_src/scripts/paper-report" --grid "$top_src/experiments/$grid" --results "$kept" \
            --output "$tmp/report.md" --figures '' > "$tmp/out" 2> "$tmp/err"
    }
    check "$grid: its report regenerates from the kept runs" regenerate
    check "$grid: byte-identical to $2/report.md" cmp "$tmp/report.md" "$kept/report.md"
    # A copy of the kept runs with one Fig. 3 run's last test error
    # changed (the first one runs.csv names), kept loose beside the pack,
    # which it overrides: its report's Fig. 3 differs from the kept
    # report's (the lines before it name the copy's folder).
    changed() {
        run=$(awk -F, '$1 ~ /^fig3-/ { print $1; exit }' "$kept/runs.csv")
        [ -n "$run" ] || return 1
        rm -rf "$tmp/copy" && mkdir -p "$tmp/copy" || return 1
        for f in "$kept/runs.csv" "$kept/curves.tar.xz" "$kept"/*.csv.gz; do
            [ ! -f "$f" ] || cp "$f" "$tmp/copy/" || return 1
        done
        "$python" "$top_src/scripts/kept-curves" list "$kept" > "$tmp/l1" &&
            "$python" "$top_src/scripts/kept-curves" list "$tmp/copy" > "$tmp/l2" && cmp "$tmp/l1" "$tmp/l2" || return 1
        "$python" "$top_src/scripts/kept-curves" cat "$kept" "$run.csv.gz" | awk -F, -v OFS=, '
            NR == 1 { for (i = 1; i <= NF; i++) if ($i == "test_error") c = i }
            { line[NR] = $0 } END {
                for (i = 1; i < NR; i++) print line[i]
                $0 = line[NR]; $c = $c + 0.5; print
            }' | gzip -n > "$tmp/copy/$run.csv.gz" || return 1
        "$python" "$top_src/scripts/paper-report" --grid "$top_src/experiments/$grid" --results "$tmp/copy" \
            --output "$tmp/copy.md" --figures '' > "$tmp/out" 2> "$tmp/err" || return 1
        sed -n '/^## Fig. 3$/,$p' "$kept/report.md" > "$tmp/a"
        sed -n '/^## Fig. 3$/,$p' "$tmp/copy.md" > "$tmp/b"
        [ -s "$tmp/a" ] && ! cmp -s "$tmp/a" "$tmp/b"
    }
    check "$grid: a kept Fig. 3 run changed changes the report" changed
    figures() {
        grep -o '](figures/[^)]*\.png)' "$kept/report.md" | sed 's/^](//; s/)$//' | sort -u > "$tmp/figs"
        [ -s "$tmp/figs" ] || return 1
        while read -r f; do [ -s "$kept/$f" ] || { echo "missing: $f"; return 1; }; done < "$tmp/figs"
    }
    check "$grid: every figure the report names is kept beside it" figures
}
one grid-long.conf experiments/data/paper-long "at 100,000 iterations" grid.conf \
    "{'include': ['grid.conf'], 'kept': ['experiments/data/paper-long'], 'lr.kept': ['experiments/data/paper'],
      'fig.iterations': ['100000'], 'fashion.lr.kept': ['experiments/data/paper-long'],
      'fashion.lr.iterations': ['100000']}"
one grid-1m.conf experiments/data/paper-1m "at 10^6 iterations, evaluated every 500" grid-long.conf \
    "{'include': ['grid-long.conf'], 'kept': ['experiments/data/paper-1m'], 'lr.kept': ['experiments/data/paper'],
      'fig.iterations': ['1000000'], 'fig3.eval_every': ['500'], 'report.jobs': ['2']}"
exit $failed
