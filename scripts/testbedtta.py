"""The test bed's part of experiments/time-to-accuracy.md: the runs that
scripts/time-to-accuracy-testbed keeps in
experiments/data/time-to-accuracy-testbed/ (the real daemons on a shaped
link), each beside the simulated runs of the same gate and bandwidth."""

import csv
import gzip
import os

from paperreport.common import TOP, table
from paperreport.tta import SMOOTH, gate_label, mbit, med_range, median, reach, secs

TESTBED = os.path.join(TOP, "experiments", "data", "time-to-accuracy-testbed")


def read_measured(path):
    with gzip.open(path, "rt") as f:
        r = csv.reader(f)
        header = next(r)
        return [{k: float(v) for k, v in zip(header, row)} for row in r if len(row) == len(header)]


def load_measured(kept):
    """(runs.csv's rows, {(gate, bandwidth, run): curve}); curves keyed as
    the simulator's, with sim_time the wall time and iteration T."""
    with open(os.path.join(kept, "runs.csv")) as f:
        runs = list(csv.DictReader(f))
    curves = {}
    for x in runs:
        rows = read_measured(os.path.join(kept, x["file"]))
        for r in rows:
            r["sim_time"], r["iteration"] = r["wall_s"], r["timestamp"]
            r["bytes"] = r["bytes_in"] + r["bytes_out"]
        curves[(x["gate"], x["bandwidth"], x["run"])] = rows
    return runs, curves


def reach_at(rows, target):
    """(seconds, T) at the report's rule (mean of the last SMOOTH test
    errors at or below target), or None."""
    got = reach(rows, target)
    if got is None:
        return None
    r = next(r for r in rows[SMOOTH - 1:] if r["sim_time"] == got[0])
    return got[0], r["iteration"]


def pace(rows, upto):
    """Seconds per 1,000 timestamps from T = 100 (after the start-up) to
    upto: the clock alone."""
    a = next((r for r in rows if r["iteration"] >= 100), None)
    b = [r for r in rows if r["iteration"] <= upto]
    if a is None or not b or b[-1]["iteration"] <= a["iteration"]:
        return None
    return (b[-1]["sim_time"] - a["sim_time"]) / (b[-1]["iteration"] - a["iteration"]) * 1000


def mean_tau(rows, upto):
    """The mean staleness of the gradients applied up to T = upto (the
    evaluations' intervals alike)."""
    v = [r["mean_tau"] for r in rows[1:] if r["iteration"] <= upto]
    return sum(v) / len(v) if v else None


