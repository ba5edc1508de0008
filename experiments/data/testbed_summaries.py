"""The table of a folder of test-bed runs kept by runs-in-turn.sh with
their summary.txt (PREFIX-VARIANT-rR.txt), the guard's roll-backs
(.guard) and the final turns_* keys (.turns): per variant, the median
(smallest-largest) over its runs of the wall seconds to the run's end,
the updates a second, the mean staleness tau of the applied gradients,
the validation error at the end and the best one, the roll-backs, the
turns cut and those that found their client's path slower; then, for
each pair (A, B), A's wall seconds over B's run by run (same seed).
Used by turns-het/report.py and guard-het/report.py."""
import glob
import os
import re
import statistics

COLS = [("wall", "wall s to T = 3,000", "%.1f"), ("rate", "updates/s", "%.1f"), ("tau", "mean tau", "%.2f"),
        ("err", "val. error at T = 3,000", "%.4f"), ("best", "best val. error", "%.4f"),
        ("guard", "guard roll-backs", "%.0f"), ("cut", "turns cut", "%.0f"), ("slower", "turns found slower", "%.0f")]


def summary_keys(path):
    """The KEY=VALUE lines of a kept file (a summary.txt, a .turns) as a dict; {} when it is absent."""
    if not os.path.exists(path):
        return {}
    return dict(line.strip().split("=", 1) for line in open(path) if "=" in line)


def _num(d, k):
    return float(d[k]) if d.get(k, "") != "" else float("nan")


def _spread(v, fmt):
    v = [x for x in v if x == x]
    if not v:
        return "-"
    return (fmt % statistics.median(v)) + " (" + (fmt % min(v)) + "-" + (fmt % max(v)) + ")"


def report(here, prefix, variants, pairs, cols=None):
    cols = cols or [c for c in COLS]
    runs = {}
    for path in sorted(glob.glob(os.path.join(here, prefix + "-*-r*.txt"))):
        m = re.match(re.escape(prefix) + r"-(\w+)-r(\d+)\.txt$", os.path.basename(path))
        base = path[:-4]
        s, t = summary_keys(path), summary_keys(base + ".turns")
        guard = open(base + ".guard").read().strip() if os.path.exists(base + ".guard") else ""
        runs[(m.group(1), int(m.group(2)))] = {
            "wall": _num(s, "wall_s"), "rate": _num(s, "updates_per_s"), "tau": _num(s, "tau_mean"),
            "err": _num(s, "val_error"), "best": _num(s, "best_error"),
            "guard": float(guard) if guard else float("nan"),
            "cut": _num(t, "turns_cut"), "slower": _num(t, "turns_slower"),
        }
    print("| variant | runs | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|--:|" + "--:|" * len(cols))
    for v in variants:
        rs = sorted(r for (tt, r) in runs if tt == v)
        if rs:
            print("| %s | %d | " % (v, len(rs))
                  + " | ".join(_spread([runs[(v, r)][c[0]] for r in rs], c[2]) for c in cols) + " |")
    for a, b in pairs:
        rs = sorted(r for (tt, r) in runs if tt == a and (b, r) in runs)
        if rs:
            print()
            print("%s over %s, wall seconds run by run (same seed): " % (a, b)
                  + "; ".join("run %d: %.2f" % (r, runs[(a, r)]["wall"] / runs[(b, r)]["wall"]) for r in rs))
