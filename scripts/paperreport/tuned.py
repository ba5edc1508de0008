"""The claims of the project's own experiments for the headline of RESULTS,
judged by the report's rule from their kept data: the tuned baselines
(scripts/baselines, experiments/data/baselines/) and the ablation
(scripts/ablation, experiments/data/ablation/). Each script's own analysis
reads its data; this module only turns it into headline rows."""

import importlib.machinery
import importlib.util
import os

from .common import TOP, mean, outcome, setting_label, verdict_of


def script(name):
    """scripts/NAME loaded as a module (it runs nothing when imported)."""
    path = os.path.join(TOP, "scripts", name)
    loader = importlib.machinery.SourceFileLoader("fasgd_" + name.replace("-", "_"), path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def row(claim, outcomes, paired_text):
    return (claim, verdict_of(outcomes), "%d / %d / %d of %d" % (
        outcomes.count("holds"), outcomes.count("within noise"), outcomes.count("reversed"), len(outcomes)),
        paired_text)


def baselines_rows():
    """fasgd (std) against each rule, every rule at its own best α, in
    Fig. 2's λ and in the Fig. 1 setting: a row a claim of
    scripts/baselines that compares tuned rules; [] without its data."""
    b = script("baselines")
    if not os.path.exists(os.path.join(b.KEPT, "finals.csv")):
        return []
    grid = b.Grid(False)
    a = b.analyse(b.KEPT, grid)
    rows = []
    for claim in b.claims(grid):
        title, settings, one, two, group = claim
        if group not in ("fig2", "fig1") or not (one[1] and two[1]):
            continue
        res = b.judge(a, grid, claim)
        oc = [outcome(c) for *_, c in res if c]
        if not oc:
            continue
        k = n = 0
        for s, x, y, common, c in res:
            if c:
                d = [x[i] - y[i] for i in common]
                k += sum(1 for v in d if v < 0)
                n += len(d)
        rows.append(row("Tuned baselines, %s (%s iterations, experiments/baselines.md)" % (
            title, "{:,}".format(grid.n)), oc, "lower: %d of %d" % (k, n)))
    return rows


def ablation_rows():
    """Which part of FASGD carries its gain: FASGD against itself without
    each part (fasgd-norm: no staleness term; sasgd: no normalisation),
    each rule tuned alike; [] without the ablation's data."""
    m = script("ablation")
    if not os.path.exists(os.path.join(m.KEPT, "finals.csv")):
        return []
    grid = m.Grid(False)
    _, _, runs, settings = m.load(m.KEPT, grid)
    diffs = m.differences(runs, grid, settings)
    rows = []
    for a, b, claim in (
            ("fasgd", "fasgd-norm", "Ablation, which part carries FASGD's gain: its staleness term, given its "
             "normalisation (fasgd ends lower than fasgd-norm)"),
            ("fasgd", "sasgd", "Ablation, which part carries FASGD's gain: its normalisation, given its "
             "staleness division (fasgd ends lower than sasgd)")):
        got = [(s, d, c) for s, d, c in diffs.get((a, b), []) if c != "one seed"]
        if not got:
            continue
        oc = [outcome(c) for _, _, c in got]
        d = [x for _, dd, _ in got for x in dd]
        rows.append(row("%s, each rule at its own best α (%s; %s iterations, experiments/ablation.md)" % (
            claim, "; ".join(setting_label(s) for s, _, _ in got), "{:,}".format(grid.n)), oc, "lower: %d of %d (paired %+.4f)" % (
                sum(1 for x in d if x < 0), len(d), mean(d))))
    return rows
