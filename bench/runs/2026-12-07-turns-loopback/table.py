#!/usr/bin/env python3
"""Prints the loopback table of bench/link.md ("Replies in turn on
loopback") from the runs kept beside it (run.sh): per variant (off, on),
the median (least-greatest) over its rounds of the clients' steps/s (the
mean of the four clients' own figures), the final validation error, the
updates the server made, and the mean staleness tau (the mean of the
validation CSV's rows, each the mean over the updates since the row
before); then each round's on/off ratio of steps/s."""
import csv
import glob
import os
import re
import statistics

here = os.path.dirname(os.path.abspath(__file__))
rate = re.compile(r"steps in [0-9.]+ s \(([0-9.]+) steps/s\)")
final = re.compile(r"final validation error: ([0-9.]+) \(after (\d+) updates\)")
runs = {}
for path in sorted(glob.glob(os.path.join(here, "turns-*-r*.out"))):
    m = re.match(r"turns-(on|off)-r(\d+)\.out$", os.path.basename(path))
    text = open(path).read()
    rates = [float(x) for x in rate.findall(text)]
    f = final.search(text)
    rows = list(csv.DictReader(open(path[:-4] + ".csv")))
    tau = statistics.mean(float(r["mean_tau"]) for r in rows if int(r["timestamp"]) > 0)
    runs[(m.group(1), int(m.group(2)))] = (statistics.mean(rates), float(f.group(1)), int(f.group(2)), tau)


def spread(v, fmt):
    return (fmt % statistics.median(v)) + " (" + (fmt % min(v)) + "-" + (fmt % max(v)) + ")"


print("| turns | rounds | client steps/s | final validation error | updates | mean tau |")
print("|---|--:|--:|--:|--:|--:|")
for t in ("off", "on"):
    ks = sorted(k for (tt, k) in runs if tt == t)
    print("| %s | %d | %s | %s | %s | %s |" % (t, len(ks), spread([runs[(t, k)][0] for k in ks], "%.1f"),
                                             spread([runs[(t, k)][1] for k in ks], "%.4f"),
                                             spread([runs[(t, k)][2] for k in ks], "%d"),
                                             spread([runs[(t, k)][3] for k in ks], "%.2f")))
pairs = sorted(k for (t, k) in runs if t == "on" and ("off", k) in runs)
ratios = [runs[("on", k)][0] / runs[("off", k)][0] for k in pairs]
print()
print("on/off steps/s, round by round: " + ", ".join("%.2f" % r for r in ratios)
      + "; median %.2f" % statistics.median(ratios))
