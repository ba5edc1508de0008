"""The figures of the report, drawn by gnuplot (experiments/*.gp) from the
tables the report writes into its plot folder (band-*.dat, plot-*.dat,
summary-*.dat) and the kept curves; a figure whose runs are not all kept
is not drawn, and an older copy of it is removed (it would show other
runs than the report's)."""

import os
import shutil
import subprocess

from .common import TOP, eps_settings, mean, sweep_done
from .labels import nice_range, place

# The copy curves' transmit rate: over the last RATE_ROWS evaluations (100
# timestamps apart, so the last 1,000 iterations).
RATE_ROWS = 10

# Fig. 3 against bytes (fig3-bytes.gp): its size in pixels, its panels'
# margins (left, right, bottom, top) and spacing (x, y), in fractions of it,
# as gnuplot's multiplot layout takes them; its labels are placed for them.
BYTES_SIZE = (1800, 1300)
BYTES_MARGINS = (0.06, 0.98, 0.12, 0.93)
BYTES_SPACING = (0.07, 0.1)

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

    def draw(self, figdir, iters_in_titles=False):
        """The figures into figdir; iters_in_titles: Fig. 1's and Fig. 2's
        titles say their iteration count (the long runs', whose count
        differs from docs/RESULTS.md's)."""
        self.iters_in_titles = iters_in_titles
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
        at = " at {:,} iterations".format(self.n_fig) if self.iters_in_titles else ""
        self.curves(figdir, "fig1", "fig1", sw1, g["fig1.settings"], g["fig1.rules"],
                    "Fig. 1%s: MNIST, test error vs iteration ({band})" % at, True)
        self.curves(figdir, "fig2", "fig2", sw2, g["fig2.settings"], g["fig2.rules"],
                    "Fig. 2%s: MNIST, μ = 128, test error vs iteration ({band})" % at, True, summary=True)
        s3 = g["fig3.setting"][0]
        bytes_ok = []
        for st in ("std", "abs"):
            a, pfx = self.fig3_prefix(st)
            if a is None:
                continue
            cf, cp = g["fig3.cfetch." + st], g["fig3.cpush." + st]
            kf, kp = g["fig3.kfetch"], g["fig3.kpush"]
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
            xr, yr = bytes_labels(plots)
            self.gp("fig3-bytes.gp", os.path.join(figdir, "fig3-bytes.png"), plots, log("fig3-bytes"), QUICK=smoke,
               W=BYTES_SIZE[0], H=BYTES_SIZE[1], MARGINS=" ".join(map(str, BYTES_MARGINS)),
               SPACING=" ".join(map(str, BYTES_SPACING)), XR=xr, YR=yr,
               SET=s3, AS=bytes_ok[0][1], AA=bytes_ok[1][1], ITERS="{:,}".format(self.n_fig),
               SEEDS="%d seeds: mean, bars the range" % n if n > 1 else "seed %s" % self.seeds[0],
               **{"N" + st.upper(): self.bytes_points[st] for st, _ in bytes_ok})
        # Fashion-MNIST: each rule at the paper's protocol (solid) and, where
        # its Fashion-MNIST pick differs, at that pick (dashed).
        self.curves(figdir, "fashion", "fashion", sw2, g["fashion.settings"], g["fashion.rules"],
                    "Fashion-MNIST%s, μ = 128, test error vs iteration ({band})" % (
                        # the split's sizes, or (long enough) the length
                        at or " (%s train, %s validation, 10,000 test)" % (
                            "{:,}".format(60000 - int(g["fashion.holdout"][0])),
                            "{:,}".format(int(g["fashion.holdout"][0])))), False, summary=True,
                    alphas_of=self.fashion_alphas, tag="pick",
                    summary_title="Fashion-MNIST, μ = 128: final test error at %s iterations against λ (%s)")

    def curves(self, figdir, name, pfx, sw, sets, rules, title, both, summary=False, alphas_of=None, tag="sweep",
               summary_title="Fig. 2, MNIST, μ = 128: final test error at %s iterations against λ (%s)"):
        """One curve figure (curves.gp); with summary, its final errors
        against λ too (summary.gp, NAME-summary.png); title's {band} says
        what the lines are over. A rule's lines: its
        alphas (alphas_of(rule) if given), the first solid, the second
        dashed and labelled with tag."""
        lines = []    # (rule, alpha, dash)
        for r in rules:
            for i, a in enumerate(alphas_of(r) if alphas_of else self.alphas(r, sw) if both
                                  else [self.alpha(r, sw)]):
                if a is not None:
                    lines.append((r, a, 2 if i else 1))
        pts = {(s, r, a): self.fig_point(pfx, s, r, a)
               for s in sets for r, a, _ in lines}
        if not lines or any(p is None for p in pts.values()):
            return
        runs = " ".join("%s-a%s" % (r, a) for r, a, _ in lines)
        labels = " ".join("%s(α=%s%s)" % (r, a, "," + tag if d == 2 else "") for r, a, d in lines)
        ruleof = " ".join(r for r, _, _ in lines)
        dashes = " ".join(str(d) for _, _, d in lines)
        n = len(self.seeds)
        more = any(len(p.seeds) != n for p in pts.values())
        # "3–5 seeds": more seeds where a verdict hinged (the report says where)
        band = ("mean of %s seeds, band: their range" % ("%d–%d" % (n, n + len(self.more)) if more else n)
                if n > 1 else "seed %s" % self.seeds[0])
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
           YLOS=" ".join(ylos), YHIS=" ".join(yhis), TITLE=title.format(band=band))
        if summary:
            with open(os.path.join(plots, "summary-%s.dat" % pfx), "w") as f:
                for r, a, _ in lines:
                    f.write("# %s alpha %s: lambda, mean, smallest, largest final test error\n" % (r, a))
                    for s in sets:
                        v = pts[(s, r, a)].finals
                        f.write("%s %.6f %.6f %.6f\n" % (s.split("x")[1], sum(v) / len(v), min(v), max(v)))
                    f.write("\n\n")
            self.gp("summary.gp", os.path.join(figdir, name + "-summary.png"), plots,
               os.path.join(plots, "gnuplot-%s-summary.log" % name), QUICK=smoke, PREFIX=pfx, RUNS=runs,
               LABELS=labels, RULEOF=ruleof, DASHES=dashes,
               TITLE=summary_title % (
                   "{:,}".format(self.n_fig), "%s seeds: mean and range" % (
                       "%d–%d" % (n, n + len(self.more)) if more else n)
                   if n > 1 else "one seed"))


