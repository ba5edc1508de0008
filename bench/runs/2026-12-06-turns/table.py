#!/usr/bin/env python3
"""Prints the replies-in-turn tables of bench/link.md from the kept
results: D-RATE-CLIENTS-K.txt, each one run of scripts/bench-link
(run.sh). Per D, rate and clients and per system: the median
(least-greatest) over every round of every run of steps/s and of link use
down and up; then, per fasgd system, the ratio of its steps/s in turn to
side by side, the median (range) over the rounds (round r of a run with
itself), and each system's ratio to ps-lite's, the same way.

Usage: table.py [DIR]   (the results of DIR, by default this folder's)"""
import glob
import os
import re
import statistics
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
line = re.compile(r"^round (\d+) (\S+): steps/s, down, up, cpu: (\S+) (\S+) (\S+) ")
runs = {}
for path in sorted(glob.glob(os.path.join(here, "*.txt"))):
    m = re.match(r"(\d+)-([0-9e.]+)-(\d+)-(\d+)\.txt$", os.path.basename(path))
    if not m:
        continue
    setting, k = (int(m.group(1)), m.group(2), int(m.group(3))), int(m.group(4))
    rows = {}
    for text in open(path):
        r = line.match(text)
        if r:
            rows[(r.group(2), int(r.group(1)))] = tuple(float(r.group(i)) for i in (3, 4, 5))
    runs[(setting, k)] = rows


def spread(values, scale=1.0, fmt="%.2f"):
    v = sorted(x * scale for x in values)
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(v), v[0], v[-1])


def ratios(setting, a, b):
    """a's steps/s over b's, round by round of every run of setting."""
    out = []
    for (c, k), rows in runs.items():
        if c == setting:
            out += [rows[key][0] / rows[(b, key[1])][0] for key in rows
                    if key[0] == a and (b, key[1]) in rows and rows[(b, key[1])][0] > 0]
    return out


systems = ["fasgd1", "fasgd1+turns", "fasgd2", "fasgd2+turns"]
systems += sorted({key[0] for rows in runs.values() for key in rows} - set(systems) - {"pslite"}) + ["pslite"]
settings = sorted({c for c, _ in runs}, key=lambda c: (c[0], -c[2]))
print("| D | rate | clients | runs | system | steps/s | down % | up % | × side by side | × ps-lite |")
print("|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|")
for setting in settings:
    keys = sorted(k for c, k in runs if c == setting)
    for s in systems:
        vals = [rows[key] for k in keys for rows in [runs[(setting, k)]] for key in rows if key[0] == s]
        if not vals:
            continue
        turn = ratios(setting, s, s[:-len("+turns")]) if s.endswith("+turns") else []
        vs = ratios(setting, s, "pslite") if s != "pslite" else []
        print("| %d | %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (setting + (len(keys), s,
              spread([v[0] for v in vals]), spread([v[1] for v in vals], 100, "%.0f"),
              spread([v[2] for v in vals], 100, "%.0f"), spread(turn) if turn else "", spread(vs) if vs else "")))
