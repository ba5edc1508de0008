"""The test bed's part of experiments/time-to-accuracy.md: the runs that
scripts/time-to-accuracy-testbed keeps in
experiments/data/time-to-accuracy-testbed/ (the real daemons on a shaped
link), each beside the simulated runs of the same gate and bandwidth."""

import csv
import os
import re

from keptruns import machines
from paperreport.curves import rows as kept_rows
from paperreport.common import TOP, table
from paperreport.tta import SMOOTH, gate_label, mbit, med_range, median, reach, secs

TESTBED = os.path.join(TOP, "experiments", "data", "time-to-accuracy-testbed")


def load_measured(kept):
    """(runs.csv's rows, {(gate, bandwidth, run): curve}); curves keyed as
    the simulator's, with sim_time the wall time and iteration T."""
    with open(os.path.join(kept, "runs.csv")) as f:
        runs = list(csv.DictReader(f))
    curves = {}
    for x in runs:
        rows = kept_rows(kept, x["file"])
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
    """Seconds per 1,000 timestamps over the second half of the way to T =
    upto (from the first evaluation at or after upto / 2): the clock alone,
    well after the start-up."""
    a = next((r for r in rows if r["iteration"] >= upto / 2), None)
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
    cmds = sorted({re.sub(r"seed=\d+", "seed=R", re.sub(r"--instance tta\d+", "--instance ttaR", x["command"]))
                   for x in runs}, key=len)
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
      "not have. Runs alternate between the settings. Commands (run R; R is the server's seed, of the initial "
      "weights; each client's minibatch seed is its host number):" % (
          _clients(cmds), mbit(bws[0]) if len(bws) == 1 else "the bandwidth", overhead,
          float(bws[0]) * 8 * overhead / 1e6, overhead, grid["tta.compute_time"][0], target,
          _slowest(sim_curves, gates, bws, float(grid["tta.target2"][0])), SMOOTH))
    w("")
    for c in cmds:
        w("    " + c)
    w("")
    rows = []
    meas = {}
    parts = {}
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
            joins = [float(x["join_s"]) for x in runs if x["gate"] == g and x["bandwidth"] == b and x["join_s"]]
            # Each run's time less its start-up (the clients' joining).
            net = [h[0] - float(x["join_s"]) for x, h in zip(
                sorted((x for x in runs if x["gate"] == g and x["bandwidth"] == b), key=lambda x: int(x["run"])), m_hit)
                if h and x["join_s"]]
            parts[(g, b)] = (s_t, m_t, s_p, m_p, [x[1] for x in s_hit if x], [x[1] for x in m_hit if x],
                             s_tau, m_tau, joins, net)

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
      "they came (the clock, *s per 1,000 T*, over the second half of the way there, well after the start-up); *mean τ*: "
      "the staleness of the gradients applied up to there, the median of the runs.")
    w("")
    if len(gates) == 2 and len(bws) == 1:
        b = bws[0]
        (s0, m0, h0, k0), (s1, m1, h1, k1) = meas[(gates[0], b)], meas[(gates[1], b)]
        if s0 and m0 and s1 and m1 and len(s0) == len(h0) and len(m0) == len(k0) \
                and len(s1) == len(h1) and len(m1) == len(k1):
            w("%s over %s: simulated %.2f×, measured %.2f× (medians). By the rule of the section below (later: "
              "every run of one after every run of the other), %s is %s than %s in the simulator and %s on the "
              "test bed." % (
                  gate_label(gates[1]), gate_label(gates[0]), median(s1) / median(s0), median(m1) / median(m0),
                  gate_label(gates[1]), _order(s1, s0), gate_label(gates[0]), _order(m1, m0)))
            w("")
            sb = [_bytes_per_T(sim_curves, g, b, target) for g in gates]
            mb = [_bytes_per_T(curves, g, b, target) for g in gates]
            if all(sb) and all(mb):
                w("Bytes, both ways, per update up to the target (the server's message counts on the test bed): "
                  "%s %.3f MB measured, %.3f simulated; %s %.3f measured, %.3f simulated: the gate moves %.2f× "
                  "fewer bytes an update measured, %.2f× simulated, where it makes %.1f× fewer fetches measured "
                  "(pushes over fetches at the end, median): on the real daemons, the bytes cut is %s "
                  "the paper's \"10× fewer fetches is about 5× less total bandwidth\" (4× to 6×)." % (
                      gate_label(gates[0]), mb[0] / 1e6, sb[0] / 1e6, gate_label(gates[1]), mb[1] / 1e6,
                      sb[1] / 1e6, mb[0] / mb[1], sb[0] / sb[1],
                      median([c[-1]["pushes"] / max(c[-1]["fetches"], 1) for k, c in curves.items()
                              if k[0] == gates[1] and k[1] == b]),
                      "within" if 4 <= mb[0] / mb[1] <= 6 else "outside"))
                w("")
    w("Where the times differ, the medians of each part (measured against simulated):")
    w("")
    for (g, b), (s_t, m_t, s_p, m_p, s_T, m_T, s_tau, m_tau, joins, net) in parts.items():
        if not (s_t and m_t and s_p and m_p):
            continue
        w("- %s, %s: %s s measured against %s s simulated (%+.0f s). Start-up: the last client joined %s s "
          "after the clients' start, a time the simulator does not have; each run less its start-up: %s s. The clock: %s s per 1,000 T against "
          "%s (%.2f×). The updates needed: T = %s against %s (%.2f×). Staleness on the way: mean τ %.1f "
          "against %.1f." % (
              gate_label(g), mbit(b), secs(median(m_t)), secs(median(s_t)), median(m_t) - median(s_t),
              med_range(joins) if joins else "—", med_range(net) if net else "—", secs(median(m_p)), secs(median(s_p)),
              median(m_p) / median(s_p), "{:,.0f}".format(median(m_T)), "{:,.0f}".format(median(s_T)),
              median(m_T) / median(s_T), median(m_tau), median(s_tau)))
    w("")
    w("Reading it. The start-up is the test bed's own: its %s clients start at once under `nice -n 19` on a "
      "shared machine (the load averages below, on 2 cores) and take seconds, at times tens of seconds, to "
      "load their data and join; the simulator's clients all start at 0, and with a target this loose the "
      "start-up is a large share of the shorter runs' time. The clock is the part the simulator was calibrated "
      "for (experiments/testbed.md): with both directions of the link full (ungated) the test bed gives fewer "
      "updates a second than the simulator, as that calibration found (each direction of a tbf link carried "
      "about 92%% of its rate when both were full, 96–99%% when one was), and with one direction full "
      "(the fetch gate: every push sent, a tenth of the fetches) the two agree. Staleness: ungated, a gradient "
      "is staler on the test bed than in the simulator (the mean τ above), because "
      "TCP shares the link among all the connections at once, so that a θ in flight arrives later than in the "
      "simulator's one-message-at-a-time queue while its content was fixed when the request arrived: with "
      "fasgd-server sending its replies in turn, each with the θ of its sending (`turns.enabled`), this "
      "setting's mean τ fell from 30 to 9.5 in four runs of each (experiments/turns-testbed.md); with the fetch gate the staleness comes mostly from the fetches skipped and "
      "differs less. The updates needed: %s The runs are few and the machine was loaded: the parts are "
      "indications; the order of the two settings is the finding." % (
          _clients(cmds), "; ".join(x.rstrip(".") for x in _updates(parts)) + "."))
    w("")
    w("Each run (the load average is the machine's, 1, 5 and 15 minutes, as the run started and ended; "
      "*joined*: seconds from the clients' start to the join at which the server's log first counts every "
      "client; *joined again*: joins beyond one a client, each a client that waited 5 s for a reply, gave up "
      "and joined afresh, which the simulator's clients never do):")
    w("")
    rows = []
    for x in sorted(runs, key=lambda x: x["started"]):
        c = curves[(x["gate"], x["bandwidth"], x["run"])]
        hit = reach_at(c, target)
        last = c[-1]
        rows.append([x["run"], gate_label(x["gate"]), x["started"].replace("T", " ").rstrip("Z"),
                     x["load_before"], x["load_after"], x["join_s"] or "—", x.get("rejoins") or "—",
                     "%s at T = %d" % (secs(hit[0]), hit[1]) if hit else "not reached",
                     "%.1f×" % (last["pushes"] / max(last["fetches"], 1)),
                     "%.1f" % (sum(r["mean_tau"] for r in c[1:]) / max(len(c) - 1, 1)), x["end"]])
    w(table(["run", "gate", "started (UTC)", "load before", "load after", "joined (s)", "joined again",
             "test error %s" % target, "pushes / fetches", "mean τ", "ended at"], rows,
            ["---:", "---", "---"] + ["---:"] * 8))
    w("")
    commits = sorted({x["commit"] for x in runs})
    w("Test bed: fasgd-server and fasgd-client built from commit%s %s (SHA-256 %s and %s); %s. Each run's "
      "curve and provenance are in %s/." % (
          "s" if len(commits) > 1 else "", ", ".join(commits), ", ".join(sorted({x["server_sha256"] for x in runs})),
          ", ".join(sorted({x["client_sha256"] for x in runs})), machines(runs),
          os.path.relpath(kept, TOP)))
    w("")
    return out


