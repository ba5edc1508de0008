"""What every simulation kept in experiments/data cost: the CPU time each
run recorded (runs.csv, finals.csv), and for the runs that recorded none
(the tuning runs, whose tuning.csv line keeps only their final validation
error, and finals timed by nothing) an estimate from the timed runs of the
same folder, setting and rule: their CPU seconds an iteration times the
run's iterations. The last table of docs/RESULTS.md's "Run times"."""

import csv
import os
import re

from .common import TOP, table

DATA = os.path.join(TOP, "experiments", "data")
# (kept folder, the command that ran its simulations)
FOLDERS = (("paper", "`scripts/paper`"),
           ("paper-long", "`scripts/paper --grid experiments/grid-long.conf`"),
           ("paper-1m", "`scripts/paper --grid experiments/grid-1m.conf`"),
           ("ablation", "`scripts/ablation`"),
           ("baselines", "`scripts/baselines`"),
           ("sim-staleness", "`scripts/sim-staleness`"),
           ("time-to-accuracy", "`scripts/time-to-accuracy`"))


def _rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _key(row):
    """(setting, rule) of a kept run: its columns, else its command line."""
    if row.get("setting") and row.get("rule"):
        return row["setting"], row["rule"]
    cmd = row.get("command", "")
    b, c, r = (re.search(r"\b%s=([^ ]+)" % k, cmd) for k in ("batch", "clients", r"rule\.name"))
    return ("%sx%s" % (b.group(1), c.group(1)) if b and c else "", r.group(1) if r else "")


def _iterations(row):
    if row.get("iterations"):
        return int(row["iterations"])
    m = re.search(r"\biterations=([0-9]+)", row.get("command", ""))
    return int(m.group(1)) if m else None


def folder_cost(folder):
    """(runs, timed runs, recorded CPU seconds, tuning runs, estimated CPU
    seconds of the untimed runs, untimed runs left out of the estimate), or
    None without kept runs."""
    finals = _rows(os.path.join(folder, "runs.csv")) or _rows(os.path.join(folder, "finals.csv"))
    if not finals:
        return None
    tuning = _rows(os.path.join(folder, "tuning.csv"))
    timed = [x for x in finals if x.get("cpu_s")]
    recorded = sum(float(x["cpu_s"]) for x in timed)
    # CPU seconds an iteration of the timed runs, by (setting, rule), then
    # by setting, then the folder's.
    rates = {}
    for x in timed:
        n = _iterations(x)
        if n:
            s, r = _key(x)
            for k in ((s, r), (s,), ()):
                a = rates.setdefault(k, [0.0, 0])
                a[0] += float(x["cpu_s"])
                a[1] += n
    estimated, left = 0.0, 0
    for x in [x for x in finals if not x.get("cpu_s")] + tuning:
        s, r = _key(x)
        n = _iterations(x)
        rate = next((rates[k] for k in ((s, r), (s,), ()) if k in rates), None)
        if n and rate:
            estimated += n * rate[0] / rate[1]
        else:
            left += 1
    return len(finals), len(timed), recorded, len(tuning), estimated, left


def cost_table(w):
    """Writes the table of every kept folder's cost and its total with w,
    one line at a time; nothing when no folder keeps runs."""
    rows, tot = [], [0, 0, 0.0, 0, 0.0, 0]
    for name, cmd in FOLDERS:
        got = folder_cost(os.path.join(DATA, name))
        if not got:
            continue
        runs, timed, rec, tun, est, left = got
        tot = [a + b for a, b in zip(tot, got)]
        rows.append(["`experiments/data/%s`" % name, cmd, "{:,}".format(runs), "{:,}".format(tun),
                     "%.2f (%s of %s)" % (rec / 3600, "{:,}".format(timed), "{:,}".format(runs)),
                     "%.2f" % (est / 3600) if runs - timed + tun else "",
                     "%.2f" % ((rec + est) / 3600)])
    if not rows:
        return
    runs, timed, rec, tun, est, left = tot
    rows.append(["all", "", "{:,}".format(runs), "{:,}".format(tun),
                 "%.2f (%s of %s)" % (rec / 3600, "{:,}".format(timed), "{:,}".format(runs)),
                 "%.2f" % (est / 3600), "**%.2f**" % ((rec + est) / 3600)])
    w("Every simulation kept in `experiments/data`, by folder: its runs (a line of runs.csv or "
      "finals.csv each, the curve kept), its tuning runs (a line of tuning.csv each: the final "
      "validation error only), the CPU-hours the runs recorded, the CPU-hours of those that "
      "recorded none (the tuning runs among them) estimated from the timed runs of the same "
      "folder, setting and rule (CPU seconds an iteration, times the run's iterations), and the "
      "sum: %.1f CPU-hours for the whole, %.1f of them recorded%s. The test bed's runs (real "
      "daemons on shaped links, timed by the wall clock: `experiments/time-to-accuracy.md`) and "
      "the attack runs (`experiments/attacks.md`) are not simulations and not counted."
      % ((rec + est) / 3600, rec / 3600,
         "" if not left else "; %d runs with no timed run to estimate from are left out" % left))
    w()
    w(table(["kept in", "made by", "runs", "tuning runs", "recorded CPU-hours", "estimated",
             "CPU-hours"], rows, ["---", "---", "---:", "---:", "---:", "---:", "---:"]))
    w()
