#!/usr/bin/env python3
"""Prints what experiments/data/turn-lengths/README.md shows of the turns
two test-bed runs logged (turns-r1.csv.gz, turns-r2.csv.gz): per run, the
turns that ended by themselves while others waited, the slow client's
and the others', their lengths in ms at the 10th, 50th, 90th and 99th
percentiles and the longest; the others' lengths of both runs at the
fractions tests/test_turn_slow.c draws honest turns from (its s_ms
table, as it is written there); and server/turn_slow.c's judgement
replayed on each run's turns (a client's mean each new turn weighing
1/4, judged from its fourth, the others' each weighing 1/32, factor 4,
at least 10 ms), turn by turn as they came; and, on the second run's
looks, a rule that was not built: a turn released (the next reply let
go) once it has lasted the median of the last 32 turns and sent less
than a quarter of their median pace so far."""
import csv
import gzip
import os

here = os.path.dirname(os.path.abspath(__file__))
FRAC = (0, .05, .1, .15, .2, .25, .3, .35, .4, .45, .5, .55, .6, .65, .7, .75, .8, .85, .9, .95, .975, .99, .995,
        .999, 1)


def turns(r):
    with gzip.open(os.path.join(here, "turns-r%d.csv.gz" % r), "rt") as f:
        return [row for row in csv.DictReader(f)]


def ended(rows):
    """The turns that ended by themselves while others waited: those
    turn_hold and turn_slow learn from."""
    return [row for row in rows if row["how"] == "end" and int(row["waiting"]) > 0]


def at(sorted_ms, p):
    return sorted_ms[min(len(sorted_ms) - 1, int(p * len(sorted_ms)))]


def replay(rows):
    typical, mean, n = 0.0, {}, {}
    judged = {0: 0, 1: 0}
    seen = {0: 0, 1: 0}
    for row in ended(rows):
        took = max(1, int(row["took_us"]))
        typical = took if typical == 0 else typical + (took - typical) / 32
        c = row["client"]
        mean[c] = took if c not in mean else mean[c] + (took - mean[c]) / 4
        n[c] = min(4, n.get(c, 0) + 1)
        slow = int(row["slow"])
        seen[slow] += 1
        judged[slow] += n[c] >= 4 and mean[c] > 10000 and mean[c] > 4 * typical
    return judged, seen


def looks(r):
    """The run's turns, and each turn's looks, [(took_us, sent_bytes)] in
    order (the looks file's turn column: the index of the turn in
    turns-rR.csv.gz that was under way)."""
    rows = turns(r)
    per = [[] for _ in rows]
    with gzip.open(os.path.join(here, "looks-r%d.csv.gz" % r), "rt") as f:
        for x in csv.DictReader(f):
            per[int(x["turn"])].append((int(x["took_us"]), int(x["sent_bytes"])))
    return rows, per


def replay_pace(r):
    rows, per = looks(r)
    durs, paces, released, seen = [], [], {0: 0, 1: 0}, {0: 0, 1: 0}
    for row, mine in zip(rows, per):
        took_end = int(row["took_us"])
        slow = int(row["slow"])
        seen[slow] += 1
        hit = None
        if len(durs) >= 8:
            m = sorted(durs)[len(durs) // 2]
            p = sorted(paces)[len(paces) // 2]
            for took, sent in mine:
                if took >= m and sent * 4 < p * took:
                    hit = (took, sent)
                    break
        if hit:
            released[slow] += 1
            durs.append(hit[0])
            paces.append(hit[1] / max(1, hit[0]))
        elif row["how"] == "end" and int(row["waiting"]) > 0:
            durs.append(took_end)
            paces.append(int(row["sent_bytes"]) / max(1, took_end))
        durs, paces = durs[-32:], paces[-32:]
    return released, seen


honest = []
for r in (1, 2):
    rows = turns(r)
    for slow, who in ((1, "the slow client"), (0, "the others")):
        ms = sorted(int(row["took_us"]) / 1000 for row in ended(rows) if int(row["slow"]) == slow)
        if not slow:
            honest += ms
        print("run %d, %s: %d turns, ms at p10 %.1f, p50 %.1f, p90 %.1f, p99 %.1f, longest %.1f"
              % (r, who, len(ms), at(ms, .1), at(ms, .5), at(ms, .9), at(ms, .99), ms[-1]))
    judged, seen = replay(rows)
    print("run %d replayed: the slow client judged slower at %d of its %d turns, the others at %d of %d"
          % (r, judged[1], seen[1], judged[0], seen[0]))
released, seen = replay_pace(2)
print("run 2 replayed, a turn released at a quarter of the median pace: the slow client's at %d of its %d turns, "
      "the others' at %d of %d" % (released[1], seen[1], released[0], seen[0]))
honest.sort()
print("the others' turns, both runs (%d), ms at test_turn_slow.c's fractions:" % len(honest))
print("static const double s_ms [] = { " + ", ".join("%.1f" % at(honest, p) for p in FRAC) + " };")
