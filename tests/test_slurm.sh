#!/bin/sh
# The Slurm example on a one-node Slurm cluster (scripts/slurm-local):
# examples/slurm/fasgd.sbatch runs a server and 3 clients as job steps,
# examples/slurm/fasgd-add-clients.sbatch adds 2 more from a second job
# while they train; both jobs complete, the server stops cleanly, every
# daemon is stopped and the folder removed. SKIP, with the reason, where
# Slurm cannot start (not root, packages missing). TAP output.
tap_name=slurm
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
    echo "1..0 # SKIP MNIST digits missing: run scripts/get-mnist"; exit 0
fi
"$top_src/scripts/slurm-local" --build "$top_build" --data "$data" --seconds 30 --more-steps 100 > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 77 ]; then
    echo "1..0 # SKIP $(sed -n 's/.*SKIP: //p' "$tmp/err" | head -1)"; exit 0
fi
echo "1..7"
sed 's/^/# /' "$tmp/err"
work=$(slurm_folder "$tmp/err")
check "slurm-local exits 0" [ $rc -eq 0 ]
check "the first job's server had its 3 clients" grep -q 'the server has 3 clients' "$tmp/err"
check "the second job's 2 clients joined beside the first's 3" grep -q "the second job's 2 clients joined beside the first job's 3" "$tmp/err"
check "both jobs completed with exit code 0:0" \
    sh -c "[ \$(grep -c 'job [0-9]*: COMPLETED, exit code 0:0' '$tmp/err') -eq 2 ]"
check "training converged: a final validation error below 0.5" grep -q '^slurm-local: ok:' "$tmp/err"
# Off a terminal, a plain line every 4 s while the first job trains: its
# seconds so far, never more than 5 apart.
check "a progress line at least every 5 s while the jobs run" awk '
    /RUNNING \([0-9]+ s of its/ { t = $0; sub(/.*RUNNING \(/, "", t); t += 0
        if (n++ && t - last > 5) bad = 1; last = t }
    END { exit !(n >= 3 && !bad) }' "$tmp/err"
gone() {
    [ -n "$work" ] && [ ! -d "$work" ] && ! pgrep -f -- "$work/" > /dev/null \
        && [ -z "$(pids_using "$work")" ]
}
check "its folder ($work) is gone, no process of it runs or holds a file there (munged, slurmctld, slurmd, a step's slurmstepd)" gone
exit $((failed > 0))
