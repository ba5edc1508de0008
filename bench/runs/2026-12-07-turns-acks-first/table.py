#!/usr/bin/env python3
"""Prints the tables of bench/link.md's "Replies in turn on a link that
serves short packets first" from the kept results: CLIENTS-MODE-K.txt,
each one run of scripts/bench-link (run.sh). Per clients, mode and
system: the median (least-greatest) over every round of every run of
steps/s and of link use down and up, and each round's turns cut; then
fasgd1+turns over fasgd1 steps/s, round by round (the two measured in one
round of one run); then acks-first over shared, round r of one run
against round r of the other of its pass K."""
import glob
import os
import re
import statistics

here = os.path.dirname(os.path.abspath(__file__))
line = re.compile(r"^round (\d+) (\S+): steps/s, down, up, cpu: (\S+) (\S+) (\S+) .*?(?:turns cut (\d+))?\)$")
runs = {}
for path in sorted(glob.glob(os.path.join(here, "*.txt"))):
    m = re.match(r"(\d+)-(shared|acks-first)-(\d+)\.txt$", os.path.basename(path))
    if not m:
        continue
    rows = {}
    for text in open(path):
        r = line.match(text.rstrip("\n"))
        if r:
            rows[(r.group(2), int(r.group(1)))] = tuple(float(r.group(i)) for i in (3, 4, 5)) + (
                int(r.group(6)) if r.group(6) else None,)
    runs[(int(m.group(1)), m.group(2), int(m.group(3)))] = rows


def spread(values, scale=1.0, fmt="%.2f"):
    v = sorted(x * scale for x in values)
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(v), v[0], v[-1])


systems = ["fasgd1", "fasgd1+turns"]
print("| clients | link | runs | system | steps/s | down % | up % | turns cut |")
print("|--:|---|--:|---|--:|--:|--:|--:|")
for c, mode in sorted({(c, m) for c, m, _ in runs}, key=lambda x: (x[0], x[1] != "shared")):
    keys = sorted(k for cc, m, k in runs if (cc, m) == (c, mode))
    for s in systems:
        vals = [runs[(c, mode, k)][key] for k in keys for key in sorted(runs[(c, mode, k)]) if key[0] == s]
        if vals:
            cuts = [v[3] for v in vals if v[3] is not None]
            print("| %d | %s | %d | %s | %s | %s | %s | %s |" % (
                c, mode, len(keys), s, spread([v[0] for v in vals]), spread([v[1] for v in vals], 100, "%.0f"),
                spread([v[2] for v in vals], 100, "%.0f"), " ".join(str(x) for x in cuts) if cuts else "-"))
print()
print("| clients | link | fasgd1+turns ÷ fasgd1, paired rounds |")
print("|--:|---|--:|")
for c, mode in sorted({(c, m) for c, m, _ in runs}, key=lambda x: (x[0], x[1] != "shared")):
    ratios = []
    for cc, m, k in runs:
        if (cc, m) == (c, mode):
            rows = runs[(cc, m, k)]
            ratios += [rows[("fasgd1+turns", r)][0] / rows[("fasgd1", r)][0] for s, r in rows
                       if s == "fasgd1" and ("fasgd1+turns", r) in rows and rows[("fasgd1", r)][0] > 0]
    if ratios:
        print("| %d | %s | %s |" % (c, mode, spread(ratios)))
print()
print("| clients | system | acks-first ÷ shared, paired rounds |")
print("|--:|---|--:|")
for c in sorted({c for c, _, _ in runs}):
    for s in systems:
        ratios = []
        for cc, m, k in runs:
            if (cc, m) == (c, "acks-first") and (c, "shared", k) in runs:
                a, b = runs[(c, m, k)], runs[(c, "shared", k)]
                ratios += [a[key][0] / b[key][0] for key in a if key[0] == s and key in b and b[key][0] > 0]
        if ratios:
            print("| %d | %s | %s |" % (c, s, spread(ratios)))
