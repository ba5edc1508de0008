"""Which points want the grid's more_seeds: both sides of a claim's
comparison at each setting where its verdict hinges on the first seeds'
overlapping ranges (common.hinging), or the point itself where the claim
judges one point (Fig. 3's concave copy curves), as scripts/paper-report
--hinging prints them (their runs' names without -sSEED) for
scripts/paper to run."""

from .common import compare, hinging, run_name


class Hinging:
    """The points of Fig. 1, Fig. 2, Fig. 3 and Fashion-MNIST whose claims hinge."""

    def first(self, fig, setting, rule, alpha):
        """A point over the first seeds alone (what decides whether more
        are wanted); None while one is missing."""
        return self.res.point(run_name(fig, setting, rule, alpha), self.n_fig, self.seeds)

    def hinging_points(self):
        """[point name] in the order scripts/paper runs them, each once. A
        comparison not yet complete on the first seeds asks for none."""
        g = self.grid
        out = []
        paper = {r: g["alpha." + r][0] for r in ("fasgd", "fasgd-abs", "sasgd")}
        # Fig. 1: fasgd (std, abs) at the paper's α converges faster and
        # lower than sasgd (Report.fl_outcome, as faster_lower judges it)
        for key in ("fasgd", "fasgd-abs"):
            if key in g["fig1.rules"]:
                out += self.hinging_of("fig1", g["fig1.settings"], {key: paper[key], "sasgd": paper["sasgd"]},
                                       key, self.fl_outcome)
        # Fig. 2: fasgd (std, abs) at the paper's α ends lower than sasgd
        for key in ("fasgd", "fasgd-abs"):
            if key in g["fig2.rules"]:
                out += self.hinging_of("fig2", g["fig2.settings"], {key: paper[key], "sasgd": paper["sasgd"]},
                                       key, lambda a, b: compare(a.finals, b.finals))
        # Fashion-MNIST: fasgd (std) against sasgd at the paper's protocol,
        # and each at its pick once the sweep has picked
        sw2 = g["lr.settings"][1]
        picks = self.fashion_picks()
        sides = [{r: self.alpha(r, sw2) for r in ("fasgd", "sasgd")}]
        if picks["fasgd"] and picks["sasgd"]:
            sides.append({r: picks[r] for r in ("fasgd", "sasgd")})
        for alphas in sides:
            out += self.hinging_of("fashion", g["fashion.settings"], alphas, "fasgd",
                                   lambda a, b: compare(a.finals, b.finals))
        # Fig. 3: each B-FASGD gate's copy curve is concave (Fig3.concave),
        # over the gated runs kept
        gated = []
        for st in ("std", "abs"):
            a, pfx = self.fig3_prefix(st)
            for what, kind in (("fetch", "fetches"), ("push", "pushes")):
                for c in g["fig3.c%s.%s" % (what, st)] if a is not None else []:
                    name = "%s-c%s%s" % (pfx, what, c)
                    pt = self.res.point(name, self.n_fig, self.seeds)
                    o = self.concave(pt, kind)[1] if pt else None
                    if o:
                        gated.append((name, {"holds": "lower", "reversed": "higher"}.get(o, o)))
        out += hinging(gated)
        seen = []
        return [p for p in out if not (p in seen or seen.append(p))]

    def hinging_of(self, fig, settings, alphas, a_key, judge):
        """One comparison's points that want more seeds: alphas {rule: α}
        of its two sides, a_key the side claimed lower, judge(a, b) its
        outcome in a setting ("lower", "higher" or "within noise")."""
        pts = {s: {r: self.first(fig, s, r, a) for r, a in alphas.items()} for s in settings}
        if any(p is None for ps in pts.values() for p in ps.values()):
            return []
        b_key = [r for r in alphas if r != a_key][0]
        compares = [(s, judge(ps[a_key], ps[b_key])) for s, ps in pts.items()]
        return [run_name(fig, s, r, a) for s in hinging(compares) for r, a in alphas.items()]
