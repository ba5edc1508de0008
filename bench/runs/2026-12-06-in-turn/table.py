#!/usr/bin/env python3
"""Prints the in-turn tables of bench/link.md from the kept results:
D-RATE-CLIENTS-MODE-K.txt, each one run of scripts/bench-link (run.sh).
Per D, rate, clients, mode and system: the median (least-greatest) over
every round of every run of steps/s and of link use down and up; then, per
system, the ratio of in-turn to shared steps/s, the median (range) over
the rounds of each pair K (round r of one run against round r of the
other)."""
import glob
import os
import re
import statistics

here = os.path.dirname(os.path.abspath(__file__))
line = re.compile(r"^round (\d+) (\S+): steps/s, down, up, cpu: (\S+) (\S+) (\S+) ")
runs = {}
for path in sorted(glob.glob(os.path.join(here, "*.txt"))):
    m = re.match(r"(\d+)-([0-9e.]+)-(\d+)-(.+)-(\d+)\.txt$", os.path.basename(path))
    if not m:
        continue
    setting, mode, k = (int(m.group(1)), m.group(2), int(m.group(3))), m.group(4), int(m.group(5))
    rows = {}
    for text in open(path):
        r = line.match(text)
        if r:
            rows[(r.group(2), int(r.group(1)))] = tuple(float(r.group(i)) for i in (3, 4, 5))
    runs[(setting, mode, k)] = rows


def spread(values, scale=1.0, fmt="%.2f"):
    v = sorted(x * scale for x in values)
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(v), v[0], v[-1])


systems = ["fasgd1", "fasgd2", "pslite"]
print("| D | rate | clients | mode | runs | system | steps/s | down % | up % |")
print("|--:|--:|--:|---|--:|---|--:|--:|--:|")
for setting, mode in sorted({(c, m) for c, m, _ in runs}):
    keys = sorted(k for c, m, k in runs if (c, m) == (setting, mode))
    for s in systems:
        vals = [runs[(setting, mode, k)][key] for k in keys for key in runs[(setting, mode, k)] if key[0] == s]
        if vals:
            print("| %d | %s | %d | %s | %d | %s | %s | %s | %s |" % (setting + (mode, len(keys), s, spread([v[0] for v in vals]),
                  spread([v[1] for v in vals], 100, "%.0f"), spread([v[2] for v in vals], 100, "%.0f"))))
print()
print("| D | rate | clients | mode | system | × shared, paired rounds |")
print("|--:|--:|--:|---|---|--:|")
for setting, mode in sorted({(c, m) for c, m, _ in runs if m != "shared"}):
    for s in systems:
        ratios = []
        for c, m, k in runs:
            if (c, m) != (setting, mode) or (setting, "shared", k) not in runs:
                continue
            a, b = runs[(c, m, k)], runs[(setting, "shared", k)]
            ratios += [a[key][0] / b[key][0] for key in a if key[0] == s and key in b and b[key][0] > 0]
        if ratios:
            print("| %d | %s | %d | %s | %s | %s |" % (setting + (mode, s, spread(ratios, 1, "%.2f"))))