def read_blocks(path):
    """A bytes-STAT.dat's series (paperreport/fig3.py), each a list of rows
    of words."""
    blocks = []
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines[1:]:
        if line.startswith("#"):
            blocks.append([])
        elif line.strip():
            blocks[-1].append(line.split())
    return blocks


def bytes_labels(plots):
    """Fig. 3 against bytes: each panel's axis ranges and where its point
    labels go (labels.place, so that none covers another, a marker or a
    bar), into bytes-labels-STAT-DIR.dat (x, y, label, alignment). Returns
    the x and the y ranges, two numbers a panel (row by row), as text."""
    W, H = BYTES_SIZE
    ml, mr, mb, mt = BYTES_MARGINS
    sx, sy = BYTES_SPACING
    pw, ph = (mr - ml - sx) / 2, (mt - mb - sy) / 2
    xr, yr = [], []
    data = {st: read_blocks(os.path.join(plots, "bytes-%s.dat" % st)) for st in ("std", "abs")}
    for row, dr in enumerate(("fetch", "push")):
        for col, st in enumerate(("std", "abs")):
            blocks = data[st]
            # the ungated point, the B-FASGD gate's and the every-k gate's
            series = [(blocks[0], "NE"), (blocks[1 + row], "NE"), (blocks[3 + row], "SW")]
            rows = [(r, side) for b, side in series for r in b]
            x0, x1 = nice_range(min(float(r[1]) for r, _ in rows), max(float(r[2]) for r, _ in rows))
            y0, y1 = nice_range(min(float(r[4]) for r, _ in rows), max(float(r[5]) for r, _ in rows), 0.05, 0.08)
            xr += ["%g" % x0, "%g" % x1]
            yr += ["%g" % y0, "%g" % y1]
            left, top = (ml + col * (pw + sx)) * W, (1 - (mt - row * (ph + sy))) * H
            px = lambda x: left + (x - x0) / (x1 - x0) * pw * W  # noqa: E731
            py = lambda y: top + (y1 - y) / (y1 - y0) * ph * H  # noqa: E731
            pts = [{"px": px(float(r[0])), "py": py(float(r[3])), "xbar": (px(float(r[1])), px(float(r[2]))),
                    "ybar": (py(float(r[4])), py(float(r[5]))), "text": r[7], "side": side} for r, side in rows]
            segs = [((px(float(a[0])), py(float(a[3]))), (px(float(b[0])), py(float(b[3]))))
                    for blk, _ in series[1:] for a, b in zip(blk, blk[1:])]
            got, bad = place(pts, (left, top, left + pw * W, top + ph * H), segs)
            if bad:
                print("   fig3-bytes: %d labels of the %s statistic's %s panel overlap (no room)" % (bad, st, dr))
            with open(os.path.join(plots, "bytes-labels-%s-%s.dat" % (st, dr)), "w") as f:
                f.write("# x, y (data), label, alignment\n")
                for (ax, ay, align, _), p in zip(got, pts):
                    f.write("%.6g %.6g %s %s\n" % (x0 + (ax - left) / (pw * W) * (x1 - x0),
                                                    y1 - (ay - top) / (ph * H) * (y1 - y0), p["text"], align))
    return " ".join(xr), " ".join(yr)


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
