#!/bin/sh
# The final validation error, said as the server stops, whatever T it
# stops at: with eval.every 1 every T is a multiple of it, and the row at
# the last T may have been skipped (the evaluator still busy with the one
# before). The log gives the final error, and the CSV's last row is at
# the final T. TAP output.
tap_name=final_eval
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"

plan_mnist 3

guard_server_yaml "$tmp/server.yaml" "{every: 1, csv: \"$tmp/eval.csv\"}"

run() {
    serve "$tmp/ports" "$tmp/server.log" "$server" -c "$tmp/server.yaml" || return 1
    spid=$server_pid
    timeout 60 "$client" -s "$push" -f "$fetch" --data "$data" --name one -n 60 --quiet \
        > "$tmp/out" 2> "$tmp/err" || return 1
    kill -TERM "$spid"
    wait "$spid"
}
check "a client of 60 steps, then SIGTERM (exit 0)" run
T=$(sed -n 's/.*stopping at T=\([0-9]*\).*/\1/p' "$tmp/server.log")
final=$(sed -n 's/.*final validation error \([0-9.]*\) .*/\1/p' "$tmp/server.log")
check "the log says the final validation error at T=${T:-none} (${final:-none})" test -n "$final" -a -n "$T"
last=$(tail -n 1 "$tmp/eval.csv" | cut -d, -f1)
check "the CSV's last row is at the final T (${last:-none})" test "$last" = "$T"
