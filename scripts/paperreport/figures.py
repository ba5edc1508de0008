"""The figures of the report, drawn by gnuplot (experiments/*.gp) from the
tables the report writes into its plot folder (band-*.dat, plot-*.dat,
summary-*.dat) and the kept curves; a figure whose runs are not all kept
is not drawn, and an older copy of it is removed (it would show other
runs than the report's)."""

import os
import shutil
import subprocess

from .common import TOP, eps_settings, mean, sweep_done

# The copy curves' transmit rate: over the last RATE_ROWS evaluations (100
# timestamps apart, so the last 1,000 iterations).
RATE_ROWS = 10

# The figures this report draws (docs/figures/ holds others too).
OWN = ("lr-sweep", "fig1", "fig2", "fig2-summary", "fig3-std", "fig3-abs", "fig3-bytes", "fashion",
       "fashion-summary")


def run_gnuplot(script, out, plots, log, **kv):
    """One figure; False (and no PNG) if gnuplot fails."""
    args = ["gnuplot", "-e", "R='%s'" % plots, "-e", "OUT='%s'" % out]
    for k, v in kv.items():
        # numbers as numbers (QUICK), the rest as strings
        args += ["-e", ("%s=%d" if isinstance(v, int) else "%s='%s'") % (k, v)]
    with open(log, "w") as f:
        ok = subprocess.run(args + [os.path.join("experiments", script)], cwd=TOP, stdout=f,
                            stderr=subprocess.STDOUT).returncode == 0
    if not ok:
        if os.path.exists(out):
            os.remove(out)
        with open(log) as f:
            why = f.read().strip().splitlines()[-3:]
        print("   %s: not drawn: %s" % (out, " / ".join(why)))
    else:
        print("   " + out)
    return ok



