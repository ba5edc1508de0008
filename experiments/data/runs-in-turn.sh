# Sourced by the run.sh of a folder here that runs variants of one
# scripts/testbed setting in turn (turns-testbed/, turns-het/):
#   runs_in_turn RUNS PREFIX NETNS SUBNET VARIANT...
# For run R = 1..RUNS, the VARIANTs in turn, their order reversed for
# even R; a run whose summary is kept ($here/PREFIX-VARIANT-rR.txt) is
# not run again. Each run: scripts/testbed in namespaces NETNS-*, hosts
# on SUBNET, instance PREFIX's first letter, VARIANT and R (shortened to
# 8 characters), with the caller's array `setting` and then the
# arguments `variant_args VARIANT R` puts in the array `args`, its
# output in /tmp/NETNS-NAME; kept: summary.txt as NAME.txt, server.csv
# as NAME.csv.gz, whatever `keep_more VARIANT NAME OUTDIR` keeps, and a
# line of runs.csv (the command, the commit, the load before and after).
# Needs `here` (the folder) and `top` (the source tree). keep_turns and
# keep_rollbacks are for keep_more.

# The turns_* keys of OUTDIR's final STATUS as NAME.turns, KEY=VALUE a line.
keep_turns() {
    grep -o '"turns_[a-z_]*": *[0-9]*' "$2/status-final.json" | tr -d '" ' | tr ':' '=' > "$here/$1.turns"
}

# The number of the guard's roll-backs in OUTDIR's server log as NAME.guard.
keep_rollbacks() {
    grep -c 'the held-out loss jumped' "$2/server.log" > "$here/$1.guard" || true
}

runs_in_turn() {
    local runs=$1 prefix=$2 netns=$3 subnet=$4
    shift 4
    local variants=("$@") order r t i name inst out load0 started
    [ ${#variants[@]} -gt 0 ] || { echo "$0: no VARIANT" >&2; exit 2; }
    [ -f "$here/runs.csv" ] || echo "file,variant,run,command,commit,started,load_before,load_after" > "$here/runs.csv"
    for r in $(seq 1 "$runs"); do
        order=("${variants[@]}")
        if [ $((r % 2)) = 0 ]; then
            order=(); for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done
        fi
        for t in "${order[@]}"; do
            name=$prefix-$t-r$r
            [ -f "$here/$name.txt" ] && continue
            inst=${prefix:0:1}$t$r; [ ${#inst} -le 8 ] || inst=${prefix:0:1}${t:0:3}${t: -1}$r    # testbed: 8 at most
            args=()
            variant_args "$t" "$r"
            set -- --netns-prefix "$netns" --subnet "$subnet" --instance "$inst" "${setting[@]}" "${args[@]}"
            out=/tmp/$netns-$name
            rm -rf "$out"
            load0=$(cut -d' ' -f1-3 /proc/loadavg) started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
            flock -o -w 900 /tmp/fasgd-netns.lock "$top/scripts/testbed" --build "$top/build" --data "$top/data/mnist" \
                --out "$out" "$@" > "/tmp/$netns-$name.out" 2>&1
            cp "$out/summary.txt" "$here/$name.txt"
            gzip -n -9 < "$out/server.csv" > "$here/$name.csv.gz"
            keep_more "$t" "$name" "$out"
            # The command in quotes: --client-rate's list has commas.
            echo "$name,$t,$r,\"scripts/testbed $*\",$(git -C "$top" rev-parse --short HEAD),$started,$load0,$(cut -d' ' -f1-3 /proc/loadavg)" \
                >> "$here/runs.csv"
        done
    done
}
