"""Fashion-MNIST at the Fig. 2 settings: the paper's protocol, and each rule
at its own pick from a learning-rate sweep on Fashion-MNIST's validation
split."""

from .common import WINDOW, compare, setting_label, sweep_done, sweep_iterations, sweep_settings, table, with_spread


class Fashion:
    """Fashion-MNIST at the Fig. 2 settings."""

    def fashion(self):
        g = self.grid
        self.w("## Fashion-MNIST, full size")
        self.w()
        if not any(n.startswith("fashion-") for n in self.res.prov) and self.res.prov:
            self.w("In the grid (`scripts/paper --only fashion`, Fig. 2's settings on all 60,000 "
                   "Fashion-MNIST training images), not run for this report: see Scope.")
            self.w()
            return
        n = int(g["fashion.holdout"][0])
        rules, settings, sw2 = g["fashion.rules"], g["fashion.settings"], g["lr.settings"][1]
        ss = sweep_settings(g, "fashion")
        what = ("Fig. 2's settings on Fashion-MNIST (%s): the 60,000 training images, of which the last %s "
                "are a validation split (so %s train), and the final test error on Fashion-MNIST's own "
                "10,000 t10k test images, both every %s server timestamps, so *final* here is the mean of "
                "the evaluations of the last %s timestamps (%d, of 10,000 test images each); %s iterations. " % (
                    g["fashion.dir"][0], "{:,}".format(n), "{:,}".format(60000 - n),
                    g["fashion.eval_every"][0], "{:,}".format(WINDOW), WINDOW // int(g["fashion.eval_every"][0]),
                    "{:,}".format(self.n_fig)))
        if not ss:
            self.w(what + "fasgd and sasgd at the "
                   "paper's α, dcasgd and gap-aware at their MNIST sweep winners at %s: no α is tuned on "
                   "Fashion-MNIST, so the validation split picks nothing here. "
                   "![Fashion-MNIST](figures/fashion.png)" % setting_label(sw2))
            self.w()
        else:
            self.w(what + "Two comparisons, side by side as in Fig. 2: the paper's protocol (fasgd and sasgd "
                   "at the paper's α, dcasgd and gap-aware at their MNIST sweep winners at %s), and each rule "
                   "at its own α from a learning-rate sweep on Fashion-MNIST's validation split (%s, seed 1, "
                   "%s iterations, each rule over the candidates of its MNIST sweep, picked as the MNIST "
                   "sweep picks: the lowest final validation error). The validation split picks; the test "
                   "images, which picked nothing, judge. ![Fashion-MNIST](figures/fashion.png) (solid: the "
                   "paper's protocol; dashed: a rule at its Fashion-MNIST pick, where that differs). Final test "
                   "error against λ, each point the seeds' mean and its bar their range: "
                   "![Fashion-MNIST summary](figures/fashion-summary.png)" % (
                       setting_label(sw2), " and ".join(setting_label(s) for s in ss),
                       "{:,}".format(sweep_iterations(g, "fashion") // self.scale)))
            self.w()
        picks = self.fashion_picks()
        if ss:
            self.w("**Learning-rate sweep on the validation split** (%s iterations, seed 1; cells: final / "
                   "best validation error; each rule's pick, the lowest final, in bold):" % "{:,}".format(
                       sweep_iterations(g, "fashion") // self.scale))
            self.w()
            if sweep_done(self.fvres, g, "fashion"):
                win = {}
                for s in ss:
                    if len(ss) > 1:
                        self.w("**%s**" % setting_label(s))
                        self.w()
                    w, _ = self.sweep_table(s, rules, "fashion")
                    win = win or w
                self.w("Picks%s: %s%s." % (
                    " (on %s)" % setting_label(ss[0]) if len(ss) > 1 else "",
                    "; ".join("%s α = %s (the paper's protocol: %s%s)" % (
                        r, win[r], self.alpha(r, sw2),
                        "" if self.alpha(r, sw2) in g["lr.grid." + r] else ", not a candidate") for r in rules),
                    " (`--quick` runs the paper's protocol only)" if self.args.quick else ""))
            else:
                self.w("Not complete in this run (`scripts/paper --only fashion-lr`): the paper's protocol only.")
            self.w()
        if ss:
            self.w("**The paper's protocol**")
            self.w()
        runs = self.fig_tables("fashion", settings, rules, sw2, both=False)
        self.fashion_claim(runs, "Fashion-MNIST")
        if not all(picks.values()):
            return
        self.w("**Each rule at its Fashion-MNIST pick** (%s)" % self.picks_text())
        self.w()
        truns = self.fig_tables("fashion", settings, rules, sw2, both=False, alphas_of=lambda r: [picks[r]])
        self.w("Side by side: each rule at its pick against itself at the paper's protocol (final test error, "
               "the seeds' mean, protocol → pick; lower or higher where the pick's seeds are all beyond the "
               "protocol's, else within noise; then the seeds at which the pick ends lower, paired by seed):")
        self.w()
        rows = []
        for s in settings:
            row = [setting_label(s)]
            for r in rules:
                p, t = runs[s].get(r), truns[s].get(r)
                if not (p and t):
                    row.append("missing")
                elif p is t or p.name == t.name:
                    row.append("the same runs")
                else:
                    # paired by seed over the seeds both have
                    row.append("%.4f → %.4f (%s; %d of %d)" % (
                        p.final, t.final, compare(t.finals, p.finals),
                        sum(1 for x, y in zip(t.finals, p.finals) if x < y), min(len(t.finals), len(p.finals))))
            rows.append(row)
        self.w(table(["setting"] + ["%s: α %s → %s" % (r, self.alpha(r, sw2), picks[r]) for r in rules], rows))
        self.w()
        self.fashion_claim(truns, "Fashion-MNIST, each rule at its own best α (picked on its validation split)")

    def fashion_claim(self, runs, where):
        """Fig. 2's claim in one Fashion-MNIST comparison, judged by the
        written rule (its row joins the headline), and where dcasgd and
        gap-aware end against fasgd: a line of the paper's claims."""
        g = self.grid
        n0 = len(self.claims)
        self.fig2_claim(runs, g["fashion.settings"], "fasgd", "fasgd (std)", where)
        if len(self.claims) == n0:
            return
        text = self.claims.pop()
        others = []
        for s in g["fashion.settings"]:
            f = runs[s].get("fasgd")
            for r in g["fashion.rules"]:
                o = runs[s].get(r)
                if r in ("fasgd", "sasgd") or not (f and o):
                    continue
                c = compare(o.finals, f.finals)
                others.append("λ=%s %s %s (%s fasgd)" % (s.split("x")[1], r, with_spread(o.finals),
                                                         c + " of" if c == "within noise" else c + " than"))
        if others:
            text += " dcasgd and gap-aware: " + "; ".join(others) + "."
        self.fashion_text.append(text)
