"""The long runs (issue 26): Fig. 1, Fig. 2, Fig. 3 and Fashion-MNIST of a grid that
includes another, each run beside the run of the same name of the grid it
includes, and the paper's claims judged on both by the report's one rule
(common.RULE) with the report's own code (Report.fig1, Report.fig2,
Report.fig3, whose reductions and costs the Fig. 3 tables show,
Report.fashion). Its figures are the report's own (Report.draw), from the
long runs. Two such grids: experiments/grid-long.conf (experiments/
grid.conf at 100,000 iterations, the paper's length for Fig. 1 and Fig. 2
and so for Fashion-MNIST at Fig. 2's settings, whose sweep it runs at that
length too; a tenth of the paper's 10^6 for Fig. 3) and experiments/
grid-1m.conf (grid-long's Fig. 3 at 10^6)."""

import argparse
import copy
import math
import os
import tempfile

from keptruns import machines

from .common import (RULE, TOP, WINDOW, mean, read_grid, setting_label, spread, sweep_iterations,
                     sweep_settings, table, with_spread)
from .intro import distinct
from .report import Report

# The long grids, whose kept runs docs/RESULTS.md's scope names (long_scope).
LONG_GRIDS = tuple(os.path.join(TOP, "experiments", g) for g in ("grid-long.conf", "grid-1m.conf"))
# (group, title, its sweep's lr.settings index (Fig. 3: its own setting),
# --jobs of the command that ran it, unless the grid says "report.jobs: N")
FIGS = (("fig2", "Fig. 2", 1, 2), ("fig1", "Fig. 1", 0, 2), ("fig3", "Fig. 3", None, 1),
        ("fashion", "Fashion-MNIST", 1, 2))
# The paper's iteration count of each figure it has (not Fashion-MNIST,
# which runs Fig. 2's settings).
PAPER = {"fig1": 100000, "fig2": 100000, "fig3": 1000000}
# Keys of a long grid that say where its runs are, not what they are.
WHERE = ("include", "kept", "lr.kept", "fashion.lr.kept", "report.jobs")
# base.yaml's eval.every: how often a run is evaluated unless its grid says.
EVAL_EVERY = 100


def eval_every(grid, fig):
    """How often a run of this figure of this grid is evaluated (server
    timestamps): its "FIG.eval_every", else base.yaml's."""
    return int(grid.get(fig + ".eval_every", [EVAL_EVERY])[0])


def and_list(xs):
    """"a", "a and b", "a, b and c"."""
    return " and ".join(xs) if len(xs) < 3 else ", ".join(xs[:-1]) + " and " + xs[-1]


def rel(path):
    return os.path.relpath(os.path.abspath(path), TOP)


def kept_grids():
    """(path, grid, kept folder) of each grid of LONG_GRIDS whose runs are
    kept (a runs.csv in its "kept" folder)."""
    for path in LONG_GRIDS:
        if not os.path.exists(path):
            continue
        g = read_grid(path)
        kept = os.path.join(TOP, g.get("kept", [""])[0])
        if os.path.exists(os.path.join(kept, "runs.csv")):
            yield path, g, kept


def report_path(args):
    """Where the report is kept: report.md beside the runs (scripts/paper
    writes it there; the report names it so whatever --output says)."""
    return rel(os.path.join(args.results, "report.md"))


