#!/usr/bin/env python3
"""The table of bench/guard.md's "The reference's cadence" from the
guard-cost logs here: one row for each "== LABEL TIME" block (a
bench/guard-cost run), in the order of the logs given.

Usage: python3 bench/runs/2026-12-06-cadence/table.py LOG...
"""
import re
import sys


def blocks(path):
    label, row = None, {}
    for line in open(path):
        m = re.match(r"== (.*) (\d\d:\d\d:\d\d)$", line.rstrip("\n"))
        if m:
            if label and row:
                yield label, row
            label, row = f"{m.group(1)} ({m.group(2)[:5]})", {}
            continue
        f = line.split()
        if f[:1] in (["on"], ["off"]) and len(f) == 4:
            row[f[0]] = (float(f[1]), float(f[2]))
        m = re.match(r"on/off (steps/s|srv-ms)\s+([\d.]+) \(([\d.]+)-([\d.]+)\)", line)
        if m:
            row[m.group(1)] = tuple(float(x) for x in m.groups()[1:])
    if label and row:
        yield label, row


def main():
    print("| guard on (off: `enabled: false`) | steps/s on / off | on/off steps/s, paired (range) "
          "| srv-ms on / off | on/off srv-ms, paired (range) |")
    print("|---|--:|--:|--:|--:|")
    for path in sys.argv[1:]:
        for label, r in blocks(path):
            s, m = r["steps/s"], r["srv-ms"]
            print(f"| {label} | {r['on'][0]:.0f} / {r['off'][0]:.0f} | {s[0]:.3f} ({s[1]:.3f}–{s[2]:.3f}) "
                  f"| {r['on'][1]:.2f} / {r['off'][1]:.2f} | {m[0]:.3f} ({m[1]:.3f}–{m[2]:.3f}) |")


if __name__ == "__main__":
    main()
