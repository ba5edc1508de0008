#!/usr/bin/env python3
"""The tables of bench/rules.md's "The rules' update pass" and "fasgd's
update vectorised" from the logs here: bench-net's rounds with the
server before (old, d5d307d) and after (new) in turns (on CPU 0, and
with both CPUs free), bench-rules' runs,
and the servers' profiles split into the kernel's copies, the update's
pass, the guard's separate norm and the rest. "After" is 99efebe (the
flush on the bits and four spans at once); the -flush logs are of the
flush alone (e888109 for bench-net, fab9bbd for bench-rules), printed
with --flush.

Usage: python3 bench/runs/2026-12-06-vector/table.py [--flush]   (from anywhere)
"""
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE_SECONDS = 6      # perf record -- sleep 6


def span(v):
    return f"{statistics.median(v):.{2 if max(v) < 10 else 0}f} ({min(v):.{2 if max(v) < 10 else 0}f}–" \
           f"{max(v):.{2 if max(v) < 10 else 0}f})"


def bench_net(name):
    rows, version, sizes = {}, None, []
    for line in open(os.path.join(HERE, name)):
        m = re.match(r"## round \d+ (old|new)", line)
        if m:
            version = m.group(1)
            continue
        f = line.split()
        if f and f[0] in ("79510", "1000900"):
            if f[0] not in sizes:
                sizes.append(f[0])
            key = (f[0], f[1], int(f[3]), version)
            rows.setdefault(key, []).append((float(f[4]), float(f[7])))
    print("| D | rule | clients | steps/s before | steps/s after | srv-ms before | srv-ms after | "
          "fasgd × asgd before | after |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|--:|")
    for d in sizes:
        for rule in ("asgd", "fasgd"):
            for n in (1, 4):
                old, new = rows[(d, rule, n, "old")], rows[(d, rule, n, "new")]
                cells = [span([r[0] for r in old]), span([r[0] for r in new]),
                         span([r[1] for r in old]), span([r[1] for r in new])]
                ratio = ["–", "–"]
                if rule == "fasgd":
                    for k, v in enumerate(("old", "new")):
                        a = rows[(d, "asgd", n, v)]
                        ratio[k] = span([f[0] / s[0] for f, s in zip(rows[(d, "fasgd", n, v)], a)])
                print(f"| {int(d):,} | {rule} | {n} | " + " | ".join(cells) + f" | {ratio[0]} | {ratio[1]} |")


def bench_rules(suffix):
    runs = {}
    which = None
    for line in open(os.path.join(HERE, f"bench-rules-1m{suffix}.txt")):
        m = re.match(r"## (\S+) \((before|after)\)", line)
        if m:
            which = m.group(2)
            continue
        f = line.split()
        if len(f) == 7 and re.match(r"[\d.]+$", f[1]):
            runs.setdefault((f[0], which), []).append((float(f[1]), float(f[3])))
        m = re.match(r"# one square root .*: ([\d.]+)", line)
        if m:
            runs.setdefault(("sqrt+div", which), []).append((float(m.group(1)), None))
        m = re.match(r"# five vectors streamed.*: ([\d.]+)", line)
        if m:
            runs.setdefault(("five streams", which), []).append((float(m.group(1)), None))
    print("| rule | in place before | in place after | staged before | staged after |")
    print("|---|--:|--:|--:|--:|")
    floors = ("sqrt+div", "five streams")
    for rule in ("asgd", "sasgd", "fasgd", "fasgd-abs", "dcasgd", "gap-aware") + floors:
        if (rule, "before") not in runs:
            continue
        b, a = runs[(rule, "before")], runs[(rule, "after")]
        st = ["–", "–"] if rule in floors else [" / ".join(f"{r[1]:.3f}" for r in x) for x in (b, a)]
        print(f"| {rule} | " + " / ".join(f"{r[0]:.3f}" for r in b) + " | "
              + " / ".join(f"{r[0]:.3f}" for r in a) + f" | {st[0]} | {st[1]} |")


def profiles():
    print("| server (rule) | steps/s | CPU ms a step | kernel copies | update pass | guard's norm pass | rest |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name, label in (("pslite", "ps-lite"), ("asgd", "fasgd-server (asgd)"),
                        ("fasgd-old", "fasgd-server (fasgd), before"),
                        ("fasgd-flush", "fasgd-server (fasgd), the flush alone"),
                        ("fasgd-new", "fasgd-server (fasgd), after")):
        text = open(os.path.join(HERE, f"perf-{name}.txt")).read()
        ns = int(re.search(r"Event count \(approx\.\): (\d+)", text).group(1))
        share = {"copy": 0.0, "update": 0.0, "norm": 0.0}
        for m in re.finditer(r"([\d.]+)%\s+\[[k.]\]\s+(.+)", text):
            pct, sym = float(m.group(1)), m.group(2)
            if "rep_movs" in sym:
                share["copy"] += pct
            elif "s_pass_" in sym or "ThetaServer" in sym:
                share["update"] += pct
            elif "fasgd_floats_sumsq" in sym:
                share["norm"] += pct
        bench = open(os.path.join(HERE, f"perf-{name}.bench.txt")).read()
        m = re.search(r"steps_per_s=([\d.]+)", bench) or re.search(r"^1000900\s+\S+\s+\d+\s+\d+\s+([\d.]+)", bench, re.M)
        sps = float(m.group(1))
        ms = ns / 1e6 / (sps * PROFILE_SECONDS)
        rest = 100 - sum(share.values())
        cells = [f"{ms * share[k] / 100:.2f}" if share[k] else "–" for k in ("copy", "update", "norm")]
        print(f"| {label} | {sps:.0f} | {ms:.2f} | " + " | ".join(cells) + f" | {ms * rest / 100:.2f} |")


if __name__ == "__main__":
    suffix = "-flush" if sys.argv[1:] == ["--flush"] else ""
    bench_net(f"bench-net-1m-cpu0{suffix}.txt")
    print()
    if not suffix:
        bench_net("bench-net-both-cpus.txt")
        print()
    bench_rules(suffix)
    if not suffix:
        print()
        profiles()
