#!/bin/sh
# The long runs (issue 26): experiments/grid-long.conf is
# experiments/grid.conf but for the figures' iteration count and where its
# runs are kept, as scripts/paper-report reads a grid; and
# experiments/data/paper-long/report.md is what `scripts/paper-report --grid
# experiments/grid-long.conf` makes of the runs kept beside it (and of
# experiments/data/paper's), byte for byte: never edited by hand. TAP.
tap_name=paper-long
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2> /dev/null; then
    echo "1..0 # SKIP $python (3.6 or later) not found"; exit 0
fi
echo "1..3"
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
    echo "ok 2 # SKIP no kept long runs"; echo "ok 3 # SKIP no kept long runs"; exit $failed
fi
regenerate() {
    "$python" "$top_src/scripts/paper-report" --grid "$top_src/experiments/grid-long.conf" --results "$kept" \
        --output "$tmp/report.md" > "$tmp/out" 2> "$tmp/err"
}
check "the long runs' report regenerates from the kept runs" regenerate
check "byte-identical to experiments/data/paper-long/report.md" cmp "$tmp/report.md" "$kept/report.md"
exit $failed
