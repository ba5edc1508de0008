#!/usr/bin/env python3
"""Prints the tables of experiments/guard-het.md from the runs kept beside
it (run.sh; ../testbed_summaries.py says what each cell is): the
variants het25, het25ng, hom5 and hom5ng, then each guard-on variant's
wall seconds over its guard-off twin's, run by run (same seed); the
same for het5, het5ng, het5nj and het5nl; and, run by run for those
and for row-het5 (the daemon of 87164c2), the wall seconds, the
roll-backs and the saved points they went back to (NAME.saved) and the
share of the pushes sent that were applied, by the clients behind 100
and behind 10 Mbit/s (NAME.clients: c1, c3, c5, c7 and c2, c4, c6, c8)."""
import collections
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from testbed_summaries import COLS, report, summary_keys  # noqa: E402

FAST, SLOW = ("c1", "c3", "c5", "c7"), ("c2", "c4", "c6", "c8")

report(here, "guard", ("het25", "het25ng", "hom5", "hom5ng"), (("het25", "het25ng"), ("hom5", "hom5ng")), COLS[:6])
print()
report(here, "guard", ("het5", "het5ng", "het5nj", "het5nl"),
       (("het5", "het5ng"), ("het5nj", "het5ng"), ("het5nl", "het5ng")), COLS[:6])


def applied(clients, names):
    pushes = sum(clients[n][0] for n in names)
    sent = sum(clients[n][1] for n in names)
    return "%d / %d (%.0f%%)" % (pushes, sent, 100.0 * pushes / sent)


print()
print("| run | wall s | roll-backs | saved points gone back to | the most to one | applied / sent, 100 Mbit/s | "
      "applied / sent, 10 Mbit/s |")
print("|---|--:|--:|--:|--:|--:|--:|")
for prefix, v in (("guard", "het5"), ("row", "het5"), ("guard", "het5ng"), ("guard", "het5nj"), ("guard", "het5nl")):
    for r in (1, 2):
        base = os.path.join(here, "%s-%s-r%d" % (prefix, v, r))
        if not os.path.exists(base + ".clients"):
            continue
        clients = {}
        for line in open(base + ".clients"):
            m = re.match(r"(\S+) pushes=(\d+) fetches=(\d+)", line)
            clients[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        saved = collections.Counter(line.strip() for line in open(base + ".saved") if line.strip())
        wall = float(summary_keys(base + ".txt")["wall_s"])
        print("| %s r%d | %.1f | %d | %d | %d | %s | %s |"
              % (v if prefix == "guard" else prefix + "-" + v, r, wall, sum(saved.values()), len(saved),
                 max(saved.values()) if saved else 0, applied(clients, FAST), applied(clients, SLOW)))
