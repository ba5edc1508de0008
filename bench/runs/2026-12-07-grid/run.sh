#!/bin/sh
# fasgd-server (asgd and fasgd, two trips) beside ps-lite on loopback at
# every size and at 1, 4 and 16 clients, every process on CPU 0, run with
# bench-net of 55df179 (the rules' rows one after the other, vs-asgd a
# ratio of their medians): bench/net.md's "fasgd beside asgd, paired by
# round" cites it. Run from the top of the source tree after
# `make -C build bench/bench-net` and ../shared/peers/ps-lite/build.sh;
# writes small.txt (79,510 and 1M) and large.txt (10M) here.
set -e
here=$(dirname "$0")
taskset -c 0 build/bench/bench-net --pslite ../shared/peers/ps-lite --sizes 80k,1m \
    --rules asgd,fasgd --clients 1,4,16 --trips 2 --seconds 5 --warmup 1 --rounds 3 \
    > "$here/small.txt"
taskset -c 0 build/bench/bench-net --pslite ../shared/peers/ps-lite --sizes 10m \
    --rules asgd,fasgd --clients 1,4,16 --trips 2 --seconds 10 --warmup 2 --rounds 3 \
    > "$here/large.txt"
# fasgd-server's rules alone at 1M, one client (fasgd-1m.txt), after the
# grid: is fasgd's deficit to asgd there the guard's?
taskset -c 0 build/bench/bench-net --sizes 1m --rules asgd,fasgd,fasgd+noguard --clients 1 \
    --trips 2 --seconds 5 --warmup 1 --rounds 3 --client-procs > "$here/fasgd-1m.txt"