def section(kept, sim_curves, grid):
    """The section's lines, or [] without kept test-bed runs."""
    if not kept or not os.path.exists(os.path.join(kept, "runs.csv")):
        return []
    runs, curves = load_measured(kept)
    if not runs:
        return []
    target = float(grid["tta.testbed.target"][0])
    gates = [g for g in grid["tta.testbed.gates"] if any(k[0] == g for k in curves)]
    bws = sorted({k[1] for k in curves}, key=float)
    overhead = float(grid["tta.testbed.overhead"][0])
    out = []
    w = out.append
    w("## On the test bed: %s measured" % ("two settings" if len(gates) * len(bws) == 2 else "settings"))
    w("")
    cmds = sorted({x["command"] for x in runs})
    w("The simulator's clock checked against the real daemons, with `scripts/time-to-accuracy-testbed` "
      "(`scripts/testbed`, fasgd-testbed(1)): fasgd-server and %s fasgd-clients, each in a network namespace "
      "of its own, the server's link shaped both ways with tc tbf to %s × %s = %.2f Mbit/s, which carries "
      "the simulator's bytes/s of message bytes (tbf also charges the TCP/IP headers: %s link bytes per "
      "message byte, as experiments/testbed.md measured). Each client sleeps %s s after a gradient "
      "(`--delay-ms`), as the simulator's clients compute; the rest is the simulated runs' setting, with the "
      "server's guard off (`guard.enabled: false`: the simulator has none, and its probation would drop each "
      "client's first 16 pushes). Target: test error %s, looser than the tables' because %s, too long to "
      "repeat on a shared machine; reached by the same rule (the mean of the last %d test errors, evaluations every 100 timestamps). A run "
      "is stopped once it gets there. Measured time: from the clients' start (their processes launched) to "
      "the moment the server's timestamp reached the evaluation's, read from `fasgd-ctl status` once a second "
      "and interpolated; it includes the clients loading their data and joining, which the simulator does "
      "not have. Runs alternate between the settings. Commands (one per run, the run's number the seed):" % (
          _clients(cmds), mbit(bws[0]) if len(bws) == 1 else "the bandwidth", overhead,
          float(bws[0]) * 8 * overhead / 1e6, overhead, grid["tta.compute_time"][0], target,
          _slowest(sim_curves, gates, bws, float(grid["tta.target2"][0])), SMOOTH))
    w("")
    for c in cmds:
        w("    " + c)
    w("")
    rows = []
    meas = {}
    for b in bws:
        for g in gates:
            sim = [sim_curves[k] for k in sorted(sim_curves) if k[0] == g and k[1] == b]
            mc = [curves[k] for k in sorted(curves, key=lambda k: int(k[2])) if k[0] == g and k[1] == b]
            s_hit = [reach_at(c, target) for c in sim]
            m_hit = [reach_at(c, target) for c in mc]
            s_t = [x[0] for x in s_hit if x]
            m_t = [x[0] for x in m_hit if x]
            meas[(g, b)] = (s_t, m_t, s_hit, m_hit)
            s_p = [p for p in (pace(c, x[1]) for c, x in zip(sim, s_hit) if x) if p]
            m_p = [p for p in (pace(c, x[1]) for c, x in zip(mc, m_hit) if x) if p]
            s_tau = [v for v in (mean_tau(c, x[1]) for c, x in zip(sim, s_hit) if x) if v is not None]
            m_tau = [v for v in (mean_tau(c, x[1]) for c, x in zip(mc, m_hit) if x) if v is not None]

            def cell(t, hits):
                if not hits:
                    return "not run"
                if len(t) < len(hits):
                    return "— (%d of %d)" % (len(t), len(hits))
                return med_range(t)
            ratio = "%.2f" % (median(m_t) / median(s_t)) if s_t and m_t and len(s_t) == len(s_hit) \
                and len(m_t) == len(m_hit) else "—"
            rows.append([gate_label(g), mbit(b), "%s (%d)" % (cell(s_t, s_hit), len(s_hit)),
                         "%s (%d)" % (cell(m_t, m_hit), len(m_hit)), ratio,
                         med_range([x[1] for x in s_hit if x], lambda v: "{:,.0f}".format(v)) if s_t else "—",
                         med_range([x[1] for x in m_hit if x], lambda v: "{:,.0f}".format(v)) if m_t else "—",
                         med_range(s_p, secs) if s_p else "—", med_range(m_p, secs) if m_p else "—",
                         "%s / %s" % ("%.1f" % median(s_tau) if s_tau else "—", "%.1f" % median(m_tau) if m_tau else "—")])
    w(table(["gate", "link", "simulated s to %s (seeds)" % target, "measured s to %s (runs)" % target,
             "measured / simulated", "simulated T there", "measured T there", "simulated s per 1,000 T",
             "measured s per 1,000 T", "mean τ to there, simulated / measured"], rows, ["---", "---"] + ["---:"] * 8))
    w("")
    w("Cells: median (smallest–largest). *T there*: the server's timestamp at the evaluation that reached "
      "the target, so that the time splits into how many updates the run needed (the training) and how fast "
      "they came (the clock, *s per 1,000 T*, measured from T = 100 to there, after the start-up); *mean τ*: "
      "the staleness of the gradients applied up to there, the median of the runs.")
    w("")
    if len(gates) == 2 and len(bws) == 1:
        b = bws[0]
        (s0, m0, h0, k0), (s1, m1, h1, k1) = meas[(gates[0], b)], meas[(gates[1], b)]
        if s0 and m0 and s1 and m1 and len(s0) == len(h0) and len(m0) == len(k0) \
                and len(s1) == len(h1) and len(m1) == len(k1):
            w("%s over %s: simulated %.2f×, measured %.2f× (medians)." % (
                gate_label(gates[1]), gate_label(gates[0]), median(s1) / median(s0), median(m1) / median(m0)))
            w("")
    w("Each run (the load average is the machine's, 1, 5 and 15 minutes, as the run started and ended; "
      "*joined*: the first status sample, once a second, that counts every client):")
    w("")
    rows = []
    for x in sorted(runs, key=lambda x: x["started"]):
        c = curves[(x["gate"], x["bandwidth"], x["run"])]
        hit = reach_at(c, target)
        last = c[-1]
        rows.append([x["run"], gate_label(x["gate"]), x["started"].replace("T", " ").rstrip("Z"),
                     x["load_before"], x["load_after"], x["join_s"] or "—",
                     "%s at T = %d" % (secs(hit[0]), hit[1]) if hit else "not reached",
                     "%.1f×" % (last["pushes"] / max(last["fetches"], 1)),
                     "%.1f" % (sum(r["mean_tau"] for r in c[1:]) / max(len(c) - 1, 1)), x["end"]])
    w(table(["run", "gate", "started (UTC)", "load before", "load after", "joined (s)", "test error %s" % target,
             "pushes / fetches", "mean τ", "ended at"], rows, ["---:", "---", "---"] + ["---:"] * 7))
    w("")
    commits = sorted({x["commit"] for x in runs})
    w("Test bed: fasgd-server and fasgd-client built from commit%s %s (SHA-256 %s and %s); %s. Each run's "
      "curve and provenance are in %s/." % (
          "s" if len(commits) > 1 else "", ", ".join(commits), ", ".join(sorted({x["server_sha256"] for x in runs})),
          ", ".join(sorted({x["client_sha256"] for x in runs})), sorted({x["machine"] for x in runs})[0],
          os.path.relpath(kept, TOP)))
    w("")
    return out


def _slowest(sim_curves, gates, bws, target):
    """'the slowest setting needs about N simulated seconds to reach
    target' from the simulated runs."""
    worst = None
    for g in gates:
        for b in bws:
            t = [reach(c, target) for k, c in sorted(sim_curves.items()) if k[0] == g and k[1] == b]
            if t and all(t):
                m = median([x[0] for x in t])
                if worst is None or m > worst[0]:
                    worst = (m, g, b)
    if worst is None:
        return "not every simulated setting here reaches %s" % target
    return "%s needs about %s simulated seconds to reach %s at %s" % (
        gate_label(worst[1]), secs(worst[0]), target, mbit(worst[2]))


def _clients(cmds):
    n = {c.split("--clients ")[1].split()[0] for c in cmds if "--clients " in c}
    return " or ".join(sorted(n)) if n else "the"
