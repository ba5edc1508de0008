#!/usr/bin/env python3
"""The tables of bench/rules.md's "fasgd std's σ sums, and its pass at
79,510" from the logs here: bench-rules with the library of 8e6ea15
(old) and with the σ sums of four spans in one expression (new), in
turns; and fasgd-server profiled at D = 79,510 with asgd and with fasgd,
the samples split into the kernel's copies, the update pass, the
guard's separate norm and the rest.

Usage: python3 bench/runs/2026-12-06-evening/table.py   (from anywhere)
"""
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE_SECONDS = 6      # perf record -- sleep 6


def span(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f})"


def bench_rules():
    runs = {}                   # (build, dim, rule, way) -> [median of each run]
    build = dim = None
    for line in open(os.path.join(HERE, "bench-rules-acc.txt")):
        m = re.match(r"== (old|new) round \d+ dim (\d+)", line)
        if m:
            build, dim = m.group(1), int(m.group(2))
            continue
        m = re.match(r"(asgd|fasgd)\s+([\d.]+) \([^)]*\)\s+([\d.]+)", line)
        if m and build:
            runs.setdefault((build, dim, m.group(1), "in place"), []).append(float(m.group(2)))
            runs.setdefault((build, dim, m.group(1), "staged"), []).append(float(m.group(3)))
    print("| D | rule | way | old (8e6ea15) | new | new / old |")
    print("|--:|---|---|--:|--:|--:|")
    for dim in sorted({k[1] for k in runs}):
        for rule in ("asgd", "fasgd"):
            for way in ("in place", "staged"):
                old, new = runs[("old", dim, rule, way)], runs[("new", dim, rule, way)]
                ratio = statistics.median(new) / statistics.median(old)
                print(f"| {dim:,} | {rule} | {way} | {span(old)} | {span(new)} | {ratio:.2f} |")


def profiles():
    print("| rule | steps/s | CPU ms a step | kernel copies | update pass | guard's norm pass | rest |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for rule in ("asgd", "fasgd"):
        text = open(os.path.join(HERE, f"perf-{rule}-80k.txt")).read()
        ns = int(re.search(r"Event count \(approx\.\): (\d+)", text).group(1))
        share = {"copy": 0.0, "update": 0.0, "norm": 0.0}
        for m in re.finditer(r"([\d.]+)%\s+\S+\s+\[[k.]\]\s+(\S+)", text):
            pct, sym = float(m.group(1)), m.group(2)
            if "rep_movs" in sym:
                share["copy"] += pct
            elif "s_pass_" in sym:
                share["update"] += pct
            elif "fasgd_floats_sumsq" in sym:
                share["norm"] += pct
        bench = open(os.path.join(HERE, f"perf-{rule}-80k.bench.txt")).read()
        sps = float(re.search(r"^79510\s+\S+\s+\d+\s+\d+\s+([\d.]+)", bench, re.M).group(1))
        ms = ns / 1e6 / (sps * PROFILE_SECONDS)
        rest = 100 - sum(share.values())
        cells = [f"{ms * share[k] / 100:.3f}" if share[k] else "–" for k in ("copy", "update", "norm")]
        print(f"| {rule} | {sps:.0f} | {ms:.3f} | " + " | ".join(cells) + f" | {ms * rest / 100:.3f} |")


if __name__ == "__main__":
    bench_rules()
    print()
    profiles()
