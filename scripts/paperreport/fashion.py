"""Fashion-MNIST at the Fig. 2 settings."""

from .common import WINDOW, compare, setting_label, with_spread


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
        self.w("Fig. 2's settings on Fashion-MNIST (%s): the 60,000 training images, of which the last %s "
               "are a validation split (so %s train), and the final test error on Fashion-MNIST's own "
               "10,000 t10k test images, both every %s server timestamps, so *final* here is the mean of "
               "the evaluations of the last %s timestamps (%d, of 10,000 test images each); %s iterations. "
               "fasgd and sasgd at the "
               "paper's α, dcasgd and gap-aware at their MNIST sweep winners at %s: no α is tuned on "
               "Fashion-MNIST, so the validation split picks nothing here. "
               "![Fashion-MNIST](figures/fashion.png)" % (
                   g["fashion.dir"][0], "{:,}".format(n), "{:,}".format(60000 - n),
                   g["fashion.eval_every"][0], "{:,}".format(WINDOW), WINDOW // int(g["fashion.eval_every"][0]),
                   "{:,}".format(self.n_fig), setting_label(g["lr.settings"][1])))
        self.w()
        runs = self.fig_tables("fashion", g["fashion.settings"], g["fashion.rules"], g["lr.settings"][1],
                               both=False)
        n0 = len(self.claims)
        self.fig2_claim(runs, g["fashion.settings"], "fasgd", "fasgd (std)", "Fashion-MNIST")
        if len(self.claims) > n0:
            self.fashion_text = self.claims.pop()
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
                self.fashion_text += " dcasgd and gap-aware: " + "; ".join(others) + "."
