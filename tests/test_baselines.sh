#!/bin/sh
# experiments/baselines.md is what `scripts/baselines --report` makes of the
# data kept in experiments/data/baselines/, byte for byte: the report is
# never edited by hand, and its numbers can be traced to kept runs; a run
# of some parts (--parts) leaves what the others kept, and an invocation
# stopped before it runs a part (--until) leaves that part's. TAP.
tap_name=baselines
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..4"
kept="$top_src/experiments/data/baselines"
if [ ! -f "$kept/finals.csv" ]; then
    echo "ok 1 # SKIP no kept baselines data"; echo "ok 2 # SKIP no kept baselines data"
    echo "ok 3 # SKIP no kept baselines data"; echo "ok 4 # SKIP no kept baselines data"; exit 0
fi
regenerate() { python3 "$top_src/scripts/baselines" --report --plot '' --output "$tmp/baselines.md" > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept data" regenerate
check "byte-identical to experiments/baselines.md" cmp "$tmp/baselines.md" "$top_src/experiments/baselines.md"
# Running the parts 4x32 and init: 4x32's tuned runs (He weights, rules
# of baselines.rules, at an alpha not the paper's) give way to the new
# picks; everything else stays.
"$python" -c "import sys; sys.path.insert(0, '$top_src/scripts'); from paperreport.tuned import script
m = script('baselines'); rules = ['sasgd', 'fasgd']; parts = ['4x32', 'init']; paper = {'fasgd': '0.005', 'sasgd': '0.04'}
for s, r, i, a in [('4x32', 'fasgd', 'he', '0.01'), ('4x32', 'fasgd', 'normal', '0.01'), ('4x32', 'fasgd-abs', 'he', '0.01'),
                   ('128x1000', 'fasgd', 'he', '0.01'), ('4x32', 'sasgd', 'he', '1'), ('4x32', 'sasgd', 'he', '0.04')]:
    print(s, r, i, m.kept_elsewhere({'setting': s, 'rule': r, 'init': i, 'alpha': a}, parts, rules, paper))" \
    > "$tmp/out" 2> "$tmp/err"
got=$(awk '{ printf "%s ", $4 }' "$tmp/out")
check "kept_elsewhere: only 4x32's He runs of its tuned rules off the paper's alpha go (got '$got')" \
    sh -c "[ '$got' = 'False True True True False True ' ]"
# An invocation whose --until has passed runs nothing: what every part
# kept stays, byte for byte (it used to drop the tuning rows and tuned
# runs of every part it was to run).
stopped() {
    cp -r "$kept" "$tmp/kept" &&
        "$python" "$top_src/scripts/baselines" --until 00:00 --kept "$tmp/kept" --results "$tmp/res" \
            --output "$tmp/stopped.md" --plot '' > "$tmp/out" 2> "$tmp/err" &&
        diff -r "$kept" "$tmp/kept"
}
if [ -x "$top_src/build/sim/fasgd-sim" ]; then
    check "--until passed: every part's kept data stays as it was" stopped
else
    echo "ok 4 # SKIP no $top_src/build/sim/fasgd-sim (scripts/baselines runs the one in the tree's build/)"
fi
exit $failed
