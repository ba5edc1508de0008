"""The runs' curves: one run (Run), the runs kept in a directory (Results),
one point of a figure over its seeds (Point)."""

import bisect
import csv
import os

from . import curves
from .common import WINDOW, mean


class Run:
    """One curve: rows of floats keyed by column name; err is the column
    the report judges by (test_error for the figures, val_error for the
    sweeps that pick)."""

    def __init__(self, folder, file, col="test_error"):
        self.path = os.path.join(folder, file)
        with curves.text(folder, file) as f:
            self.rows, header = curves.rows_of(f)
        if col not in header:
            raise ValueError("%s has no column %s" % (self.path, col))
        self.err = [r[col] for r in self.rows]
        self.it = [int(r["iteration"]) for r in self.rows]
        # rows in iteration order (as every run writes them) are searched
        # by bisection, others row by row
        self.ordered = all(a < b for a, b in zip(self.it, self.it[1:]))

    @property
    def last(self):
        return self.rows[-1]

    def window(self, it=None):
        """The errors of the evaluations in the WINDOW iterations ending at
        it (default: the last row), it included."""
        it = self.it[-1] if it is None else it
        if self.ordered:
            return self.err[bisect.bisect_right(self.it, it - WINDOW):bisect.bisect_right(self.it, it)]
        return [e for i, e in zip(self.it, self.err) if it - WINDOW < i <= it]

    @property
    def final(self):
        tail = self.window()
        return sum(tail) / len(tail)

    @property
    def best(self):
        return min(self.err)

    def at(self, it):
        """Mean of the evaluations of the WINDOW iterations ending at the last
        row <= it."""
        if self.ordered:
            k = bisect.bisect_right(self.it, it)
            if not k:
                return None
            last = self.it[k - 1]
        else:
            idx = [i for i, x in enumerate(self.it) if x <= it]
            if not idx:
                return None
            last = self.it[idx[-1]]
        tail = self.window(last)
        return sum(tail) / len(tail)

    def reach(self, thr):
        for i, e in zip(self.it, self.err):
            if e <= thr + 1e-12:
                return i
        return None

    def rate(self, kind, lo, hi):
        """Transmitted / potential copies (kind fetches or pushes) between
        the fractions lo and hi of the run's potential copies."""
        pot = [r["potential_" + kind] for r in self.rows]
        act = [r[kind] for r in self.rows]
        total = pot[-1]

        def at(frac):
            x = frac * total
            for i in range(1, len(pot)):
                if pot[i] >= x:
                    p0, p1 = pot[i - 1], pot[i]
                    t = 0.0 if p1 == p0 else (x - p0) / (p1 - p0)
                    return act[i - 1] + t * (act[i] - act[i - 1])
            return act[-1]
        span = (hi - lo) * total
        return (at(hi) - at(lo)) / span if span > 0 else float("nan")

    def late_early(self, kind):
        """The transmit rate over the last fifth of the potential copies
        against the first (below 1: a concave curve); None if the first
        fifth sent nothing."""
        early = self.rate(kind, 0.0, 0.2)
        return self.rate(kind, 0.8, 1.0) / early if early > 0 else None

    def reduction(self, kind):
        a = self.last[kind]
        return self.last["potential_" + kind] / a if a else float("inf")


class Results:
    """The runs kept in a directory: NAME.csv.gz (scripts/paper keeps them
    so; loose or packed, curves.py), or NAME.csv; col is the column Run
    judges by. runs.csv there, if any, gives each run's provenance
    (self.prov: name -> its row)."""

    def __init__(self, resdir, scale, col="test_error"):
        self.dir = resdir
        self.scale = scale
        self.col = col
        self.cache = {}
        self.prov = {}
        path = os.path.join(resdir, "runs.csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                self.prov = {x["name"]: x for x in csv.DictReader(f)}

    def get(self, name, iterations=None):
        """The run NAME if its curve is complete, else None."""
        if name in self.cache:
            return self.cache[name]
        run = None
        if self.prov and name not in self.prov:
            # a curve without its line of provenance is not a kept run
            self.cache[name] = None
            return None
        for file in (name + ".csv.gz", name + ".csv"):
            if curves.has(self.dir, file):
                r = Run(self.dir, file, self.col)
                if r.rows and (iterations is None or r.it[-1] == iterations):
                    run = r
                break
        self.cache[name] = run
        return run

    def cpu(self, name):
        """The run's CPU seconds as kept, None if not recorded."""
        x = self.prov.get(name)
        return float(x["cpu_s"]) if x and x.get("cpu_s") else None

    def point(self, name, iterations, seeds, more=()):
        """The runs NAME-sSEED of every seed as a Point, None unless all are
        complete; with the seeds of more too where every one of theirs is
        kept (scripts/paper runs them where a verdict hinges)."""
        runs = [self.get("%s-s%s" % (name, sd), iterations) for sd in seeds]
        if not runs or any(r is None for r in runs):
            return None
        extra = [self.get("%s-s%s" % (name, sd), iterations) for sd in more]
        if extra and all(r is not None for r in extra):
            return Point(name, runs + extra, list(seeds) + list(more))
        return Point(name, runs, list(seeds))


class Point:
    """One point of a figure over its seeds. final, best, at, reach, rate and
    reduction are the seeds' means; finals, bests, ats give each seed's value
    (for spreads and verdicts), in the order of seeds; rows are the first
    seed's."""

    def __init__(self, name, runs, seeds):
        self.name = name
        self.runs = runs
        self.seeds = seeds

    @property
    def rows(self):
        return self.runs[0].rows

    @property
    def last(self):
        return self.runs[0].last

    @property
    def finals(self):
        return [r.final for r in self.runs]

    @property
    def bests(self):
        return [r.best for r in self.runs]

    def ats(self, it):
        v = [r.at(it) for r in self.runs]
        return None if any(x is None for x in v) else v

    @property
    def final(self):
        return mean(self.finals)

    @property
    def best(self):
        return mean(self.bests)

    def at(self, it):
        v = self.ats(it)
        return None if v is None else mean(v)

    def reach(self, thr):
        v = [r.reach(thr) for r in self.runs]
        return None if any(x is None for x in v) else int(round(mean(v)))

    def rate(self, kind, lo, hi):
        return mean([r.rate(kind, lo, hi) for r in self.runs])

    def reduction(self, kind):
        return mean([r.reduction(kind) for r in self.runs])

    def band(self):
        """Rows (iteration, mean, min, max) of the seeds' running means over
        WINDOW iterations (Run.at), over the iterations all seeds have."""
        curves = []
        for r in self.runs:
            out = {}
            for it in r.it:
                tail = r.window(it)
                out[it] = sum(tail) / len(tail)
            curves.append(out)
        its = sorted(set.intersection(*(set(c) for c in curves)))
        return [(it, mean([c[it] for c in curves]), min(c[it] for c in curves),
                 max(c[it] for c in curves)) for it in its]
