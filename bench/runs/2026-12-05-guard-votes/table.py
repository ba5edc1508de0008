#!/usr/bin/env python3
"""The table of bench/README.md's "The guard's votes at 10,000 clients"
from runs.log beside it: for each tree, client count and address count,
the median over the rounds of each run's medians (microseconds a push
with 1 client and with N, and their difference), and the median (least-
greatest) of the rounds' paired ratios of the difference, before/after."""
import os
import re
import statistics

here = os.path.dirname(os.path.abspath(__file__))
runs = {}
key = None
for line in open(os.path.join(here, "runs.log")):
    m = re.match(r"== round (\d+) tree (\w+) clients (\d+) addresses (\d+)", line)
    if m:
        key = (m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(1)))
    elif line.startswith("median") and key:
        runs[key] = [float(x) for x in line.split()[1:]]
cases = sorted({(n, a) for _, n, a, _ in runs})
rounds = sorted({r for _, _, _, r in runs})
print("| clients | addresses | µs a push, 1 client | µs a push, N: before | after | "
      "N − 1: before | after | before/after, paired (range) |")
print("|--:|--:|--:|--:|--:|--:|--:|--:|")
for n, a in cases:
    med = lambda t, i: statistics.median(runs[(t, n, a, r)][i] for r in rounds)  # noqa: E731
    ratios = sorted(runs[("before", n, a, r)][2] / runs[("after", n, a, r)][2] for r in rounds)
    print("| {:,} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f}× ({:.1f}–{:.1f}) |".format(
        n, a or "one each", statistics.median([med("before", 0), med("after", 0)]),
        med("before", 1), med("after", 1), med("before", 2), med("after", 2),
        statistics.median(ratios), ratios[0], ratios[-1]))
