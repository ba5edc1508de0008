#!/bin/sh
# experiments/poisoning.md is what scripts/poisoning-report makes of the
# runs kept in experiments/data/poisoning/runs.csv, byte for byte; on
# hand-made runs its statements follow their rules, on the mean of the
# seeds and seed by seed: an attack is held off only where it ends at most
# 0.01 above the baseline (an attack that lowers the error is held off), a
# run is lost only where it ends within 0.05 of chance, and the run
# recovers from a poisoner that leaves only where it ends at most 0.01
# above the baseline. TAP.
tap_name=poisoning-report
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..5"
report="$top_src/scripts/poisoning-report"
kept="$top_src/experiments/data/poisoning/runs.csv"

if [ -f "$kept" ]; then
    regenerate() { "$python" "$report" --output "$tmp/poisoning.md" > "$tmp/out" 2> "$tmp/err"; }
    check "the report regenerates from the kept runs" regenerate
    check "byte-identical to experiments/poisoning.md" cmp "$tmp/poisoning.md" "$top_src/experiments/poisoning.md"
else
    echo "ok 1 # SKIP no $kept"; echo "ok 2 # SKIP no $kept"; n=2
fi

# Two seeds, baseline 0.05: x1e3 with the guard ends 0.055 and 0.030 (held
# off at both), x1e6 0.058 and 0.07 (not: +0.014 on average); without it
# x1e3 ends 0.89 and 0.88 (lost), the flip 0.5 and 0.89 (not lost: 0.695);
# the poisoner that leaves: 0.056 and 0.052 (recovered: +0.004), then
# 0.056 and 0.2 (not: +0.078).
made() {   # made LEAVE2: the runs, the leaver's seed-2 error LEAVE2
    echo "seed,steps,setting,scale,guard,poison_steps,test_error,val_error,T,honest_refused,guard_refused,seconds,commit,server_sha256,machine,date"
    for s in 1 2; do
        e3=0.055 e6=0.058 f=0.5 o3=0.89 l=0.056
        [ $s = 2 ] && { e3=0.030 e6=0.07 f=0.89 o3=0.88 l=$1; }
        echo "$s,300,baseline,-,on,-,0.05,0.05,900,1,1,10,abc,def,\"cpu\",2026-12-06"
        echo "$s,300,x1e3,1e3,on,-,$e3,0.05,900,0,50,10,abc,def,\"cpu\",2026-12-06"
        echo "$s,300,x1e6,1e6,on,-,$e6,0.05,900,2,60,10,abc,def,\"cpu\",2026-12-06"
        echo "$s,300,x1e3,1e3,off,-,$o3,0.9,900,0,0,10,abc,def,\"cpu\",2026-12-06"
        echo "$s,300,flip,-1,off,-,$f,0.9,900,0,0,10,abc,def,\"cpu\",2026-12-06"
        echo "$s,300,x1e3-leaves,1e3,off,30,$l,0.05,900,0,0,10,abc,def,\"cpu\",2026-12-06"
    done
}
made 0.052 > "$tmp/runs.csv"
"$python" "$report" --runs "$tmp/runs.csv" --output "$tmp/made.md" > "$tmp/out" 2> "$tmp/err"
check "with the guard: 1 of 2 attacks held off (x1e6 +0.0140 on average), 6 honest gradients refused" \
    grep -q "^- \*\*With the guard\*\*, 1 of 2 attacks held off (the mean of the seeds at most 0.01 above the baseline's): ×1e3 -0.0075 (-0.0200 to +0.0050; held off at 2 of 2 seeds); ×1e6 +0.0140 (+0.0080 to +0.0200; held off at 1 of 2 seeds)\. The honest clients lost 6 gradients" "$tmp/made.md"
check "without it: 1 of 2 attacks lost the run (the flip's 0.5 is not)" \
    grep -q '^- \*\*Without it\*\*, 1 of 2 attacks lost the run (the mean of the seeds within 0.05 of chance, 0.90): ×1e3 0.8850 (0.8800 to 0.8900; lost at 2 of 2 seeds); ×−1 (flip) 0.6950 (0.5000 to 0.8900; lost at 1 of 2 seeds)\.$' "$tmp/made.md"
made 0.2 > "$tmp/runs2.csv"
"$python" "$report" --runs "$tmp/runs2.csv" --output "$tmp/made2.md" > "$tmp/out" 2> "$tmp/err"
check "a poisoner that leaves: recovered at 0.052 (at 2 of 2 seeds), not at 0.2 (at 1 of 2)" \
    sh -c "grep -q 'the run recovered once it left.*recovered at 2 of 2 seeds' '$tmp/made.md' &&
           grep -q 'the run did not recover once it left.*recovered at 1 of 2 seeds' '$tmp/made2.md'"
[ $n -eq 5 ] || echo "# ran $n checks, planned 5"
exit $((failed > 0))
