#!/usr/bin/env python3
"""table.py [DIR...]: run.sh's runs (NAME-R.txt, NAME-R.pushes) as a
Markdown table, a row a run, in the order they ran: the build (base:
replies without a turn at once; new: in their order), steps a second,
link use down and up, turns cut, and the pushes each client made
(least/median/most, from its server's lines of the clients leaving)."""
import glob, os, re, statistics, sys

dirs = sys.argv[1:] or [os.path.dirname(os.path.abspath(__file__))]
print("| TCP | round | build | steps/s | down % | up % | turns cut | pushes a client (least/median/most) |")
print("|---|--:|---|--:|--:|--:|--:|---|")
for d in dirs:
    runs = []
    for f in glob.glob(os.path.join(d, '*-*.txt')):
        name, r = re.match(r'(\w+)-(\d+)\.txt$', os.path.basename(f)).groups()
        line = next(l for l in open(f) if l.startswith('round '))
        m = re.search(r'cpu: ([\d.]+) ([\d.]+) ([\d.]+) .*turns cut (\d+)\)', line)
        cc = next((l.split('TCP congestion control ')[1].strip() for l in open(f)
                   if 'TCP congestion control' in l), '?')
        pushes = sorted(int(x) for x in re.findall(r'after (\d+) pushes', open(f[:-4] + '.pushes').read()))
        order = 0 if (int(r) % 2 == 1) == (name == 'base') else 1
        runs.append((int(r), order, name, cc, m, pushes))
    for r, _, name, cc, m, p in sorted(runs):
        print(f"| {cc} | {r} | {name} | {float(m.group(1)):.2f} | "
              f"{float(m.group(2)) * 100:.1f} | {float(m.group(3)) * 100:.1f} | {m.group(4)} | "
              f"{p[0]}/{statistics.median(p):g}/{p[-1]} |")
