"""The report: its state and the helpers the figures share, each section
from a module of its own (intro, sweeps, fig1, fig2, fig3, fashion)."""

import os

from .common import (RULE, TOP, WINDOW, compare, fmt_it, outcome, paired, pick, read_grid, recorded_pick,
                     run_name, setting_label, sweep_settings, table, verdict_of, with_spread)
from .runs import Results
from .intro import Intro
from .sweeps import Sweeps
from .fig1 import Fig1
from .fig2 import Fig2
from .fig3 import Fig3
from .fashion import Fashion
from .hinging import Hinging
from .figures import Figures
from .tta import KEPT as TTA_KEPT, PAPER_BYTES_CUT, bytes_claim
from .tuned import ablation_rows, baselines_rows


class Report(Intro, Sweeps, Fig1, Fig2, Fig3, Fashion, Figures, Hinging):
    """The report being written (self.out, its lines), the claims gathered
    for its last section, and what every section asks: the grid, the runs,
    the alphas a figure used. Each section's methods come from its module;
    make() writes them in order."""

    def __init__(self, args):
        self.args = args
        self.grid = read_grid(getattr(args, "grid", None))
        self.scale = 20 if args.smoke else 1
        self.seeds = args.seeds.split()
        # The more seeds, which scripts/paper runs where a verdict hinges on
        # the first seeds' overlapping ranges (paperreport/hinging.py; not
        # with --smoke or --quick, which run one seed).
        self.more = [] if args.smoke or args.quick else self.grid.get("more_seeds", [])
        # The figures judge by the held-out test rows; the sweeps pick by
        # the validation rows (those of the sweep kept in the grid's
        # lr.kept, if it names one: scripts/paper takes its picks there).
        self.res = Results(args.results, self.scale, "test_error")
        lr_kept = self.grid.get("lr.kept")
        self.vres = Results(os.path.join(TOP, lr_kept[0]) if lr_kept and not args.smoke else args.results,
                            self.scale, "val_error")
        # Fashion-MNIST's sweep: where fashion.lr.kept says, else with the lr sweep.
        fashion_kept = self.grid.get("fashion.lr.kept")
        self.fvres = (Results(os.path.join(TOP, fashion_kept[0]), self.scale, "val_error")
                      if fashion_kept and not args.smoke else self.vres)
        self._fashion_picks = None
        self.n_fig = int(self.grid["fig.iterations"][0]) // self.scale
        self.n_lr = int(self.grid["lr.iterations"][0]) // self.scale
        self.out = []
        self.claims = []
        self.headline = []
        # Fig. 3's points against bytes, a statistic (fig3_bytes; the figure reads them)
        self.bytes_points = {}
        # Fig. 3's ungated points, gates and alphas, a statistic (fig3; the
        # long runs' report reads them)
        self.fig3_base, self.fig3_result, self.fig3_alpha = {}, {}, {}

    def w(self, s=""):
        self.out.append(s)

    def pick(self, rule, setting):
        """The sweep's winner; with --quick and the sweep incomplete, the
        winner grid.conf records (pick.RULE.SETTING)."""
        a = pick(self.vres, self.grid, rule, setting)
        if a is None and self.args.quick:
            a = recorded_pick(self.grid, rule, setting)
        return a

    def alpha(self, rule, sweep_setting):
        if rule in ("fasgd", "sasgd"):
            return self.grid["alpha." + rule][0]
        return self.pick(rule, sweep_setting)

    def alphas(self, rule, sweep_setting, quick=None):
        """The alphas a figure runs rule at (scripts/paper's alphas): fasgd's two
        statistics at the paper's and at their sweep's (with --quick the
        paper's only), the others at one."""
        if quick is None:
            quick = self.args.quick
        if rule in ("fasgd", "fasgd-abs"):
            p = self.grid["alpha." + rule][0]
            w = None if quick else self.pick(rule, sweep_setting)
            return [p] if w is None or w == p else [p, w]
        return [self.alpha(rule, sweep_setting)]

    def sweep_res(self, sweep):
        """The runs a sweep ("lr" or "fashion") picks from."""
        return self.fvres if sweep == "fashion" else self.vres

    def fashion_picks(self):
        """{rule: its α from Fashion-MNIST's own sweep} (on the first of
        fashion.lr.settings, by common.pick): a rule's None while that
        sweep is incomplete, every rule's with --quick (which runs the
        paper's protocol only)."""
        if self._fashion_picks is None:
            g = self.grid
            ss = sweep_settings(g, "fashion")
            self._fashion_picks = {r: None if self.args.quick or not ss else pick(self.fvres, g, r, ss[0], "fashion")
                                   for r in g["fashion.rules"]}
        return self._fashion_picks

    def picks_text(self):
        """Fashion-MNIST's picks as the report names them."""
        return ", ".join("%s α = %s" % (r, a) if a else "%s not picked (its sweep is incomplete)" % r
                         for r, a in self.fashion_picks().items())

    def fashion_alphas(self, rule):
        """The alphas Fashion-MNIST runs rule at: the paper's protocol's
        (Fig. 2's), then its Fashion-MNIST pick where that differs and
        every rule has one."""
        a = self.alpha(rule, self.grid["lr.settings"][1])
        picks = self.fashion_picks()
        return [a] + ([picks[rule]] if all(picks.values()) and picks[rule] != a else [])

    def fig_runs(self, fig, setting, rules, sweep_setting, prefix=None, both=True, alphas_of=None, tag="sweep"):
        """[(key, label, alpha, Point or None)]: key is the rule for its first
        (the paper's) alpha, rule@sweep for fasgd's sweep alpha (both=False:
        one alpha a rule, as Fashion-MNIST runs them; alphas_of(rule), if
        given, the alphas instead), whose label says tag."""
        out = []
        for r in rules:
            alist = (alphas_of(r) if alphas_of else self.alphas(r, sweep_setting) if both
                     else [self.alpha(r, sweep_setting)])
            for i, a in enumerate(alist):
                pt = None
                if a is not None:
                    pt = self.fig_point(fig, setting, r, a, prefix)
                    if pt:
                        self.write_band(pt)
                key = r if i == 0 else r + "@sweep"
                out.append((key, "%s (α=%s%s)" % (r, a, ", " + tag if i else ""), a, pt))
        return out

    def fig_point(self, fig, setting, rule, alpha, prefix=None):
        """A figure's point (its runs named by prefix, by default the
        figure's) over the report's seeds, and over the more seeds too
        where every one of theirs is kept."""
        return self.res.point(run_name(prefix or fig, setting, rule, alpha), self.n_fig, self.seeds, self.more)

    def with_seeds(self, values):
        """values (a point's, a seed each) as with_spread writes them,
        marked with their count where that is not the report's."""
        return with_spread(values) + ("" if len(values) == len(self.seeds) else " [%d seeds]" % len(values))

    def more_seeds_text(self):
        """What the tables say of points with more seeds."""
        return ("; [%d seeds]: seeds %s too, run where a verdict hinged on the first seeds' overlapping ranges" % (
            len(self.seeds) + len(self.more), ", ".join(self.more)))

    def more_points_item(self):
        """The scope's item on the more seeds: the points that want them
        (paperreport/hinging.py) and how many of those have them kept, by
        figure; None when none want them."""
        if not self.more:
            return None
        want = self.hinging_points()
        if not want:
            return None
        got = [p for p in want if self.res.point(p, self.n_fig, self.more)]
        names = {"fig1": "Fig. 1", "fig2": "Fig. 2", "fig3": "Fig. 3", "fashion": "Fashion-MNIST"}
        fig = lambda p: p.split("-")[0]  # noqa: E731
        by = [(names[f], sum(1 for p in got if fig(p) == f)) for f in names if any(fig(p) == f for p in want)]
        return ("Seeds %s too for %d points, where a claim's verdict hinged on the first seeds' overlapping "
                "ranges (both sides of a comparison; a Fig. 3 gate's own copy curve; `more_seeds`): %s%s." % (
                    ", ".join(self.more), len(got), ", ".join("%s %d" % x for x in by),
                    "" if len(got) == len(want) else "; %d more want them, not run" % (len(want) - len(got))))

    def write_band(self, pt):
        with open(os.path.join(self.args.plots, "band-%s.dat" % pt.name), "w") as f:
            f.write("# iteration, mean, min, max over seeds %s of the mean test error of the last %d iterations\n"
                    % (" ".join(pt.seeds), WINDOW))
            for row in pt.band():
                f.write("%d %.6f %.6f %.6f\n" % row)
    def fig_tables(self, fig, settings, rules, sweep_setting, prefix=None, both=True, alphas_of=None):
        """Final, best, early and reach tables; returns {setting: {key: Point}}."""
        allruns = {}
        rows, brows, rrows, erows = [], [], [], []
        early = self.n_fig // 10
        head = None
        for s in settings:
            runs = self.fig_runs(fig, s, rules, sweep_setting, prefix, both, alphas_of)
            head = head or [lab for _, lab, _, _ in runs]
            allruns[s] = {k: pt for k, _, _, pt in runs}
            rows.append([setting_label(s)] + ["missing" if pt is None else self.with_seeds(pt.finals)
                                              for _, _, _, pt in runs])
            brows.append([setting_label(s)] + ["missing" if pt is None else self.with_seeds(pt.bests)
                                               for _, _, _, pt in runs])
            erows.append([setting_label(s)] + [
                "missing" if pt is None or pt.ats(early) is None else self.with_seeds(pt.ats(early))
                for _, _, _, pt in runs])
            f, sa = allruns[s].get("fasgd"), allruns[s].get("sasgd")
            if f and sa:
                thr = max(f.final, sa.final)
                rrows.append([setting_label(s), "%.4f" % thr] + [
                    "missing" if pt is None else fmt_it(pt.reach(thr)) for _, _, _, pt in runs])
        seeds = ("mean over seeds %s, (smallest–largest)" % ", ".join(self.seeds)
                 if len(self.seeds) > 1 else "seed %s" % self.seeds[0])
        if any(pt and len(pt.seeds) != len(self.seeds) for pts in allruns.values() for pt in pts.values()):
            seeds += self.more_seeds_text()
        self.w("Final test error after %s iterations (%s):" % ("{:,}".format(self.n_fig), seeds))
        self.w()
        self.w(table(["setting"] + head, rows))
        self.w()
        self.w("Best test error seen during the run:")
        self.w()
        self.w(table(["setting"] + head, brows))
        self.w()
        self.w("Early: test error at %s iterations, a tenth of the run (mean of the evaluations "
               "of the %s iterations up to there):" % ("{:,}".format(early), "{:,}".format(WINDOW)))
        self.w()
        self.w(table(["setting"] + head, erows))
        self.w()
        if rrows:
            self.w("Iterations to reach the threshold (the larger of fasgd's and sasgd's mean final "
                   "error, a level both end at; the seeds' mean; — = some seed never did):")
            self.w()
            self.w(table(["setting", "threshold"] + head, rrows))
            self.w()
        return allruns

    def faster_lower(self, runs, settings, a_key, b_key):
        """Per setting: a against b at the end and at a tenth of the run; it
        holds where a is lower at both, is reversed where a is higher at
        either. Returns (outcomes, details, seeds lower at both, seed pairs)."""
        outcomes, details = [], []
        k = total = 0
        early = self.n_fig // 10
        for s in settings:
            a, b = runs[s].get(a_key), runs[s].get(b_key)
            got = self.fl_compare(a, b) if a and b else None
            if got is None:
                continue
            end, start, both = got
            outcomes.append(outcome(both))
            d_end, p_end = paired(a.finals, b.finals)
            d_start, _ = paired(a.ats(early), b.ats(early))
            k += sum(1 for x, y in zip(d_end, d_start) if x < 0 and y < 0)
            total += len(d_end)
            details.append("%s: final %s vs %s (%s; %s), at %s iterations %s vs %s (%s)" % (
                setting_label(s), with_spread(a.finals), with_spread(b.finals), end, p_end,
                "{:,}".format(early), with_spread(a.ats(early)), with_spread(b.ats(early)), start))
        return outcomes, details, k, total

    def fl_compare(self, a, b):
        """a against b at the end and at a tenth of the run (compare()),
        and faster and lower on both: "lower" where a is lower beyond the
        seeds' spread at both, "higher" where it is higher at either, else
        "within noise". None while either has no evaluation at a tenth."""
        early = self.n_fig // 10
        if a.ats(early) is None or b.ats(early) is None:
            return None
        end, start = compare(a.finals, b.finals), compare(a.ats(early), b.ats(early))
        if end == "lower" and start == "lower":
            return end, start, "lower"
        return end, start, "higher" if "higher" in (end, start) else "within noise"

    def fl_outcome(self, a, b):
        """a against b, faster and lower (fl_compare's last), or None."""
        got = self.fl_compare(a, b)
        return got and got[2]

    @staticmethod
    def verdict(outcomes):
        return verdict_of(outcomes)

    def judged(self, claim, outcomes, paired_text):
        """A claim for the headline table: its verdict by the rule."""
        v = verdict_of(outcomes)
        self.headline.append((claim, v, "%d / %d / %d of %d" % (
            outcomes.count("holds"), outcomes.count("within noise"), outcomes.count("reversed"), len(outcomes)),
            paired_text))
        return v

    def headline_lines(self):
        out = ["## The claims and their verdicts", ""]
        if self.args.smoke:
            out += ["(`--smoke` run: these verdicts are only a check of the report.)", ""]
        out += [RULE, "",
                "The data: every table below is made from the runs kept in `experiments/data/paper/` "
                "(`scripts/paper-report` remakes this file from them); the ablation "
                "(`experiments/ablation.md`), the tuned baselines (`experiments/baselines.md`) and the time to "
                "accuracy (`experiments/time-to-accuracy.md`), included at the end, from theirs in "
                "`experiments/data/`.", ""]
        rows = [[c, "**%s**" % v, n, p] for c, v, n, p in self.headline]
        # The paper's bandwidth statement, from the time to accuracy's kept data.
        bc = bytes_claim(TTA_KEPT, self.grid)
        if bc:
            claim, v, outcomes, judged, _ = bc
            cuts = [x for _, b in judged.values() for x in b]
            rows.append([claim + " (experiments/time-to-accuracy.md)", "**%s**" % v, "%d / %d / %d of %d" % (
                outcomes.count("holds"), outcomes.count("within noise"), outcomes.count("reversed"), len(outcomes)),
                "bytes cut %g×–%g×: %d of %d seeds (%.2f×–%.2f×)" % (
                    0.8 * PAPER_BYTES_CUT, 1.2 * PAPER_BYTES_CUT,
                    sum(1 for x in cuts if 0.8 * PAPER_BYTES_CUT <= x <= 1.2 * PAPER_BYTES_CUT), len(cuts),
                    min(cuts), max(cuts))])
        # The project's own claims, from the tuned baselines' and the
        # ablation's kept data.
        rows += [[c, "**%s**" % v, n, p] for c, v, n, p in baselines_rows() + ablation_rows()]
        out.append(table(["claim", "verdict", "settings held / within noise / reversed",
                          "paired by seed (seeds the claimed way)"], rows, ["---", "---", "---:", "---"]))
        out += ["", "The evidence for each verdict is under \"The paper's claims\" below, and for the tuned "
                "baselines and the ablation in their sections at the end.", ""]
        out += self.tuned_headline()
        return out

    def tuned_headline(self):
        """The tuned comparison beside the paper's protocol: the headline
        that scripts/baselines writes from its own kept runs."""
        path = os.path.join(TOP, "experiments", "baselines.md")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            lines = [x for x in f.read().splitlines() if x.startswith("**Headline.**")]
        if not lines:
            return []
        return ["**Tuned baselines** (each rule at its own best α, picked on validation, and the paper's "
                "N(0,1) initial weights; 20,000 iterations, `experiments/baselines.md`, under \"Tuned "
                "baselines and the paper's initialisation\" below): " + lines[0][len("**Headline.**"):].strip(),
                ""]

    def make(self):
        self.fashion_text = []
        self.header()
        at = len(self.out)
        self.scope()
        self.times()
        self.sweeps()
        self.fig1()
        self.fig2()
        self.fig3()
        self.fashion()
        self.w("## The paper's claims")
        self.w()
        if self.args.smoke:
            self.w("(`--smoke` run: these verdicts are only a check of the report.)")
            self.w()
        for c in self.claims:
            self.w("- " + c)
        tuned = self.tuned_text()
        if tuned:
            self.w("- " + tuned)
        for t in self.fashion_text:
            self.w("- " + t)
        self.w()
        self.out[at:at] = self.headline_lines()
        return "\n".join(self.out) + "\n"