def _updates(parts):
    """A sentence a setting: whether the updates needed on the test bed are
    within the simulator's seeds' range or beyond it."""
    out = []
    for (g, b), p in parts.items():
        s_T, m_T = p[4], p[5]
        if not s_T or not m_T:
            continue
        if min(m_T) > max(s_T) or max(m_T) < min(s_T):
            out.append("%s, the test bed needed %s updates at every run than the simulator at every seed "
                       "(T = %s against %s), beyond the spread, for a reason not established here." % (
                           gate_label(g), "more" if min(m_T) > max(s_T) else "fewer",
                           med_range(m_T, lambda v: "{:,.0f}".format(v)), med_range(s_T, lambda v: "{:,.0f}".format(v))))
        else:
            out.append("%s, the two overlap (T = %s against %s)." % (
                gate_label(g), med_range(m_T, lambda v: "{:,.0f}".format(v)), med_range(s_T, lambda v: "{:,.0f}".format(v))))
    return out


def _bytes_per_T(curves, g, b, target):
    """The median over runs or seeds of the bytes both ways per timestamp
    at the evaluation that reached target; None if any never did."""
    v = []
    for k, c in sorted(curves.items()):
        if k[0] != g or k[1] != b:
            continue
        hit = reach_at(c, target)
        if hit is None:
            return None
        r = next(r for r in c if r["iteration"] == hit[1])
        v.append(r["bytes"] / r["iteration"])
    return median(v) if v else None


def _order(a, b):
    if min(a) > max(b):
        return "later"
    if max(a) < min(b):
        return "sooner"
    return "within noise of"


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
