#!/bin/sh
# fasgd-server (asgd and fasgd, two trips) beside ps-lite on loopback at
# every size and at 1, 4 and 16 clients, every process on CPU 0, with
# bench-net pairing the rules by round (asgd with ps-lite, fasgd with
# asgd): the table of bench/net.md's "Summary: fasgd-server beside
# ps-lite on loopback". Run from the top of the source tree after
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
