#!/usr/bin/env python3
"""The tables of bench/rules.md's "θ_new stored past the caches" from
the logs here: bench-rules at seven sizes (bench-rules.txt), and
bench-net with fasgd-server before the change (base, a build of
3a4a3ca) and with it (new), in turns (net-ROUND-WHICH.txt, made by
run.sh).

Usage: python3 bench/runs/2026-12-07-nt-stores/table.py [--all]   (from anywhere)
  --all   bench-rules' table for all six rules (by default asgd and fasgd)
"""
import glob
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def span(v, fmt="{:.3f}"):
    return (fmt + " (" + fmt + "–" + fmt + ")").format(statistics.median(v), min(v), max(v))


def bench_rules(rules):
    rows = []                   # (dim, rule, {way: median})
    dim = None
    ways = ("in place", "into", "into past", "staged", "staged past")
    for line in open(os.path.join(HERE, "bench-rules.txt")):
        m = re.match(r"== dim (\d+)", line)
        if m:
            dim = int(m.group(1))
            continue
        m = re.match(r"([a-z-]+)\s+" + r"\s+".join([r"([\d.]+) \([^)]*\)"] * 5) + r"\s+(\S+)", line)
        if m and dim and m.group(1) != "rule":
            rows.append((dim, m.group(1), dict(zip(ways, map(float, m.group(2, 3, 4, 5, 6)))), m.group(7)))
    print("| D | rule | into | into past | past / through | staged | staged past | past / through | "
          "the rule streams |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|---|")
    for dim, rule, w, own in rows:
        if rules and rule not in rules:
            continue
        print(f"| {dim:,} | {rule} | {w['into']:.3f} | {w['into past']:.3f} | {w['into past'] / w['into']:.2f} | "
              f"{w['staged']:.3f} | {w['staged past']:.3f} | {w['staged past'] / w['staged']:.2f} | "
              f"{'into' if own == 'into' else '–'} |")


def bench_net():
    runs = {}                   # (which, round) -> {(D, rule, clients): (steps/s, srv-ms)}
    for path in sorted(glob.glob(os.path.join(HERE, "net-*-*.txt"))):
        r, which = re.match(r"net-(\d+)-(base|new)\.txt", os.path.basename(path)).groups()
        got = {}
        for line in open(path):
            f = line.split()
            if len(f) > 8 and f[0].isdigit():
                got[(int(f[0]), f[1], int(f[3]))] = (float(f[4]), float(f[7]))
        runs[(which, int(r))] = got
    rounds = sorted({r for _, r in runs})
    keys = sorted(runs[("base", rounds[0])])
    print("| D | rule | clients | base steps/s | new steps/s | new / base by round | base srv-ms | new srv-ms |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|")
    for k in keys:
        b = [runs[("base", r)][k] for r in rounds]
        n = [runs[("new", r)][k] for r in rounds]
        ratio = [y[0] / x[0] for x, y in zip(b, n)]
        print(f"| {k[0]:,} | {k[1]} | {k[2]} | {span([x[0] for x in b], '{:.1f}')} | "
              f"{span([y[0] for y in n], '{:.1f}')} | {span(ratio, '{:.2f}')} | "
              f"{span([x[1] for x in b], '{:.2f}')} | {span([y[1] for y in n], '{:.2f}')} |")


if __name__ == "__main__":
    bench_rules(None if "--all" in sys.argv[1:] else ("asgd", "fasgd"))
    print()
    bench_net()
