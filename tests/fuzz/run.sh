#!/bin/sh
# Runs the libFuzzer harnesses over their seed corpora.
#
#   run.sh long BINDIR SEEDDIR NAME...    `make fuzz`: each harness for
#       FUZZ_SECONDS (default 300) or, when FUZZ_RUNS is set, for that many
#       executions, one after the other; the corpus each grows is kept in
#       BINDIR/work/NAME, crash inputs in BINDIR/work/crash-NAME-*.
#   run.sh check BINDIR SEEDDIR WORKDIR SECONDS NAME
#       one short run of one harness in WORKDIR (make check).
#
# Every run ends with "NAME: N executions in S s, M crashes". Exit status 1
# when a harness crashed, timed out or ran out of memory.
set -u

# Options a harness needs: a refused rule state is logged (-close_fd_mask=2
# drops the target's stderr, libFuzzer keeps its own and the sanitizers'
# reports); a configuration and a pair of IDX files get room to grow past
# the seeds' sizes. -timeout: an input that takes seconds is itself a bug.
s_opts() {
    case $1 in
        config) echo "-max_len=16384" ;;
        idx) echo "-max_len=8192" ;;
        *) echo "" ;;
    esac
}

# s_run NAME BIN CORPUS SEEDS PREFIX LIMIT... : runs one harness, prints the
# summary. Its variables are r_*: sh has no locals, and the callers' must
# survive the call.
s_run() {
    r_name=$1 r_bin=$2 r_corpus=$3 r_seeds=$4 r_prefix=$5; shift 5
    mkdir -p "$r_corpus"
    r_log="$r_corpus.log"
    r_start=$(date +%s)
    # shellcheck disable=SC2046
    "$r_bin" -close_fd_mask=2 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$r_prefix" $(s_opts "$r_name") "$@" "$r_corpus" "$r_seeds" > "$r_log" 2>&1
    r_rc=$?
    r_end=$(date +%s)
    r_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$r_log" | tail -1)
    r_crashes=$(ls "$r_prefix"* 2>/dev/null | wc -l)
    echo "$r_name: ${r_runs:-?} executions in $((r_end - r_start)) s, $r_crashes crashes (exit $r_rc)"
    if [ $r_rc -ne 0 ] || [ "$r_crashes" -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|Test unit written|deadly|timeout|out-of-memory|No such file' "$r_log" | head -20
        return 1
    fi
    return 0
}

mode=$1; shift
case $mode in
    long)
        bindir=$1 seeds=$2; shift 2
        status=0
        for name in "$@"; do
            if [ -n "${FUZZ_RUNS:-}" ]; then limit="-runs=$FUZZ_RUNS"
            else limit="-max_total_time=${FUZZ_SECONDS:-300}"; fi
            s_run "$name" "$bindir/fuzz_$name" "$bindir/work/$name" "$seeds/$name" \
                "$bindir/work/crash-$name-" "$limit" || status=1
        done
        exit $status ;;
    check)
        bindir=$1 seeds=$2 work=$3 seconds=$4 name=$5
        s_run "$name" "$bindir/fuzz_$name" "$work/$name" "$seeds/$name" "$work/crash-$name-" \
            "-max_total_time=$seconds" ;;
    *)
        echo "usage: run.sh long BINDIR SEEDDIR NAME... | run.sh check BINDIR SEEDDIR WORKDIR SECONDS NAME" >&2
        exit 2 ;;
esac