class Figures:
    """The report's figures (mixed into Report: self.grid, self.res, ...)."""

    def gp(self, script, out, plots, log, **kv):
        if run_gnuplot(script, out, plots, log, **kv):
            self.drawn.add(os.path.basename(out)[:-len(".png")])

    def yrange(self, points):
        """An error panel's y range: every band of points after the first
        tenth of the run, with a margin, as text."""
        rows = [row for p in points for row in p.band() if row[0] >= self.n_fig // 10]
        lo, hi = min(x[2] for x in rows), max(x[3] for x in rows)
        pad = 0.06 * (hi - lo) + 0.002
        return "%.3f" % max(0.0, lo - pad), "%.3f" % min(1.0, hi + pad)

    def have(self, *names):
        return all(os.path.exists(os.path.join(self.args.plots, "band-%s.dat" % n)) for n in names)

    def draw(self, figdir):
        if not shutil.which("gnuplot"):
            print("paper-report: gnuplot is missing: no figures drawn")
            return
        os.makedirs(figdir, exist_ok=True)
        before = {n: os.path.getmtime(os.path.join(figdir, n + ".png")) for n in OWN
                  if os.path.exists(os.path.join(figdir, n + ".png"))}
        self.drawn = set()
        self.draw_all(figdir)
        for n in sorted(set(before) - self.drawn):
            if os.path.exists(os.path.join(figdir, n + ".png")):
                os.remove(os.path.join(figdir, n + ".png"))
            print("   %s: removed (its runs are not all kept)" % os.path.join(figdir, n + ".png"))

    def draw_all(self, figdir):
        g, plots = self.grid, self.args.plots
        log = lambda name: os.path.join(plots, "gnuplot-%s.log" % name)  # noqa: E731
        smoke = 1 if self.args.smoke else 0
        sw1, sw2 = g["lr.settings"][0], g["lr.settings"][1]
        if sweep_done(self.vres, g) and os.path.exists(os.path.join(plots, "plot-eps.dat")):
            self.gp("sweeps.gp", os.path.join(figdir, "lr-sweep.png"), plots, log("lr-sweep"), QUICK=smoke,
               SETS=" ".join(g["lr.settings"]), ESETS=" ".join(eps_settings(g)), RULES=" ".join(g["lr.rules"]), AF=g["alpha.fasgd"][0],
               AS=g["alpha.sasgd"][0], EPS=self.base_epsilon())
        n = len(self.seeds)
        band = "mean of %d seeds, band: their range" % n if n > 1 else "seed %s" % self.seeds[0]
        self.curves(figdir, "fig1", "fig1", sw1, g["fig1.settings"], g["fig1.rules"],
                    "Fig. 1: MNIST, test error vs iteration (%s)" % band, True)
        self.curves(figdir, "fig2", "fig2", sw2, g["fig2.settings"], g["fig2.rules"],
                    "Fig. 2: MNIST, μ = 128, test error vs iteration (%s)" % band, True, summary=True)
        s3 = g["fig3.setting"][0]
        bytes_ok = []
        for st in ("std", "abs"):
            a = self.pick("fasgd" if st == "std" else "fasgd-abs", s3)
            if a is None:
                continue
            cf, cp = g["fig3.cfetch." + st], g["fig3.cpush." + st]
            kf, kp = g["fig3.kfetch"], g["fig3.kpush"]
            pfx = "fig3-%s-a%s" % (st, a)
            names = ([pfx + "-c0"] + [pfx + "-cfetch" + c for c in cf] + [pfx + "-cpush" + c for c in cp]
                     + [pfx + "-kfetch" + k for k in kf] + [pfx + "-kpush" + k for k in kp])
            if not self.have(*names):
                continue
            # The copy curves over every seed: mean and range of the actual
            # counts and of the transmit rate (copies-NAME.dat).
            for nm in names:
                write_copies(os.path.join(plots, "copies-%s.dat" % nm),
                             self.res.point(nm, self.n_fig, self.seeds), self.seeds)
            ylo, yhi = self.yrange([self.res.point(nm, self.n_fig, self.seeds) for nm in names])
            self.gp("fig3.gp", os.path.join(figdir, "fig3-%s.png" % st), plots, log("fig3-" + st), QUICK=smoke,
               YLO=ylo, YHI=yhi, ST=st, CF=" ".join(cf), CP=" ".join(cp), KF=" ".join(kf), KP=" ".join(kp), SET=s3, PFX=pfx,
               ALPHA=a, BAND=band)
            if os.path.exists(os.path.join(plots, "bytes-%s.dat" % st)):
                bytes_ok.append((st, a))
        if len(bytes_ok) == 2:
            n = len(self.seeds)
            self.gp("fig3-bytes.gp", os.path.join(figdir, "fig3-bytes.png"), plots, log("fig3-bytes"), QUICK=smoke,
               SET=s3, AS=bytes_ok[0][1], AA=bytes_ok[1][1], ITERS="{:,}".format(self.n_fig),
               SEEDS="%d seeds: mean, bars the range" % n if n > 1 else "seed %s" % self.seeds[0],
               **{"N" + st.upper(): self.bytes_points[st] for st, _ in bytes_ok})
        # Fashion-MNIST: each rule at the paper's protocol (solid) and, where
        # its Fashion-MNIST pick differs, at that pick (dashed).
        fpicks = {r: self.fashion_pick(r) for r in g["fashion.rules"]}
        tuned = all(fpicks.values())

        def fashion_alphas(r):
            a = self.alpha(r, sw2)
            return [a] + ([fpicks[r]] if tuned and fpicks[r] != a else [])
        self.curves(figdir, "fashion", "fashion", sw2, g["fashion.settings"], g["fashion.rules"],
                    "Fashion-MNIST (%s train, %s validation, 10,000 test), μ = 128, test error vs iteration (%s)" % (
                        "{:,}".format(60000 - int(g["fashion.holdout"][0])), "{:,}".format(int(g["fashion.holdout"][0])),
                        band), False, summary=True, alphas_of=fashion_alphas, tag="pick",
                    summary_title="Fashion-MNIST, μ = 128: final test error at %s iterations against λ (%s)")

    def curves(self, figdir, name, pfx, sw, sets, rules, title, both, summary=False, alphas_of=None, tag="sweep",
               summary_title="Fig. 2, MNIST, μ = 128: final test error at %s iterations against λ (%s)"):
        """One curve figure (curves.gp); with summary, its final errors
        against λ too (summary.gp, NAME-summary.png). A rule's lines: its
        alphas (alphas_of(rule) if given), the first solid, the second
        dashed and labelled with tag."""
        lines = []    # (rule, alpha, dash)
        for r in rules:
            for i, a in enumerate(alphas_of(r) if alphas_of else self.alphas(r, sw) if both
                                  else [self.alpha(r, sw)]):
                if a is not None:
                    lines.append((r, a, 2 if i else 1))
        pts = {(s, r, a): self.res.point("%s-%s-%s-a%s" % (pfx, s, r, a), self.n_fig, self.seeds)
               for s in sets for r, a, _ in lines}
        if not lines or any(p is None for p in pts.values()):
            return
        runs = " ".join("%s-a%s" % (r, a) for r, a, _ in lines)
        labels = " ".join("%s(α=%s%s)" % (r, a, "," + tag if d == 2 else "") for r, a, d in lines)
        ruleof = " ".join(r for r, _, _ in lines)
        dashes = " ".join(str(d) for _, _, d in lines)
        # Each panel's y range: every line's band after the first tenth of
        # the run, with a margin.
        ylos, yhis = [], []
        for s in sets:
            lo, hi = self.yrange([pts[(s, r, a)] for r, a, _ in lines])
            ylos.append(lo)
            yhis.append(hi)
        smoke = 1 if self.args.smoke else 0
        plots = self.args.plots
        self.gp("curves.gp", os.path.join(figdir, name + ".png"), plots, os.path.join(plots, "gnuplot-%s.log" % name),
           QUICK=smoke, PREFIX=pfx, SETS=" ".join(sets), RUNS=runs, LABELS=labels, RULEOF=ruleof, DASHES=dashes,
           YLOS=" ".join(ylos), YHIS=" ".join(yhis), TITLE=title)
        if summary:
            with open(os.path.join(plots, "summary-%s.dat" % pfx), "w") as f:
                for r, a, _ in lines:
                    f.write("# %s alpha %s: lambda, mean, smallest, largest final test error\n" % (r, a))
                    for s in sets:
                        v = pts[(s, r, a)].finals
                        f.write("%s %.6f %.6f %.6f\n" % (s.split("x")[1], sum(v) / len(v), min(v), max(v)))
                    f.write("\n\n")
            n = len(self.seeds)
            self.gp("summary.gp", os.path.join(figdir, name + "-summary.png"), plots,
               os.path.join(plots, "gnuplot-%s-summary.log" % name), QUICK=smoke, PREFIX=pfx, RUNS=runs,
               LABELS=labels, RULEOF=ruleof, DASHES=dashes,
               TITLE=summary_title % (
                   "{:,}".format(self.n_fig), "%d seeds: mean and range" % n if n > 1 else "one seed"))


def write_copies(path, point, seeds):
    """A gated point's copies over its seeds, a row an evaluation: the
    iteration; potential fetches, then the actual fetches' mean, smallest
    and largest over the seeds; the same for pushes; then the fetch rate
    and the push rate (actual / potential copies over the last RATE_ROWS
    evaluations) as mean, smallest and largest."""
    runs = point.runs
    n = min(len(r.rows) for r in runs)
    with open(path, "w") as f:
        f.write("# iteration, potential fetches, actual fetches (mean min max), potential pushes, actual pushes "
                "(mean min max), fetch rate (mean min max), push rate (mean min max) over seeds %s\n"
                % " ".join(seeds))
        for i in range(n):
            cols = ["%d" % runs[0].it[i]]
            for kind in ("fetches", "pushes"):
                act = [r.rows[i][kind] for r in runs]
                cols += ["%.1f" % mean([r.rows[i]["potential_" + kind] for r in runs]),
                         "%.1f %.1f %.1f" % (mean(act), min(act), max(act))]
            for kind in ("fetches", "pushes"):
                j = max(0, i - RATE_ROWS)
                rates = []
                for r in runs:
                    dp = r.rows[i]["potential_" + kind] - r.rows[j]["potential_" + kind]
                    if dp > 0:
                        rates.append((r.rows[i][kind] - r.rows[j][kind]) / dp)
                cols.append("%.4f %.4f %.4f" % (mean(rates), min(rates), max(rates)) if len(rates) == len(runs)
                            else "NaN NaN NaN")
            f.write(" ".join(cols) + "\n")
