#!/bin/sh
# fasgd beside asgd (and fasgd with its guard off) paired by round:
# bench-net measures the rules' rows of one trips and clients together,
# their rounds in turn, so vs-asgd is a median of per-round ratios.
# Every process on CPU 0. Run from the top of the source tree after
# `make -C build bench/bench-net`; writes paired.txt here.
set -e
here=$(dirname "$0")
taskset -c 0 build/bench/bench-net --sizes 80k,1m --rules asgd,fasgd,fasgd+noguard --clients 1,4 \
    --trips 2 --seconds 5 --warmup 1 --rounds 5 --client-procs > "$here/paired.txt"
