#!/bin/sh
# The one-node Slurm of scripts/slurm-local when its controller dies while
# the jobs run (slurmctld ended from outside, after the second job's 2
# clients joined): slurm-local says so and fails at once, and leaves
# nothing behind: no job step's slurmstepd (whose parent is init, and which
# no scancel can end without the controller), no process of its jobs, no
# folder. SKIP, with the reason, where Slurm cannot start. TAP output.
tap_name=slurm-ctld-gone
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
    echo "1..0 # SKIP MNIST digits missing: run scripts/get-mnist"; exit 0
fi
"$top_src/scripts/slurm-local" --build "$top_build" --data "$data" --seconds 60 --more-steps 5000 \
    > "$tmp/out" 2> "$tmp/err" &
sl=$!
pids="$sl"
# Until the second job's clients joined (or slurm-local ended), 180 s at most.
i=0
while [ $i -lt 1800 ] && kill -0 $sl 2> /dev/null && ! grep -q "the second job's 2 clients joined" "$tmp/err"; do
    sleep 0.1; i=$((i + 1))
done
if ! kill -0 $sl 2> /dev/null; then
    wait $sl; rc=$?
    if [ $rc -eq 77 ]; then echo "1..0 # SKIP $(sed -n 's/.*SKIP: //p' "$tmp/err" | head -1)"; exit 0; fi
fi
echo "1..4"
work=$(slurm_folder "$tmp/err")
using() { pids_using "$work"; }
# The job steps' slurmstepd processes, found by what they hold open in the folder.
steps=""
if [ -n "$work" ]; then
    for p in $(using); do
        [ "$(cat /proc/$p/comm 2> /dev/null)" = slurmstepd ] && steps="$steps $p"
    done
fi
echo "# slurm-local: folder $work, job steps' slurmstepd:$steps"
ctld=$(cat "$work/slurmctld.pid" 2> /dev/null)
[ -n "$ctld" ] && kill "$ctld"
# slurm-local then ends within 120 s (not waiting for the jobs' own time).
i=0
while [ $i -lt 1200 ] && kill -0 $sl 2> /dev/null; do sleep 0.1; i=$((i + 1)); done
kill -0 $sl 2> /dev/null && kill -9 $sl
wait $sl; rc=$?
sed 's/^/# /' "$tmp/err"
check "the jobs ran with their steps under slurmstepd before the controller was ended" [ -n "$steps" -a -n "$ctld" ]
check "slurm-local fails (exit 1)" [ $rc -eq 1 ]
check "it says the controller ended while the jobs ran" grep -q 'FAIL: slurmctld ended while the jobs ran' "$tmp/err"
# A slurmstepd killed is a zombie until init reaps it: that counts as ended.
alive() { [ "$(cat /proc/$1/comm 2> /dev/null)" = slurmstepd ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$1/stat 2> /dev/null; }
gone() {
    [ -n "$work" ] && [ ! -d "$work" ] && ! pgrep -f -- "$work/" > /dev/null && [ -z "$(using)" ] || return 1
    for p in $steps; do
        if alive $p; then echo "# slurmstepd $p is still running: $(ps -o pid=,ppid=,stat=,args= -p $p)"; return 1; fi
    done
    return 0
}
check "nothing is left: no slurmstepd of its jobs, no process of it, no folder" gone
# Whatever a failure above left, this test ends it.
if [ -n "$work" ]; then
    for p in $(pgrep -f -- "$work/") $(using); do kill -9 $p 2> /dev/null; done
    for p in $steps; do alive $p && kill -9 $p; done
    rm -rf "$work"
fi
exit $((failed > 0))
