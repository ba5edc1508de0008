#!/usr/bin/env python3
"""Prints the table of experiments/turns-testbed.md from the runs kept
beside it (run.sh; the server's CSV and the turns_* keys of the final
STATUS, summary.txt for the record): per variant (off, on, on500, on100, offslow, onslow,
onslow0, onslowj, on0, onj), the
median (smallest-largest) over its runs of the updates a second over the second half of
the way to T = 1,500 (T 700 to 1,500, by the server's CSV), the mean
staleness tau of the gradients applied in the first 500 updates and
up to T = 1,100 (where docs/RESULTS.md's simulated runs reached the
target): the mean of the CSV's rows to there, each the mean over the
100 updates before it,
the timestamp and the server's seconds at which the test error's mean
over the last five evaluations first reached 0.25 (the target of
docs/RESULTS.md's rule), the test error at T = 1,500, the turns
cut and the turns that found their client's path slower (all clients,
the run's whole length); then the ratios of each variant's runs to the
same seed's run without turns (onslow's to offslow's), or with
turns.slow_factor 0 (onslowj's to onslow0's, onj's to on0's). With --plot FILE,
also draws (gnuplot, PNG) each run's mean tau and test error against T,
and its test error against the server's seconds, for off, on and on100
(on500's lines lie on on's; offslow and onslow are another setting)."""
import csv
import glob
import gzip
import os
import re
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
TARGET = 0.25


def curve(path):
    with gzip.open(path, "rt") as f:
        return [r for r in csv.DictReader(f)]


def at(rows, t):
    """The first row at timestamp t or after."""
    for r in rows:
        if int(r["timestamp"]) >= t:
            return r
    return None


def run(name):
    rows = curve(os.path.join(here, name + ".csv.gz"))
    a, b = at(rows, 700), at(rows, 1500)
    rate = (int(b["timestamp"]) - int(a["timestamp"])) / (float(b["wall_s"]) - float(a["wall_s"]))
    errs, hit = [], None
    for r in rows:
        if r["test_error"]:
            errs.append(float(r["test_error"]))
            if hit is None and len(errs) >= 5 and sum(errs[-5:]) / 5 <= TARGET:
                hit = r
    return {
        "rate": rate,
        "tau500": statistics.mean(float(r["mean_tau"]) for r in rows if 0 < int(r["timestamp"]) <= 500),
        "tau1100": statistics.mean(float(r["mean_tau"]) for r in rows if 0 < int(r["timestamp"]) <= 1100),
        "hit_T": int(hit["timestamp"]) if hit else float("nan"),
        "hit_s": float(hit["wall_s"]) if hit else float("nan"),
        "err1500": float(b["test_error"]),
    }


def spread(v, fmt):
    return (fmt % statistics.median(v)) + " (" + (fmt % min(v)) + "-" + (fmt % max(v)) + ")"


VARIANTS = ("off", "on", "on500", "on100", "offslow", "onslow", "onslow0", "onslowj", "on0", "onj")
# What a variant's runs are paired with; else off. onslow0 and on0 are
# paired with the runs they alternated with.
BASE = {"onslow": "offslow", "onslowj": "onslow0", "onj": "on0"}


def turns_key(name, key):
    """key of the run's final STATUS; nan when it has none (no turns, or
    run before the key was)."""
    path = os.path.join(here, name + ".turns")
    if not os.path.exists(path):
        return float("nan")
    keys = dict(line.strip().split("=", 1) for line in open(path) if "=" in line)
    return float(keys[key]) if key in keys else float("nan")


runs = {}
for path in sorted(glob.glob(os.path.join(here, "turns-*-r*.txt"))):
    m = re.match(r"turns-(\w+)-r(\d+)\.txt$", os.path.basename(path))
    name = os.path.basename(path)[:-4]
    runs[(m.group(1), int(m.group(2)))] = dict(run(name), cut=turns_key(name, "turns_cut"),
                                               slower=turns_key(name, "turns_slower"))

cols = [("rate", "updates/s, T 700-1,500", "%.1f"), ("tau500", "mean tau to T = 500", "%.1f"),
        ("tau1100", "mean tau to T = 1,100", "%.1f"), ("hit_T", "T at test error 0.25", "%.0f"),
        ("hit_s", "server s there", "%.1f"), ("err1500", "test error at T = 1,500", "%.3f"),
        ("cut", "turns cut", "%.0f"), ("slower", "turns found slower", "%.0f")]
print("| variant | runs | " + " | ".join(c[1] for c in cols) + " |")
print("|---|--:|" + "--:|" * len(cols))
for t in VARIANTS:
    keys = sorted(r for (tt, r) in runs if tt == t)
    if keys:
        cells = []
        for c in cols:
            v = [runs[(t, r)][c[0]] for r in keys]
            cells.append("-" if all(x != x for x in v) else spread(v, c[2]))
        print("| %s | %d | " % (t, len(keys)) + " | ".join(cells) + " |")
for t in VARIANTS[1:]:
    base = BASE.get(t, "off")
    if t == base or t in BASE.values() or t in ("onslow0", "on0"):
        continue
    pairs = sorted(r for (tt, r) in runs if tt == t and (base, r) in runs)
    if pairs:
        print()
        print("%s over %s, run by run (same seed): " % (t, base)
              + "; ".join("run %d: %s" % (r, ", ".join("%s %.2f" % (c[0], runs[(t, r)][c[0]] / runs[(base, r)][c[0]])
                                                        for c in cols[:5])) for r in pairs))


COLOURS = {"off": "#1f77b4", "on": "#d62728", "on500": "#9467bd", "on100": "#ff7f0e", "offslow": "#17becf",
           "onslow": "#8c564b"}


def plot(path):
    """Three panels, a line a run, coloured by variant."""
    tmp = tempfile.mkdtemp()
    plots = {"tau": [], "err": [], "errs": []}
    for (t, r) in sorted(runs):
        if t not in ("off", "on", "on100"):
            continue                    # on500's lie on on's; the slow-client runs are another setting
        rows = curve(os.path.join(here, "turns-%s-r%d.csv.gz" % (t, r)))
        data = os.path.join(tmp, "%s-%d.dat" % (t, r))
        with open(data, "w") as f:
            for row in rows:
                if int(row["timestamp"]) > 0 and row["test_error"]:
                    f.write("%s %s %s %s\n" % (row["timestamp"], row["wall_s"], row["mean_tau"], row["test_error"]))
        title = ("title '%s'" % t) if r == 1 else "notitle"
        style = "with lines lw 1.5 lc rgb '%s' %s" % (COLOURS[t], title)
        plots["tau"].append("'%s' using 1:3 %s" % (data, style))
        plots["err"].append("'%s' using 1:4 %s" % (data, style))
        plots["errs"].append("'%s' using 2:4 %s" % (data, style))
    script = """set terminal pngcairo size 1500,450 font ',11'
set output '%s'
set multiplot layout 1,3 title 'Replies in turn on the test bed: 32 clients, 104.63 Mbit/s, four runs a variant'
set grid
set xlabel 'T (updates)'
set ylabel 'mean staleness tau (per 100 updates)'
set yrange [0:36]
set key right center
plot %s
set ylabel 'test error (1,000 held-out digits)'
set key top right
set yrange [0.1:0.8]
plot %s
set xlabel 'server seconds'
plot %s
unset multiplot
""" % (path, ", ".join(plots["tau"]), ", ".join(plots["err"]), ", ".join(plots["errs"]))
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if len(sys.argv) == 3 and sys.argv[1] == "--plot":
    plot(sys.argv[2])
