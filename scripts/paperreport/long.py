"""The long runs (issue 26): Fig. 1 and Fig. 2 of a grid that includes
another (experiments/grid-long.conf: experiments/grid.conf at the paper's
100,000 iterations), each run beside the run of the same name of the grid it
includes, and the paper's claims judged on both by the report's one rule
(common.RULE) with the report's own code (Report.fig1, Report.fig2)."""

import argparse
import copy
import os
import tempfile

from keptruns import machines

from .common import RULE, TAIL, TOP, WINDOW, mean, read_grid, setting_label, spread, table, with_spread
from .intro import distinct
from .report import Report

# The long grid and its kept runs, for docs/RESULTS.md's scope (long_scope).
LONG_GRID = os.path.join(TOP, "experiments", "grid-long.conf")
FIGS = (("fig2", "Fig. 2", 1), ("fig1", "Fig. 1", 0))   # (group, title, its sweep's lr.settings index)


def rel(path):
    return os.path.relpath(os.path.abspath(path), TOP)


def report_path(args):
    """Where the report is kept: report.md beside the runs (scripts/paper
    writes it there; the report names it so whatever --output says)."""
    return rel(os.path.join(args.results, "report.md"))


class LongReport:
    """The long grid's report (long: a Report of its grid and runs) beside
    the grid it includes (base: a Report of that grid and the runs kept
    where the long grid's lr.kept says, the sweep both take their picks
    from)."""

    def __init__(self, args):
        self.args = args
        self.long = Report(args)
        g = self.long.grid
        base = copy.copy(args)
        base.grid = os.path.join(os.path.dirname(os.path.abspath(args.grid)), g["include"][0])
        base.results = args.results if args.smoke else os.path.join(TOP, g["lr.kept"][0])
        self.base = Report(base)
        self.figs = [f for f in FIGS if any(n.startswith(f[0] + "-") for n in self.long.res.prov)]
        self.verdicts = {}   # fig -> [(claim, long (verdict, counts), base (verdict, counts))]
        self.texts = {}      # fig -> (long claims' texts, base claims' texts)
        for fig, _, _ in self.figs:
            got = []
            for rep in (self.long, self.base):
                h, c = len(rep.headline), len(rep.claims)
                rep.out = []
                getattr(rep, fig)()   # its tables are not kept: only its claims
                got.append((rep.headline[h:], rep.claims[c:]))
            (lh, lc), (bh, bc) = got
            # by the claims of the grid it includes (those of the long
            # grid's runs that are all kept, the others "not judged")
            lmap = {x[0]: x[1:3] for x in lh}
            self.verdicts[fig] = [(c, lmap.get(c, ("not judged", "runs missing")), (v, n)) for c, v, n, _ in bh]
            self.texts[fig] = (lc, bc)

    def prefixes(self):
        """(runs whose first rows are the base run's, runs with a base run)
        over the long runs kept."""
        L, B = self.long, self.base
        same = both = 0
        for name in sorted(L.res.prov):
            lr, br = L.res.get(name, L.n_fig), B.res.get(name, B.n_fig)
            if lr is None or br is None:
                continue
            both += 1
            if [r for r in lr.rows if r["iteration"] <= B.n_fig] == br.rows:
                same += 1
        return same, both

    def its(self, rep):
        return "{:,}".format(rep.n_fig)

    def cpu_h(self, rep, fig):
        names = [n for n in rep.res.prov if n.startswith(fig + "-") and n.endswith(tuple("-s" + s for s in rep.seeds))]
        return len(names), sum(rep.res.cpu(n) or 0.0 for n in names) / 3600

    def make(self):
        L, B, a = self.long, self.base, self.args
        g = L.grid
        out = []
        w = out.append
        w("# Long runs: %s at %s iterations" % (" and ".join(t for _, t, _ in self.figs) or "Fig. 1 and Fig. 2",
                                                 self.its(L)))
        w("")
        w("Made by `scripts/paper-report --grid %s --results %s --output %s` from the runs kept in `%s` "
          "(and, beside them, those of `%s` kept in `%s`), with no simulation: never edited by hand." % (
              rel(a.grid), rel(a.results), report_path(a), rel(a.results), rel(B.args.grid), rel(B.args.results)))
        w("")
        w("`%s` is `%s` (its rules, settings, seeds %s and α: the paper's for fasgd, both statistics, and "
          "sasgd; the picks of the learning-rate sweep kept in `%s`, not rerun, for fasgd's second α, "
          "dcasgd and gap-aware) with `fig.iterations: %s`, the paper's length, where `%s` runs %s. "
          "A run here has the name, keys and seed of the run of `%s` it stands beside, and only its "
          "iteration count differs." % (
              rel(a.grid), rel(B.args.grid), ", ".join(L.seeds), rel(B.args.results),
              g["fig.iterations"][0], rel(B.args.grid), self.its(B), rel(B.args.results)))
        w("")
        w("*Final* test error: the mean of the test-set evaluations of the last %s iterations (the last %d, "
          "one every 100 server timestamps) on the held-out %s images; each cell is the mean over the "
          "seeds and their range (smallest–largest); *paired* is each seed's %s-iteration final minus the "
          "same seed's %s-iteration one, as its mean (smallest–largest)." % (
              "{:,}".format(WINDOW), TAIL, "{:,}".format(int(g["test"][0])), self.its(L), self.its(B)))
        w("")
        if a.smoke:
            w("(`--smoke` run: these numbers are only a check of the report.)")
            w("")
        w("## The runs")
        w("")
        prov = list(L.res.prov.values())
        if not prov:
            w("No kept runs.")
            return "\n".join(out) + "\n"
        rows = []
        for fig, title, _ in FIGS:
            n, h = self.cpu_h(L, fig)
            if not n:
                continue
            nb, hb = self.cpu_h(B, fig)
            rows.append([title, n, "%.2f" % h, nb, "%.2f" % hb])
        w(table(["figure", "runs at %s" % self.its(L), "CPU-hours", "runs at %s" % self.its(B), "CPU-hours"], rows))
        w("")
        w("fasgd-sim built from commit%s %s (binary SHA-256 %s), on %s; each run on one thread (`-t 1`) "
          "under `nice -n 19`; CPU-hours add each run's user + system time (`/usr/bin/time`, kept in "
          "runs.csv). The commands:" % (
              "s" if len(distinct(prov, "commit")) > 1 else "", ", ".join(distinct(prov, "commit")),
              ", ".join(distinct(prov, "binary_sha256")), machines(prov)))
        w("")
        for fig, _, _ in FIGS:
            if fig in [f for f, _, _ in self.figs]:
                w("    scripts/paper --grid %s --jobs 2 --only %s" % (rel(a.grid), fig))
        w("    scripts/paper-report --grid %s --results %s --output %s" % (rel(a.grid), rel(a.results), report_path(a)))
        w("")
        w("(scripts/paper writes this report itself after its runs; the second command remakes it.)")
        w("")
        same, both = self.prefixes()
        w("Of the %d long runs kept with a %s-iteration namesake, %d begin with its curve: their rows up to "
          "iteration %s are its rows, every kept column alike%s." % (
              both, self.its(B), same, self.its(B),
              " (a run's length changes none of its first steps)" if same == both else
              "; the others differ from it before then"))
        w("")
        for fig, title, idx in self.figs:
            self.figure(out, fig, title, g["lr.settings"][idx])
        return "\n".join(out) + "\n"

    def figure(self, out, fig, title, sweep_setting):
        L, B = self.long, self.base
        g = L.grid
        w = out.append
        w("## %s" % title)
        w("")
        w("Final test error:")
        w("")
        rows = []
        for s in g[fig + ".settings"]:
            lr = L.fig_runs(fig, s, g[fig + ".rules"], sweep_setting)
            br = {k: pt for k, _, _, pt in B.fig_runs(fig, s, g[fig + ".rules"], sweep_setting)}
            for key, label, _, pt in lr:
                bp = br.get(key)
                d = "—"
                if pt and bp:
                    x = [p - q for p, q in zip(pt.finals, bp.finals)]
                    d = "%+.4f%s" % (mean(x), spread(x))
                rows.append([setting_label(s), label, "missing" if pt is None else with_spread(pt.finals),
                             "missing" if bp is None else with_spread(bp.finals), d])
        w(table(["setting", "rule", "%s iterations" % self.its(L), "%s iterations" % self.its(B), "paired"], rows,
                ["---", "---", "---:", "---:", "---:"]))
        w("")
        w("### The paper's claims")
        w("")
        w(RULE)
        w("")
        w(table(["claim", "at %s iterations" % self.its(L), "at %s iterations" % self.its(B)],
                [[c, "**%s** (%s)" % lv, "**%s** (%s)" % bv] for c, lv, bv in self.verdicts[fig]],
                ["---", "---", "---"]))
        w("")
        w("(in brackets: settings held / within noise / reversed of all.)")
        w("")
        lc, bc = self.texts[fig]
        w("At %s iterations:" % self.its(L))
        w("")
        for c in lc:
            w("- " + c)
        w("")
        w("At %s iterations (as docs/RESULTS.md says):" % self.its(B))
        w("")
        for c in bc:
            w("- " + c)
        w("")

    def scope(self):
        """One sentence for docs/RESULTS.md's scope: where the long runs
        are and what the claims gave there."""
        L, B, a = self.long, self.base, self.args
        if not self.figs:
            return None
        parts = []
        for fig, title, _ in self.figs:
            n, h = self.cpu_h(L, fig)
            parts.append("%s (%d runs, %.2f CPU-hours)" % (title, n, h))
        verdicts = []
        for fig, _, _ in self.figs:
            for c, lv, bv in self.verdicts[fig]:
                verdicts.append("%s: **%s** (%s) at %s, %s (%s) at %s" % (
                    c, lv[0], lv[1], self.its(L), bv[0], bv[1], self.its(B)))
        return ("The paper's length: %s also ran at %s iterations with this grid's rules, settings, seeds "
                "and α (`%s`, kept in `%s`, its report `%s`, where each run stands beside its %s-iteration "
                "namesake). %s." % (
                    " and ".join(parts), self.its(L), rel(a.grid), rel(a.results), report_path(a), self.its(B),
                    "; ".join(verdicts)))


def long_scope():
    """docs/RESULTS.md's scope line for experiments/grid-long.conf's kept
    runs (None if there are none). Its band files go to a folder of its own,
    not among the report's."""
    if not os.path.exists(LONG_GRID):
        return None
    g = read_grid(LONG_GRID)
    kept = os.path.join(TOP, g["kept"][0])
    if not os.path.exists(os.path.join(kept, "runs.csv")):
        return None
    with tempfile.TemporaryDirectory(prefix="fasgd-paper-long-") as plots:
        args = argparse.Namespace(grid=LONG_GRID, results=kept, output=os.path.join(kept, "report.md"),
                                  smoke=0, quick=0, seeds=" ".join(g["seeds"]), plots=plots, figures="")
        return LongReport(args).scope()