class LongReport:
    """The long grid's report (long: a Report of its grid and runs) beside
    the grid it includes (base: a Report of that grid and the runs kept
    where the long grid's lr.kept says, the sweep both take their picks
    from)."""

    def __init__(self, args, judge=True):
        """judge: run every figure's sections for their claims (False: the
        two reports alone, as --fashion-alphas asks)."""
        self.args = args
        self.long = Report(args)
        g = self.long.grid
        base = copy.copy(args)
        base.grid = os.path.join(os.path.dirname(os.path.abspath(args.grid)), g["include"][0])
        # where the grid it includes keeps its runs (grid.conf: the sweep's folder)
        kept = read_grid(base.grid).get("kept") or g["lr.kept"]
        base.results = args.results if args.smoke else os.path.join(TOP, kept[0])
        # its tables for the figures apart from the long runs' (same names)
        base.plots = os.path.join(args.plots, "base") if args.plots else None
        if base.plots:
            os.makedirs(base.plots, exist_ok=True)
        self.base = Report(base)
        if judge:
            self.judge()

    def judge(self):
        """Each figure's claims at both lengths (self.verdicts, self.texts)."""
        self.figs = [f for f in FIGS if any(n.startswith(f[0] + "-") for n in self.long.res.prov)]
        self.verdicts = {}   # fig -> [(claim, long (verdict, counts), base (verdict, counts))]
        self.texts = {}      # fig -> (long claims' texts, base claims' texts)
        for fig, _, _, _ in self.figs:
            got = []
            for rep in (self.long, self.base):
                h, c = len(rep.headline), len(rep.claims)
                rep.out, rep.fashion_text = [], []
                getattr(rep, fig)()   # its tables are not kept: only its claims
                got.append((rep.headline[h:], rep.claims[c:] + rep.fashion_text))
            (lh, lc), (bh, bc) = got
            # by the claims of the grid it includes (those of the long
            # grid's runs that are all kept, the others "not judged")
            lmap = {x[0]: x[1:3] for x in lh}
            self.verdicts[fig] = [(c, lmap.get(c, ("not judged", "runs missing")), (v, n)) for c, v, n, _ in bh]
            self.texts[fig] = (lc, bc)

    def cadences_differ(self):
        return any(eval_every(self.long.grid, f) != eval_every(self.base.grid, f) for f, _, _, _ in self.figs)

    def prefixes(self):
        """({figure: [runs whose first rows are the base run's, runs with a
        base run]}, names of those runs whose base run's last row, at its
        end, is not a row of the long run), over the long runs kept: the
        rows of the iterations both evaluate, up to the base run's end,
        alike (NaN as NaN), and every row of the base run but its last
        one a row of the long run (where the two are evaluated at
        different intervals: the base run's last row one of the long
        run's). A run that diverged is evaluated off the cadence, so that
        its end's row can be at an iteration the long run does not
        evaluate. Where the two are evaluated at different intervals,
        mean_tau (the mean over the interval before a row) is left out."""
        L, B = self.long, self.base
        differ = self.cadences_differ()
        drop = {"mean_tau"} if differ else set()
        same = lambda v: "nan" if isinstance(v, float) and math.isnan(v) else v  # noqa: E731
        cut = lambda rows, its: [{k: same(v) for k, v in r.items() if k not in drop}  # noqa: E731
                                 for r in rows if r["iteration"] in its]
        got, off = {}, []
        for name in sorted(L.res.prov):
            lr, br = L.res.get(name, L.n_fig), B.res.get(name, B.n_fig)
            if lr is None or br is None:
                continue
            c = got.setdefault(name.split("-")[0], [0, 0])
            c[1] += 1
            li = {r["iteration"] for r in lr.rows if r["iteration"] <= B.n_fig}
            bi = {r["iteration"] for r in br.rows}
            both = li & bi
            # the end's row in both where the cadences differ, else every
            # row of the base run but its end's one
            rows_ok = B.n_fig in both if differ else bi - {B.n_fig} <= li
            if both == li and rows_ok and cut(lr.rows, both) == cut(br.rows, both):
                c[0] += 1
                if B.n_fig not in li:
                    off.append(name)
        return got, off

    def jobs(self, default):
        return int(self.long.grid.get("report.jobs", [default])[0])

    def paper_length(self):
        """The figures this grid runs at the paper's length."""
        return sorted(t for f, t, _, _ in self.figs if PAPER.get(f) == self.long.n_fig)

    def own_keys(self):
        """What the long grid sets itself (beside where its runs are), as
        `key: value`s."""
        own = read_grid(self.args.grid, include=False)
        return and_list(["`%s: %s`" % (k, " ".join(v)) for k, v in own.items() if k not in WHERE])

    @staticmethod
    def paper_fig3():
        """(grid, its report) of the grid of LONG_GRIDS that runs Fig. 3
        at the paper's 10^6 iterations, if its runs are kept; else None."""
        for path, lg, kept in kept_grids():
            if int(lg.get("fig.iterations", [0])[0]) >= PAPER["fig3"]:
                return rel(path), rel(os.path.join(kept, "report.md"))
        return None

    def fig3_length(self):
        """Fig. 3's length against the paper's 10^6, and where a grid
        runs it so."""
        if self.long.n_fig >= PAPER["fig3"]:
            return "the paper ran it for 10^6 iterations, as these runs"
        there = self.paper_fig3()
        if there:
            return "the paper ran it for 10^6 iterations, ten times these runs: `%s` runs it so (its report: `%s`)" % there
        return ("the paper ran it for 10^6 iterations, ten times these runs (at the CPU time these took, "
                "about %.0f CPU-hours: not run)" % (10 * self.cpu_h(self.long, "fig3")[1]))

    def its(self, rep):
        return "{:,}".format(rep.n_fig)

    def cpu_h(self, rep, fig, seeded=True):
        """(runs, CPU-hours) of a figure's runs (names FIG-...-sSEED; with
        seeded false, a sweep's, FIG-...), the more seeds' included."""
        seeds = rep.seeds + rep.more
        names = [n for n in rep.res.prov if n.startswith(fig + "-") and
                 (not seeded or n.endswith(tuple("-s" + s for s in seeds)))]
        return len(names), sum(rep.res.cpu(n) or 0.0 for n in names) / 3600

    def make(self):
        L, B, a = self.long, self.base, self.args
        g = L.grid
        out = []
        w = out.append
        w("# Long runs: %s at %s iterations" % (and_list([t for _, t, _, _ in self.figs]) or "the figures",
                                                 self.its(L)))
        w("")
        w("Made by `scripts/paper-report --grid %s --results %s --output %s` from the runs kept in `%s` "
          "(and, beside them, those of `%s` kept in `%s`), with no simulation: never edited by hand." % (
              rel(a.grid), rel(a.results), report_path(a), rel(a.results), rel(B.args.grid), rel(B.args.results)))
        w("")
        paper = self.paper_length()
        differ = self.cadences_differ()
        w("`%s` is `%s` (its rules, settings, seeds %s and α: the paper's for fasgd, both statistics, and "
          "sasgd; the picks of the learning-rate sweep kept in `%s`, not rerun, for fasgd's second α, "
          "dcasgd and gap-aware) with %s%s, where `%s` runs %s. "
          "A run here has the name, keys and seed of the run of `%s` it stands beside, and only its "
          "iteration count%s." % (
              rel(a.grid), rel(B.args.grid), ", ".join(L.seeds), g["lr.kept"][0],
              self.own_keys(), ", the paper's length for %s" % and_list(paper) if paper else "",
              rel(B.args.grid), self.its(B), rel(B.args.results),
              " and how often it is evaluated differ" if differ else " differs"))
        w("")
        if "fashion" in [f for f, _, _, _ in self.figs]:
            if self.own_fashion_sweep():
                picks = ("each rule at its pick of its own Fashion-MNIST sweep, run at %s iterations and kept "
                         "here (its table below), and, kept too, each rule at its pick of the %s-iteration "
                         "sweep kept in `%s`" % (self.sweep_its(L), self.sweep_its(B), rel(B.args.results)))
            else:
                picks = "each rule at its pick of the Fashion-MNIST sweep kept in `%s` (%s iterations, not rerun)" % (
                    g.get("fashion.lr.kept", g["lr.kept"])[0], self.sweep_its(L))
            w("Fashion-MNIST likewise: Fig. 2's settings (and so its length) on Fashion-MNIST's 50,000 "
              "training images, the paper's protocol (Fig. 2's α) and %s; *final* there is the mean of the last "
              "%d evaluations, one every %s server timestamps, on Fashion-MNIST's own 10,000 test images." % (
                  picks, WINDOW // eval_every(g, "fashion"), eval_every(g, "fashion")))
            w("")
        if "fig3" in [f for f, _, _, _ in self.figs]:
            w("Fig. 3 (B-FASGD) likewise: its setting (%s), each statistic at its sweep winner there, its gates' "
              "constants and the every-k baselines are `%s`'s; %s." % (
                  setting_label(g["fig3.setting"][0]), rel(B.args.grid), self.fig3_length()))
            w("")
        cad = lambda rep: (WINDOW // eval_every(rep.grid, self.figs[0][0]), eval_every(rep.grid, self.figs[0][0]))  # noqa: E731
        w("*Final* test error: the mean of the test-set evaluations of the last %s iterations (%s) on the "
          "held-out %s images; each cell is the mean over the seeds and their range (smallest–largest); "
          "*paired* is each seed's %s-iteration final minus the same seed's %s-iteration one, as its mean "
          "(smallest–largest)." % (
              "{:,}".format(WINDOW),
              ("at %s iterations the last %d, one every %d server timestamps; at %s the last %d, one every %d" % (
                  (self.its(L),) + cad(L) + (self.its(B),) + cad(B)) if differ else
               "the last %d, one every %d server timestamps" % cad(L)),
              "{:,}".format(int(g["test"][0])), self.its(L), self.its(B)))
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
        for fig, title, _, _ in FIGS:
            n, h = self.cpu_h(L, fig)
            if not n:
                continue
            nb, hb = self.cpu_h(B, fig)
            rows.append([title, n, "%.2f" % h, nb, "%.2f" % hb])
            if fig == "fashion" and self.own_fashion_sweep():
                n, h = self.cpu_h(L, "fashion-lr", seeded=False)
                nb, hb = self.cpu_h(B, "fashion-lr", seeded=False)
                rows.append([title + "'s sweep", n, "%.2f" % h, nb, "%.2f" % hb])
        w(table(["figure", "runs at %s" % self.its(L), "CPU-hours", "runs at %s" % self.its(B), "CPU-hours"], rows))
        w("")
        w("fasgd-sim built from commit%s %s (binary SHA-256 %s), on %s; each run on one thread (`-t 1`) "
          "under `nice -n 19`; CPU-hours add each run's user + system time (`/usr/bin/time`, kept in "
          "runs.csv). The commands:" % (
              "s" if len(distinct(prov, "commit")) > 1 else "", ", ".join(distinct(prov, "commit")),
              ", ".join(distinct(prov, "binary_sha256")), machines(prov)))
        w("")
        for fig, _, _, jobs in FIGS:
            if fig in [f for f, _, _, _ in self.figs]:
                w("    scripts/paper --grid %s --jobs %d --only %s" % (rel(a.grid), self.jobs(jobs), fig))
        w("    scripts/paper-report --grid %s --results %s --output %s" % (rel(a.grid), rel(a.results), report_path(a)))
        w("")
        w("(scripts/paper writes this report itself after its runs; the second command remakes it.)")
        w("")
        got, off = self.prefixes()
        same, both = sum(c[0] for c in got.values()), sum(c[1] for c in got.values())
        w("Of the %d long runs kept with a %s-iteration namesake, %d begin with its curve: their rows up to "
          "iteration %s%s are its rows, every kept column alike (the gates' and the clients' draws included)%s%s%s." % (
              both, self.its(B), same, self.its(B),
              ", at the iterations both evaluate," if differ else "",
              " but mean_tau, the mean τ since the evaluation before, over spans the two cadences make "
              "different" if differ else "",
              "" if not off else
              " (of %s, which diverged and so were evaluated off the cadence, every row but the namesake's "
              "last, which falls at an iteration the long run does not evaluate)" % and_list(
                  ["`%s`" % n for n in off]),
              "; a run's length changes none of its first steps" if same == both else
              "; the others differ from it before then (%s)" % ", ".join(
                  "%s: %d of %d" % (t, got[f][0], got[f][1]) for f, t, _, _ in FIGS if f in got)))
        w("")
        for fig, title, idx, _ in self.figs:
            if fig == "fig3":
                self.figure3(out)
            else:
                self.figure(out, fig, title, g["lr.settings"][idx])
            self.claims_of(out, fig)
        return "\n".join(out) + "\n"

    def figure(self, out, fig, title, sweep_setting):
        L, B = self.long, self.base
        g = L.grid
        w = out.append
        w("## %s" % title)
        w("")
        w("![%s at %s iterations](figures/%s.png)%s" % (
            title, self.its(L), fig, " ![%s summary](figures/%s-summary.png)" % (title, fig) if fig == "fig2" else ""))
        w("")
        rows, marked = [], False
        for s in g[fig + ".settings"]:
            for r in g[fig + ".rules"]:
                for a, label, at in self.alpha_rows(fig, r, sweep_setting):
                    pt, bp = (rep.fig_point(fig, s, r, a) if on else None for rep, on in zip((L, B), at))
                    marked = marked or any(p and len(p.seeds) != len(rep.seeds) for p, rep in ((pt, L), (bp, B)))
                    d = "—"
                    if pt and bp:
                        x = [p - q for p, q in zip(pt.finals, bp.finals)]
                        d = "%+.4f%s" % (mean(x), spread(x))
                    rows.append([setting_label(s), label] + [
                        rep.with_seeds(p.finals) if p else "missing" if on else "not run"
                        for p, on, rep in zip((pt, bp), at, (L, B))] + [d])
        w("Final test error%s:" % (" (%s; *paired* over the seeds both lengths have)" % L.more_seeds_text()[2:]
                                    if marked else ""))
        w("")
        w(table(["setting", "rule", "%s iterations" % self.its(L), "%s iterations" % self.its(B), "paired"], rows,
                ["---", "---", "---:", "---:", "---:"]))
        w("")
        if fig == "fashion" and self.own_fashion_sweep():
            self.fashion_sweep(out)

    def sweep_its(self, rep):
        """The iteration count of rep's Fashion-MNIST sweep."""
        return "{:,}".format(sweep_iterations(rep.grid, "fashion") // rep.scale)

    def own_fashion_sweep(self):
        """Whether the long grid sweeps Fashion-MNIST itself, at another
        length than the grid it includes (fashion.lr.kept)."""
        return self.sweep_its(self.long) != self.sweep_its(self.base)

    def alpha_rows(self, fig, rule, sweep_setting):
        """[(alpha, label, (run at the long runs' length, at the base's))]:
        the alphas a figure runs rule at, at either length. Fig. 1 and
        Fig. 2 take the same at both (from the sweep in lr.kept);
        Fashion-MNIST the paper's protocol's and each length's picks
        (Report.fashion_alphas), from its own sweep where the long grid
        runs one (each pick labelled with its sweep's length)."""
        L, B = self.long, self.base
        if fig != "fashion":
            return [(a, "%s (α=%s%s)" % (rule, a, ", sweep" if i else ""), (True, True))
                    for i, a in enumerate(L.alphas(rule, sweep_setting))]
        la, ba = L.fashion_alphas(rule), B.fashion_alphas(rule)
        out = []
        for a in la + [a for a in ba if a not in la]:
            at = [self.sweep_its(rep) for rep, al in ((L, la), (B, ba)) if a in al[1:]]
            tag = ""
            if at:
                tag = ", Fashion-MNIST pick" + (" at " + " and ".join(at) if self.own_fashion_sweep() else "")
            out.append((a, "%s (α=%s%s)" % (rule, a, tag), (a in la or self.own_fashion_sweep(), a in ba)))
        return out

    def fashion_alphas(self, rule):
        """The alphas of rule's Fashion-MNIST runs this report looks for at
        the long runs' length (scripts/paper runs them)."""
        return [a for a, _, at in self.alpha_rows("fashion", rule, None) if at[0]]

    def fashion_sweep(self, out):
        """The long grid's own Fashion-MNIST sweep (Report.sweep_table), and
        its picks beside those of the grid it includes."""
        L, B = self.long, self.base
        g = L.grid
        w = out.append
        ss = sweep_settings(g, "fashion")
        w("Fashion-MNIST's learning-rate sweep at %s iterations (%s, seed 1, kept here; cells: final / best "
          "validation error on the validation split, each rule's pick, the lowest final, in bold):" % (
              self.sweep_its(L), setting_label(ss[0])))
        w("")
        L.out = []
        L.sweep_table(ss[0], g["fashion.rules"], "fashion")
        out.extend(L.out)
        w("Picks at %s iterations: %s; at %s (the sweep kept in `%s`): %s." % (
            self.sweep_its(L), L.picks_text(), self.sweep_its(B), rel(B.args.results), B.picks_text()))
        w("")

    def figure3(self, out):
        """Fig. 3's gates at both lengths: each gate's reduction and cost as
        Report.fig3 found them (its fig3_result), and the final errors paired
        by seed."""
        L, B = self.long, self.base
        g = L.grid
        w = out.append
        w("## Fig. 3")
        w("")
        w("fasgd at %s, std α = %s and abs α = %s; gates as in docs/RESULTS.md's Fig. 3 section, whose code "
          "(paperreport/fig3.py) gives these reductions and costs at both lengths: *reduction* is potential / "
          "actual copies at the end of the run, *cost* each seed's final error minus the same seed's ungated "
          "(c = 0) run's at the same length, as the mean (smallest–largest); *paired* as above." % (
              setting_label(g["fig3.setting"][0]), L.fig3_alpha.get("std"), L.fig3_alpha.get("abs")))
        w("")
        w("![Fig. 3 at %s iterations, std](figures/fig3-std.png) ![Fig. 3 at %s iterations, abs]"
          "(figures/fig3-abs.png) ![Fig. 3 at %s iterations, error against bytes](figures/fig3-bytes.png)" % (
              (self.its(L),) * 3))
        w("")
        cell = lambda c: "—" if c is None else "%+.4f%s" % (mean(c), spread(c))  # noqa: E731
        for st in ("std", "abs"):
            lb, bb = L.fig3_base.get(st), B.fig3_base.get(st)
            gates = [("c = 0 (ungated)", None)]
            for what, kind in (("fetch", "cfetch"), ("push", "cpush")):
                gates += [("%s, c = %s" % (what, c), (st, what, "c", c)) for c in g["fig3.%s.%s" % (kind, st)]]
                gates += [("%s, every k = %s" % (what, k), (st, what, "k", k)) for k in g["fig3.k" + what]]
            rows = []
            for label, key in gates:
                lv, bv = (L.fig3_result.get(key), B.fig3_result.get(key)) if key else (None, None)
                lp, bp = (lv[3] if lv else None, bv[3] if bv else None) if key else (lb, bb)
                d = "—"
                if lp and bp:
                    d = cell([p - q for p, q in zip(lp.finals, bp.finals)])
                if key is None:   # the ungated run: every copy made
                    reds = ["1.00×" if p else "—" for p in (lp, bp)]
                else:
                    reds = ["—" if v is None else "%.2f×" % v[0] for v in (lv, bv)]
                rows.append([label] + reds + [
                             "missing" if lp is None else with_spread(lp.finals),
                             "missing" if bp is None else with_spread(bp.finals), d,
                             "—" if not lv else cell(lv[1]), "—" if not bv else cell(bv[1])])
            w("**%s statistic** (α = %s):" % (st, L.fig3_alpha.get(st)))
            w("")
            w(table(["gate", "reduction at %s" % self.its(L), "at %s" % self.its(B),
                     "final at %s" % self.its(L), "at %s" % self.its(B), "paired",
                     "cost at %s" % self.its(L), "at %s" % self.its(B)], rows,
                    ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]))
            w("")

    def claims_of(self, out, fig):
        L, B = self.long, self.base
        w = out.append
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
        own = ""
        for fig, title, _, _ in self.figs:
            n, h = self.cpu_h(L, fig)
            sweep = ""
            if fig == "fashion" and self.own_fashion_sweep():
                ns, hs = self.cpu_h(L, "fashion-lr", seeded=False)
                sweep = ", and its learning-rate sweep at that length: %d runs, %.2f" % (ns, hs)
                own = (" (but Fashion-MNIST's tuned α, which its own sweep at %s iterations picks: %s)" % (
                    self.sweep_its(L), L.picks_text()))
            parts.append("%s (%d runs, %.2f CPU-hours%s)" % (title, n, h, sweep))
        verdicts = []
        for fig, _, _, _ in self.figs:
            for c, lv, bv in self.verdicts[fig]:
                verdicts.append("%s: **%s** (%s) at %s, %s (%s) at %s" % (
                    c, lv[0], lv[1], self.its(L), bv[0], bv[1], self.its(B)))
        f3 = ""
        if "fig3" in [f for f, _, _, _ in self.figs] and L.n_fig < PAPER["fig3"]:
            f3 = (" (for Fig. 3 a tenth of the paper's 10^6, %s)" % (
                "run at 10^6 too: below" if self.paper_fig3() else
                "which, at about %.0f CPU-hours, was not run" % (10 * self.cpu_h(L, "fig3")[1])))
        return ("The paper's length: %s also ran at %s iterations%s with this grid's rules, settings, seeds, "
                "α%s and gates (`%s`, kept in `%s`, its report `%s`, where each run stands beside its %s-iteration "
                "namesake). %s." % (
                    and_list(parts), self.its(L), f3, own, rel(a.grid), rel(a.results), report_path(a),
                    self.its(B), "; ".join(verdicts)))


def long_scope():
    """docs/RESULTS.md's scope lines for the kept runs of the grids of
    LONG_GRIDS (none for a grid with none). Their band files go to a
    folder of their own, not among the report's."""
    lines = []
    for path, g, kept in kept_grids():
        with tempfile.TemporaryDirectory(prefix="fasgd-paper-long-") as plots:
            args = argparse.Namespace(grid=path, results=kept, output=os.path.join(kept, "report.md"),
                                      smoke=0, quick=0, seeds=" ".join(g["seeds"]), plots=plots, figures="")
            line = LongReport(args).scope()
        if line:
            lines.append(line)
    return lines
