#!/usr/bin/env python3
"""Prints the table of experiments/turns-het.md from the runs kept beside
it (run.sh): per variant (off, on, offng, onng), the median (smallest-
largest) over its runs of the wall seconds to T = 3,000 (the testbed's
summary), the updates a second, the mean staleness tau of the applied
gradients, the validation error at T = 3,000 and the best one, the
guard's roll-backs of the parameters (its held-out loss jumped), and,
with turns, the turns cut and those that found their client's path
slower; then the wall seconds' ratios run by run (same seed) of on to
off, onng to offng, and off to offng (the guard's cost)."""
import glob
import os
import re
import statistics

here = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ("off", "on", "offng", "onng")
PAIRS = (("on", "off"), ("onng", "offng"), ("off", "offng"))


def keys(path):
    if not os.path.exists(path):
        return {}
    return dict(line.strip().split("=", 1) for line in open(path) if "=" in line)


def num(d, k):
    return float(d[k]) if k in d and d[k] != "" else float("nan")


runs = {}
for path in sorted(glob.glob(os.path.join(here, "het-*-r*.txt"))):
    m = re.match(r"het-(\w+)-r(\d+)\.txt$", os.path.basename(path))
    base = path[:-4]
    s, t = keys(path), keys(base + ".turns")
    guard = open(base + ".guard").read().strip() if os.path.exists(base + ".guard") else ""
    runs[(m.group(1), int(m.group(2)))] = {
        "wall": num(s, "wall_s"), "rate": num(s, "updates_per_s"), "tau": num(s, "tau_mean"),
        "err": num(s, "val_error"), "best": num(s, "best_error"),
        "guard": float(guard) if guard else float("nan"),
        "cut": num(t, "turns_cut"), "slower": num(t, "turns_slower"),
    }

cols = [("wall", "wall s to T = 3,000", "%.1f"), ("rate", "updates/s", "%.1f"), ("tau", "mean tau", "%.2f"),
        ("err", "val. error at T = 3,000", "%.4f"), ("best", "best val. error", "%.4f"),
        ("guard", "guard roll-backs", "%.0f"), ("cut", "turns cut", "%.0f"), ("slower", "turns found slower", "%.0f")]


def spread(v, fmt):
    v = [x for x in v if x == x]
    if not v:
        return "-"
    return (fmt % statistics.median(v)) + " (" + (fmt % min(v)) + "-" + (fmt % max(v)) + ")"


print("| variant | runs | " + " | ".join(c[1] for c in cols) + " |")
print("|---|--:|" + "--:|" * len(cols))
for t in VARIANTS:
    rs = sorted(r for (tt, r) in runs if tt == t)
    if rs:
        print("| %s | %d | " % (t, len(rs)) + " | ".join(spread([runs[(t, r)][c[0]] for r in rs], c[2]) for c in cols)
              + " |")
for a, b in PAIRS:
    rs = sorted(r for (tt, r) in runs if tt == a and (b, r) in runs)
    if rs:
        print()
        print("%s over %s, wall seconds run by run (same seed): " % (a, b)
              + "; ".join("run %d: %.2f" % (r, runs[(a, r)]["wall"] / runs[(b, r)]["wall"]) for r in rs))
