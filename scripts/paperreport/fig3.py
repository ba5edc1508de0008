"""Fig. 3: B-FASGD, the fetch and push gates."""

import math
import os

from .common import (LITTLE, compare, counts, mean, outcome, paired, setting_label, spread, table,
                     verdict_of, with_spread)


class Fig3:
    """Fig. 3: B-FASGD, the fetch and push gates."""

    def fig3(self):
        g = self.grid
        s = g["fig3.setting"][0]
        self.w("## Fig. 3: B-FASGD, bandwidth vs test error")
        self.w()
        (a, pstd), (aa, pabs) = self.fig3_prefix("std"), self.fig3_prefix("abs")
        pfx = {"std": pstd, "abs": pabs}
        self.w("fasgd at %s, %s iterations (the paper ran 10^6). The setting "
               "is the middle of Fig. 1: enough clients (32) for staleness to matter, and cheap "
               "enough (μ = 4) for many runs. Each statistic runs "
               "at its own sweep winner on this setting, std α = %s (ε = %s, so v̄ ≥ sqrt(ε) = "
               "%.3g) and abs α = %s (v̄ = mean m has no floor; the gate adds ε_g = 1e-4)%s. Fetch gate "
               "swept with every push transmitted (`gates.fetch.gate=bfasgd`); push gate swept "
               "with every fetch made (`gates.push.gate=bfasgd`, `gates.push.skip=resend-last`: "
               "a skipped push makes the server re-apply that client's previous gradient). "
               "c = 0 is the ungated run. Baselines (each statistic): DistBelief's fixed every-k gates. "
               "*reduction* is potential / actual copies at the end of the run; *cost* is the "
               "final error minus the c = 0 run's; *late/early* is the transmit rate over the "
               "last 20%% of the opportunities divided by the rate over the first 20%% (below 1: "
               "a concave curve, fewer transmissions later in training)." % (
                   setting_label(s), "{:,}".format(self.n_fig), a, self.base_epsilon(),
                   math.sqrt(float(self.base_epsilon())), aa, self.fig3_why(s)))
        self.w()
        n = self.n_fig
        pt = lambda name: self.res.point(name, n, self.seeds)  # noqa: E731
        for st in ("std", "abs"):
            b = pt(pfx[st] + "-c0")
            if b:
                tail = b.runs[0].window()
                m = sum(tail) / len(tail)
                sd = math.sqrt(sum((x - m) ** 2 for x in tail) / max(len(tail) - 1, 1))
                self.w("For scale, the ungated %s run's final error over the seeds: %s; seed %s's "
                       "test error over its last %d evaluations: %.4f ± %.4f (standard "
                       "deviation). A cost is each seed's final error minus the ungated run's of "
                       "the same seed; its cell gives their mean and range." % (
                           st, with_spread(b.finals), self.seeds[0], len(tail), m, sd))
                self.w()
        self.w("![Fig. 3, std](figures/fig3-std.png) ![Fig. 3, abs](figures/fig3-abs.png)")
        self.w()
        result = {}
        for st in ("std", "abs"):
            base = pt(pfx[st] + "-c0")
            if base:
                self.write_band(base)
            sweeps = [("fetch", "fetches", [("c", c, pt("%s-cfetch%s" % (pfx[st], c)))
                                            for c in g["fig3.cfetch." + st]]),
                      ("push", "pushes", [("c", c, pt("%s-cpush%s" % (pfx[st], c)))
                                          for c in g["fig3.cpush." + st]])]
            sweeps[0][2].extend(("k", k, pt("%s-kfetch%s" % (pfx[st], k))) for k in g["fig3.kfetch"])
            sweeps[1][2].extend(("k", k, pt("%s-kpush%s" % (pfx[st], k))) for k in g["fig3.kpush"])
            for what, kind, runs in sweeps:
                self.w("**%s statistic, %s gate**" % (st, what))
                self.w()
                rows = []
                if base:
                    rows.append(["c = 0 (ungated)", "1.00×", with_spread(base.finals), with_spread(base.bests),
                                 "—", "—"])
                for lab, v, run in runs:
                    name = ("c = %s" % v) if lab == "c" else ("every k = %s" % v)
                    if run is None:
                        rows.append([name, "missing", "", "", "", ""])
                        continue
                    self.write_band(run)
                    red = run.reduction(kind)
                    early, late = run.rate(kind, 0.0, 0.2), run.rate(kind, 0.8, 1.0)
                    costs = [a - b for a, b in zip(run.finals, base.finals)] if base else None
                    rows.append([name, "%.2f×" % red, with_spread(run.finals), with_spread(run.bests),
                                 "%+.4f%s" % (mean(costs), spread(costs)) if costs else "—",
                                 "%.2f" % (late / early) if early > 0 else "—"])
                    result[(st, what, lab, v)] = (red, costs, late / early if early > 0 else None, run, kind)
                self.w(table(["gate", "reduction", "final", "best", "cost", "late/early"], rows))
                self.w()
        # What the tables above said, for the long runs' report
        # (paperreport/long.py): the ungated point of each statistic, and
        # each gate's (reduction, costs, late/early, point, kind).
        self.fig3_base = {st: pt(pfx[st] + "-c0") for st in ("std", "abs")}
        self.fig3_alpha = {"std": a, "abs": aa}
        self.fig3_result = result
        self.fig3_bytes(pfx, pt)
        self.fig3_claims(result)

    def fig3_prefix(self, st):
        """(α, the name its runs begin with) of statistic st ("std",
        "abs") in Fig. 3: its sweep winner on fig3.setting, and
        fig3-ST-aα (then -c0, -cfetchC, -kpushK, ... and -sSEED)."""
        a = self.pick("fasgd" if st == "std" else "fasgd-abs", self.grid["fig3.setting"][0])
        return a, "fig3-%s-a%s" % (st, a)

    @staticmethod
    def concave(point, kind):
        """A gated point's late/early transmit rates of kind, a seed each
        (of the seeds whose first fifth sent something), and its outcome:
        holds below 0.95 at every seed, reversed at or above 1 at every
        seed, else within noise (None without a rate)."""
        r = [x for x in (run.late_early(kind) for run in point.runs) if x is not None]
        return r, (None if not r else "holds" if max(r) < 0.95 else "reversed" if min(r) >= 1 else "within noise")

    def fig3_bytes(self, pfx, pt):
        """Fig. 3's cost against the bytes it saves: each gate's final test
        error against the total bytes moved (copies of θ fetched plus
        gradients pushed, headers included), over the seeds; a table a
        statistic and fig3-bytes.png (its points in bytes-STAT.dat)."""
        g = self.grid
        self.w("**Error against bytes moved.** The same runs with the cost in bytes: *bytes* is every byte "
               "the run moved in both directions (copies of θ fetched and gradients pushed, headers included; "
               "the simulator's count at the last iteration), in GB, as the seeds' mean (smallest–largest); "
               "*cut* is the ungated run's bytes over the gate's (seed by seed, then the mean). A gate on "
               "one direction leaves the other whole, so it can at most halve the bytes. "
               "![Fig. 3, error against bytes](figures/fig3-bytes.png)")
        self.w()
        cuts = []
        for st in ("std", "abs"):
            base = pt(pfx[st] + "-c0")
            # (series, gate key for its colour, label, point)
            pts = [(0, "c0", "c = 0", base)]
            for series, what, cs in ((1, "cfetch", g["fig3.cfetch." + st]), (2, "cpush", g["fig3.cpush." + st])):
                pts += [(series, "c%d" % (i + 1), "c = %s" % c, pt("%s-%s%s" % (pfx[st], what, c)))
                        for i, c in enumerate(cs)]
            for series, what, ks in ((3, "kfetch", g["fig3.kfetch"]), (4, "kpush", g["fig3.kpush"])):
                pts += [(series, "k%s" % k, "k = %s" % k, pt("%s-%s%s" % (pfx[st], what, k))) for k in ks]
            if base is None or any(p is None for *_, p in pts):
                continue
            gb = lambda p: [r.last["bytes"] / 1e9 for r in p.runs]  # noqa: E731
            b0 = gb(base)
            what = {0: "ungated", 1: "B-FASGD fetch gate", 2: "B-FASGD push gate", 3: "every-k fetch gate",
                    4: "every-k push gate"}
            rows = []
            for series, key, lab, p in sorted(pts, key=lambda x: -mean(gb(x[3]))):
                cut = mean([a / b for a, b in zip(b0, gb(p))])
                cost = [a - b for a, b in zip(p.finals, base.finals)]
                cuts.append((cut, st, what[series], lab))
                v = gb(p)
                rows.append([what[series], "—" if series == 0 else lab,
                             "%.3f" % mean(v) + ("" if len(v) < 2 else " (%.3f–%.3f)" % (min(v), max(v))),
                             "%.2f×" % cut, with_spread(p.finals),
                             "—" if series == 0 else "%+.4f%s" % (mean(cost), spread(cost))])
            self.w("%s statistic:" % st)
            self.w()
            self.w(table(["gate", "c or k", "bytes (GB)", "cut", "final test error", "cost"], rows,
                         ["---", "---", "---:", "---:", "---:", "---:"]))
            self.w()
            # The figure's points: a block a series (gnuplot's index), each
            # row x mean min max, y mean min max, gate key, label.
            with open(os.path.join(self.args.plots, "bytes-%s.dat" % st), "w") as f:
                f.write("# bytes moved (GB) mean min max, final test error mean min max, gate, label; "
                        "seeds %s\n" % " ".join(self.seeds))
                for series in range(5):
                    f.write("# %s\n" % what[series])
                    for _, key, lab, p in sorted([x for x in pts if x[0] == series], key=lambda x: mean(gb(x[3]))):
                        v = gb(p)
                        f.write("%.4f %.4f %.4f %.6f %.6f %.6f %s %s\n" % (
                            mean(v), min(v), max(v), mean(p.finals), min(p.finals), max(p.finals), key,
                            lab.replace(" ", "")))
                    f.write("\n\n")
            self.bytes_points[st] = len(pts)
        if cuts:
            top = max(cuts)
            self.w("The largest cut: %.2f× (%s, %s %s)." % top)
            self.w()

    def fig3_why(self, s):
        f1 = self.res.get("fig1-%s-fasgd-a%s-s%s" % (s, self.grid["alpha.fasgd"][0], self.seeds[0]), self.n_fig)
        if not f1:
            return ""
        nll = [row["val_nll"] for row in f1.rows]
        if nll[-1] > 3 * min(nll):
            return (": at the paper's α = %s fasgd std is unstable here (Fig. 1, seed %s: validation "
                    "NLL %.2f at its lowest, %.2f at the end), which would drown the gates' cost in "
                    "the rule's own jitter" % (self.grid["alpha.fasgd"][0], self.seeds[0], min(nll), nll[-1]))
        return ""

    def fig3_claims(self, res):
        if not res:
            return
        # 1. c_fetch: 10x fewer fetches with little loss. A statistic holds it
        # when its gate nearest 10x (at least 8x) costs at most LITTLE at
        # every seed, reverses it when every seed's cost is above LITTLE.
        parts, outcomes = [], []
        k = total = 0
        for st in ("std", "abs"):
            fe = [(v[0], v[1], c) for (s, w, lab, c), v in res.items() if s == st and w == "fetch" and lab == "c"
                  and v[1] is not None]
            if not fe:
                continue
            fe.sort(key=lambda x: x[0])
            big = [x for x in fe if x[0] >= 8]
            top = big[0] if big else fe[-1]
            if top[0] < 8:
                o = "within noise"
            elif max(top[1]) <= LITTLE:
                o = "holds"
            elif min(top[1]) > LITTLE:
                o = "reversed"
            else:
                o = "within noise"
            outcomes.append(o)
            k += sum(1 for x in top[1] if x <= LITTLE)
            total += len(top[1])
            parts.append("%s: c = %s cuts fetches %.1f× at a cost of %+.4f%s, paired by seed against the "
                         "ungated run, at most %.2f at %d of %d seeds (%s)" % (
                             st, top[2], top[0], mean(top[1]), spread(top[1]), LITTLE,
                             sum(1 for x in top[1] if x <= LITTLE), len(top[1]),
                             {"holds": "holds", "reversed": "reversed: every seed's cost above %.2f" % LITTLE,
                              "within noise": "within noise"}[o]))
        if outcomes:
            claim = ("Fig. 3: sweeping c_fetch cuts fetches 10× with little loss (≤ %.2f test error "
                     "at every seed)" % LITTLE)
            v = self.judged(claim, outcomes, "cost ≤ %.2f: %d of %d" % (LITTLE, k, total))
            self.claims.append("**%s: %s** (%s, a statistic a setting; %s)." % (
                claim, v, counts(outcomes), "; ".join(parts)))
        # 2. cutting pushes hurts quickly (compared with cutting fetches by the same gate).
        parts, outcomes = [], []
        k = total = 0
        for st in ("std", "abs"):
            mine = []
            pairs = []
            for (s2, w, lab, c), v in sorted(res.items(), key=lambda kv: (kv[0][2], float(kv[0][3]))):
                if s2 != st or w != "push" or v[1] is None:
                    continue
                f = res.get((st, "fetch", lab, c))
                if not f or f[1] is None:
                    continue
                mine.append(outcome(compare(v[1], f[1]), "higher"))
                d, ptext = paired(v[1], f[1], "higher")
                k += sum(1 for x in d if x > 0)
                total += len(d)
                pairs.append("%s=%s: pushes %.1f× %+.4f%s vs fetches %.1f× %+.4f%s (%s)" % (
                    lab, c, v[0], mean(v[1]), spread(v[1]), f[0], mean(f[1]), spread(f[1]), ptext))
            if not mine:
                continue
            outcomes += mine
            parts.append("%s: %s (%s): %s" % (st, verdict_of(mine), counts(mine), "; ".join(pairs)))
        if outcomes:
            claim = "Fig. 3: cutting pushes hurts quickly (more than cutting fetches as much)"
            v = self.judged(claim, outcomes, "push cost higher: %d of %d" % (k, total))
            self.claims.append("**%s: %s** (%s, a gate a setting, push cost above fetch cost beyond the "
                               "seeds' spread; cost = final error minus the ungated run's. %s)." % (
                                   claim, v, counts(outcomes), ". ".join(parts)))
        # 2b. B-FASGD against DistBelief's every-k at matched reduction.
        parts, outcomes = [], []
        k = total = 0
        for st, w in [(st, w) for st in ("std", "abs") for w in ("fetch", "push")]:
            ks = [(v[0], v[1], k2) for (s2, ww, lab, k2), v in res.items() if s2 == st and ww == w and lab == "k"]
            cs = [(v[0], v[1], c) for (s2, ww, lab, c), v in res.items() if s2 == st and ww == w and lab == "c"]
            for kr, kc, k2 in sorted(ks, key=lambda x: x[0]):
                if not cs or kc is None:
                    continue
                cr, cc, c = min(cs, key=lambda x: abs(math.log(x[0] / kr)))
                if cc is None:
                    continue
                outcomes.append(outcome(compare(cc, kc)))
                d, ptext = paired(cc, kc)
                k += sum(1 for x in d if x < 0)
                total += len(d)
                parts.append("%s %s: every %s (%.1f×) %+.4f%s vs c=%s (%.1f×) %+.4f%s (%s)" % (
                    st, w, k2, kr, mean(kc), spread(kc), c, cr, mean(cc), spread(cc), ptext))
        if outcomes:
            claim = ("Fig. 3, beyond the paper: B-FASGD costs less than DistBelief's fixed every-k gate at "
                     "about the same reduction (each statistic)")
            v = self.judged(claim, outcomes, "B-FASGD cheaper: %d of %d" % (k, total))
            self.claims.append("**%s: %s** (%s, a pair a setting: %s)." % (claim, v, counts(outcomes),
                                                                           "; ".join(parts)))
        # 3. concave actual-vs-potential curves: late/early below 0.95 at every
        # seed holds, at or above 1 at every seed (convex) reverses.
        parts, outcomes = [], []
        k = total = 0
        for st in ("std", "abs"):
            # over the more seeds too where they are kept (paperreport/hinging.py)
            judged = [self.concave(self.res.point(v[3].name, self.n_fig, self.seeds, self.more), v[4])
                      for (s, _, lab, _), v in res.items() if s == st and lab == "c" and v[2] is not None]
            judged = [j for j in judged if j[0]]
            ratios, mine = [r for r, _ in judged], [o for _, o in judged]
            if not ratios:
                continue
            outcomes += mine
            every = [x for r in ratios for x in r]
            k += sum(1 for x in every if x < 0.95)
            total += len(every)
            parts.append("%s: late/early transmit rate %.2f–%.2f over its %d gated runs and their seeds "
                         "(%d of %d runs below 0.95 at every seed)" % (
                             st, min(every), max(every), len(ratios), mine.count("holds"), len(ratios)))
        if outcomes:
            claim = "Fig. 3: the actual-vs-potential copy curves are concave (fewer transmissions later in training)"
            v = self.judged(claim, outcomes, "late/early below 0.95: %d of %d runs" % (k, total))
            self.claims.append("**%s: %s** (%s, a gated run a setting; %s; an every-k gate is a "
                               "straight line by construction)." % (claim, v, counts(outcomes), "; ".join(parts)))
