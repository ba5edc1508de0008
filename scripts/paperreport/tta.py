"""The time to accuracy's kept data (experiments/data/time-to-accuracy/, made by
scripts/time-to-accuracy): reading it, when a run reaches a target, and the
verdict on the paper's "10x fewer fetches is about 5x less total bandwidth",
shared by scripts/time-to-accuracy-report and the headline of RESULTS."""

import csv
import os
import re

from .curves import rows as kept_rows
from .common import TOP, verdict_of

KEPT = os.path.join(TOP, "experiments", "data", "time-to-accuracy")
SMOOTH = 5          # "reached": the mean of the last SMOOTH test evaluations at or below the target
PAPER_FETCH_CUT = 10.0
PAPER_BYTES_CUT = 5.0


def reach(rows, target):
    """(simulated seconds, bytes) at the first evaluation where the mean of
    the last SMOOTH test errors is at or below target; None if never."""
    for i in range(SMOOTH - 1, len(rows)):
        w = [x["test_error"] for x in rows[i - SMOOTH + 1:i + 1]]
        if sum(w) / SMOOTH <= target:
            return rows[i]["sim_time"], rows[i]["bytes"]
    return None


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def secs(x):
    return "{:,.0f}".format(x) if x >= 100 else "%.1f" % x


def med_range(v, f=secs):
    return "%s (%s–%s)" % (f(median(v)), f(min(v)), f(max(v))) if len(v) > 1 else f(v[0])


def mbit(bw):
    return "{:,.0f} Mbit/s".format(float(bw) * 8 / 1e6)


def gate_order(grid):
    g = ["ungated"]
    g += ["fetch-c" + c for c in grid["tta.cfetch"]]
    g += ["push-c" + c for c in grid["tta.cpush"]]
    g += ["fetch-every" + k for k in grid["tta.kfetch"]]
    g += ["push-every" + k for k in grid["tta.kpush"]]
    g += ["both-c" + c for c in grid["tta.cboth"]]
    g += ["both-every" + k for k in grid["tta.kboth"]]
    return g


def gate_label(g):
    if g == "ungated":
        return "ungated"
    m = re.match(r"(fetch|push|both)-(c|every)(.*)", g)
    what = {"fetch": "fetch", "push": "push", "both": "fetch + push"}[m.group(1)]
    return "%s B-FASGD c = %s" % (what, m.group(3)) if m.group(2) == "c" else "%s every k = %s" % (what, m.group(3))


def model_params():
    """D, the model's parameter count, from experiments/base.yaml's sizes."""
    with open(os.path.join(TOP, "experiments", "base.yaml")) as f:
        m = re.search(r"sizes:\s*\[([0-9,\s]+)\]", f.read())
    s = [int(x) for x in m.group(1).split(",")]
    return sum(a * b + b for a, b in zip(s, s[1:]))


def load(kept):
    """(runs.csv's rows, {(gate, bandwidth, seed): curve})."""
    with open(os.path.join(kept, "runs.csv")) as f:
        runs = list(csv.DictReader(f))
    return runs, {(x["gate"], x["bandwidth"], x["seed"]): kept_rows(kept, x["file"]) for x in runs}




def bytes_claim(kept, grid):
    """The paper's statement judged by the report's rule: each fetch-only gate
    that cuts fetches about 10x (at least 8x) is a setting; it holds there
    when every seed's bytes cut is about 5x (within 4x-6x), is reversed when
    no seed's is. Returns (claim, verdict, outcomes, {gate: (fetch cuts,
    bytes cuts)}, bandwidth) or None without kept data."""
    if not os.path.exists(os.path.join(kept, "runs.csv")):
        return None
    runs, curves = load(kept)
    bws = sorted({k[1] for k in curves}, key=float)
    b0 = bws[0]
    seeds = sorted({x["seed"] for x in runs}, key=int)
    out = {}
    for g in gate_order(grid):
        if not g.startswith("fetch-"):
            continue
        fc, bc = [], []
        for s in seeds:
            c, u = curves.get((g, b0, s)), curves.get(("ungated", b0, s))
            if c and u:
                fc.append(c[-1]["potential_fetches"] / max(c[-1]["fetches"], 1))
                bc.append(u[-1]["bytes"] / c[-1]["bytes"])
        if fc and median(fc) >= 0.8 * PAPER_FETCH_CUT:
            out[g] = (fc, bc)
    if not out:
        return None
    lo, hi = 0.8 * PAPER_BYTES_CUT, 1.2 * PAPER_BYTES_CUT
    outcomes = []
    for fc, bc in out.values():
        inside = [lo <= x <= hi for x in bc]
        outcomes.append("holds" if all(inside) else "reversed" if not any(inside) else "within noise")
    claim = "The paper: 10× fewer fetches is about 5× less total bandwidth"
    return claim, verdict_of(outcomes), outcomes, out, b0
