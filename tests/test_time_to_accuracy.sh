#!/bin/sh
# experiments/time-to-accuracy.md is what scripts/time-to-accuracy-report
# makes of the data kept in experiments/data/time-to-accuracy/, byte for
# byte; and on hand-made curves the report's time to the target is where
# the mean of the last 5 test errors first reaches it (one lucky
# evaluation does not count), as the median and range of the seeds. TAP.
tap_name=time-to-accuracy
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..4"
report="$top_src/scripts/time-to-accuracy-report"

# Seed s: test error 0.5 with one dip to 0.01 at row 3, then 0.05 from row
# 10 + s on; the mean of 5 first reaches 0.08 at row 14 + s (10 simulated
# seconds a row), so the seeds get there at 150, 160 and 170 s.
mkdir -p "$tmp/kept"
echo "gate,bandwidth,seed,iterations,file,command,commit,binary_sha256,cpu_s,machine" > "$tmp/kept/runs.csv"
for s in 1 2 3; do
    f="bw1.25e6-ungated-s$s.csv.gz"
    awk -v s=$s 'BEGIN {
        print "iteration,sim_time,val_error,test_error,fetches,potential_fetches,pushes,potential_pushes,bytes,mean_tau"
        for (i = 0; i <= 30; i++) {
            e = (i == 3) ? 0.01 : (i >= 10 + s ? 0.05 : 0.5)
            printf "%d,%d,%g,%g,%d,%d,%d,%d,%d,1\n", i * 100, i * 10, e, e, i * 100, i * 100, i * 100, i * 100, i * 1000
        }
    }' | gzip -n > "$tmp/kept/$f"
    echo "ungated,1.25e6,$s,3000,$f,fasgd-sim,abc,def,1.0,\"cpu\"" >> "$tmp/kept/runs.csv"
done
made() { "$python" "$report" --kept "$tmp/kept" --output "$tmp/made.md" --plot '' > "$tmp/out" 2> "$tmp/err"; }
check "a report from hand-made curves" made
check "time to the target: the median and range of the seeds, the mean of 5 evaluations" \
    grep -q "^| ungated | 160 (150–170) |" "$tmp/made.md"

kept="$top_src/experiments/data/time-to-accuracy"
if [ ! -f "$kept/runs.csv" ]; then
    echo "ok 3 # SKIP no kept time-to-accuracy data"; echo "ok 4 # SKIP no kept time-to-accuracy data"; exit $failed
fi
regenerate() { "$python" "$report" --output "$tmp/tta.md" --plot '' > "$tmp/out" 2> "$tmp/err"; }
check "the report regenerates from the kept data" regenerate
check "byte-identical to experiments/time-to-accuracy.md" cmp "$tmp/tta.md" "$top_src/experiments/time-to-accuracy.md"
exit $failed
