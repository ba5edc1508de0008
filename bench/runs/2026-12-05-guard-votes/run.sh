#!/bin/sh
# The side-by-side of bench/README.md's "The guard's votes at 10,000
# clients": bench-guard-votes built from the tree before (BEFORE) and
# after (AFTER) the change, alternated, 3 rounds, 1,000 and 10,000
# clients, each from an address of its own and from 16; into runs.log.
# Usage: run.sh BEFORE AFTER   (the two bench-guard-votes binaries)
set -eu
here=$(dirname "$0")
{
    date -u +"start %F %T"; uptime
    for r in 1 2 3; do
        for tree in before after; do
            if [ "$tree" = before ]; then b=$1; else b=$2; fi
            for a in 0 16; do
                for n in 1000 10000; do
                    echo "== round $r tree $tree clients $n addresses $a"
                    "$b" --clients "$n" --addresses "$a" --pushes 5000 --rounds 3 2> /dev/null
                done
            done
        done
    done
    date -u +"end %F %T"; uptime
} > "$here/runs.log"
