#!/usr/bin/env python3
"""The tables of bench/net.md's "The guard's norm in registers" from
the runs kept here: run.sh's bench-net rounds (fasgd × asgd and the
server's CPU a step, the old server and the new in turn) and perf.sh's
profiles (the norm's pass, fasgd_floats_sumsq, in ms a step).

Usage: python3 bench/runs/2026-12-07-norm-registers/table.py   (from anywhere)
"""
import glob
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE_SECONDS = 6      # perf.sh: perf record -- sleep 6


def span(v, digits=2):
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def net():
    rows = {}
    for f in glob.glob(os.path.join(HERE, "[0-9]-*.txt")):
        which = re.search(r"-(old|new)\.txt$", f).group(1)
        for line in open(f):
            p = line.split()
            if p and p[0] == "1000900":
                rows.setdefault((which, p[1], int(p[3])), []).append(
                    (float(p[4]), float(p[7]), p[13].rstrip("x")))
    print("| server | clients | asgd steps/s | fasgd steps/s | fasgd × asgd | fasgd srv-ms |")
    print("|---|--:|--:|--:|--:|--:|")
    for which, label in (("old", "before"), ("new", "after")):
        for n in (1, 4):
            a, fa = rows[(which, "asgd", n)], rows[(which, "fasgd", n)]
            print(f"| {label} | {n} | {span([r[0] for r in a], 0)} | {span([r[0] for r in fa], 0)} | "
                  f"{span([float(r[2]) for r in fa])} | {span([r[1] for r in fa])} |")


def profiles():
    print("| server | passes | fasgd steps/s | the norm's pass, ms a step | its share of the server's CPU |")
    print("|---|--:|--:|--:|--:|")
    for which, label in (("old", "before"), ("new", "after")):
        ms, share, sps = [], [], []
        for f in sorted(glob.glob(os.path.join(HERE, f"perf-*-{which}.txt"))):
            text = open(f).read()
            ns = int(re.search(r"Event count \(approx\.\): (\d+)", text).group(1))
            pct = sum(float(m.group(1)) for m in re.finditer(r"([\d.]+)%\s+\[\.\]\s+fasgd_floats_sumsq", text))
            bench = open(f[:-4] + ".bench.txt").read()
            s = float(re.search(r"^1000900\s+\S+\s+\d+\s+\d+\s+([\d.]+)", bench, re.M).group(1))
            sps.append(s)
            share.append(pct)
            ms.append(ns / 1e6 / (s * PROFILE_SECONDS) * pct / 100)
        print(f"| {label} | {len(ms)} | {span(sps, 0)} | {span(ms)} | {span(share, 1)}% |")


if __name__ == "__main__":
    net()
    print()
    profiles()
