#!/usr/bin/env python3
"""table.py [DIR]: run.sh's CLIENTS.phases as a Markdown table, a row a
run: the clients, the system, the payload ACKed over the link's rate,
the share of the window with a reply under way, a reply owed, every
client pushing; the payload rate while a reply is under way, and with
0, 1, or 2 or more pushes arriving (share of the window: rate); the
replies a client got, and the replies' ACKs' smoothed RTT (quartiles)."""
import glob, os, re, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
num = r'([\d.]+)'
print("| clients | system | payload % | reply under way % | reply owed % | every client pushing % "
      "| payload % with a reply under way | ... and 0 / 1 / 2+ pushes arriving (% of time: payload %) "
      "| replies a client | srtt ms |")
print("|--:|---|--:|--:|--:|--:|--:|---|---|---|")
files = sorted(glob.glob(os.path.join(d, '*.phases')), key=lambda f: int(os.path.basename(f).split('.')[0]))
for f in files:
    for line in open(f):
        sysname = line.split(':', 1)[0]
        g = lambda pat: re.search(pat, line).groups()
        clients, = g(r'clients (\d+)')
        pay, = g(r'payload ' + num + r'% of the link')
        rep, owed, push = g(r'a reply under way ' + num + r'%, a reply owed ' + num + r'%, every client pushing '
                            + num + '%')
        under, = g(r'payload while a reply is under way ' + num + '%')
        got, = g(r'replies a client ([\d./]+);')
        srtt, = g(r'ACKs ([\d./]+) ms')
        by = re.findall(r'(\d+)% of the time at (\d+)%', line)
        print(f"| {clients} | {sysname} | {pay} | {rep} | {owed} | {push} | {under} | "
              + " / ".join(f"{t}: {p}" for t, p in by) + f" | {got} | {srtt} |")
