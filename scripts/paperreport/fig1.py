"""Fig. 1: the rules on MNIST at the paper's settings."""

from .common import compare, counts, setting_label, with_spread


class Fig1:
    """Fig. 1: the rules on MNIST at the paper's settings."""

    def fig1(self):
        g = self.grid
        self.w("## Fig. 1: four (μ, λ) settings")
        self.w()
        self.w("fasgd with the std statistic (the paper's text) and the abs statistic (the paper's "
               "code), each at the paper's α = %s and at its own sweep winner; sasgd (α = %s, α/τ) "
               "as in the paper; dcasgd and gap-aware at their sweep winners. "
               "![Fig. 1](figures/fig1.png)" % (g["alpha.fasgd"][0], g["alpha.sasgd"][0]))
        self.w()
        runs = self.fig_tables("fig1", g["fig1.settings"], g["fig1.rules"], g["lr.settings"][0])
        for key, what in (("fasgd", "fasgd (std)"), ("fasgd-abs", "fasgd (abs, the paper's code)")):
            outcomes, details, k, total = self.faster_lower(runs, g["fig1.settings"], key, "sasgd")
            if not outcomes:
                continue
            unstable = []
            for s in g["fig1.settings"]:
                for k2, pt in runs[s].items():
                    if not pt:
                        continue
                    for sd, run in zip(pt.seeds, pt.runs):
                        nll = [row["val_nll"] for row in run.rows]
                        if nll[-1] > 3 * min(nll):
                            unstable.append("%s at %s, seed %s (validation NLL %.2f at its lowest, %.2f "
                                            "at the end)" % (k2, setting_label(s), sd, min(nll), nll[-1]))
            claim = "Fig. 1: %s converges faster and lower than sasgd in all four settings (α = %s)" % (
                what, g["alpha." + key][0])
            v = self.judged(claim, outcomes, "lower at a tenth and at the end: %d of %d" % (k, total))
            text = ("**%s: %s** (%s, where holds is lower error both at a tenth of the run and at the "
                    "end beyond the seeds' spread, and reversed is higher at either; %s vs sasgd: %s)." % (
                        claim, v, counts(outcomes), what, "; ".join(details)))
            if key == "fasgd" and unstable:
                text += " Unstable runs: " + "; ".join(unstable) + "."
            self.claims.append(text)
        others = []
        for s in g["fig1.settings"]:
            f = runs[s].get("fasgd")
            if not f:
                continue
            better = [k for k in runs[s] if k not in ("fasgd", "sasgd") and runs[s][k]
                      and compare(runs[s][k].finals, f.finals) == "lower"]
            if better:
                others.append("%s: %s" % (setting_label(s), ", ".join(
                    "%s %s" % (k.replace("@sweep", " at its sweep α"), with_spread(runs[s][k].finals))
                    for k in better)))
        if others:
            self.claims.append("Fig. 1, beyond the paper's comparison: points that end lower than "
                               "fasgd std at the paper's α beyond the seeds' spread: %s." % "; ".join(others))
