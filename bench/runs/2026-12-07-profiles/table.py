#!/usr/bin/env python3
"""The tables of bench/net.md's "Where a step's CPU goes at 1M,
remade" from the runs kept here (run.sh): for each server, its steps/s
and the server's CPU a step from perf's samples, split into the
kernel's copies of the messages, the update's pass, the separate pass
over the gradient before it (the guard's norm, or with the guard off
the finiteness check) and the rest; the client's CPU a step, split into
the kernel's copy of what it sends, of what it receives and its own copy
of θ; then bench-rules' passes; and bench-net --pslite's runs, before
and after the client's gradient was put at a page's start, and at
79,510 and 10M after (sizes.txt). With --before, the same of the runs in
malloc-grad/, made while bench-net's client sent its gradient from
where malloc put it.

With --offsets, offsets.sh's table: the client's CPU a step by where
its gradient starts in a page.

Usage: python3 bench/runs/2026-12-07-profiles/table.py [--before | --offsets]   (from anywhere)
"""
import glob
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE_SECONDS = 6      # run.sh: perf record -- sleep 6
SYSTEMS = (("pslite", "ps-lite"), ("asgd", "fasgd-server (asgd)"), ("fasgd", "fasgd-server (fasgd)"),
           ("fasgd+noguard", "fasgd-server (fasgd, guard off)"))
PARTS = {"copy": ("_copy_to_iter", "_copy_from_iter", "rep_movs"),
         "update": ("s_pass_", "ThetaServer"),
         "check": ("fasgd_floats_sumsq", "fasgd_floats_any_nonfinite")}
CLIENT_PARTS = {"send": ("_copy_from_iter",), "receive": ("_copy_to_iter",), "memcpy": ("__memmove", "__memcpy")}


def span(v, digits=2):
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def rounds(sys):
    return sorted(int(m.group(1)) for f in glob.glob(os.path.join(HERE, f"{glob.escape(sys)}-*.bench.txt"))
                  if (m := re.search(r"-(\d+)\.bench\.txt$", f)))


def steps_per_s(sys, k):
    text = open(os.path.join(HERE, f"{sys}-{k}.bench.txt")).read()
    m = re.search(r"steps_per_s=([\d.]+)", text) or re.search(r"^1000900\s+\S+\s+\d+\s+\d+\s+([\d.]+)", text, re.M)
    return float(m.group(1))


def profile(sys, k, role="", parts=PARTS):
    """The server's (or with role ".client" the client's) CPU ms a step,
    and each part's ms a step."""
    text = open(os.path.join(HERE, f"{sys}-{k}{role}.perf.txt")).read()
    ns = int(re.search(r"Event count \(approx\.\): (\d+)", text).group(1))
    ms = ns / 1e6 / (steps_per_s(sys, k) * PROFILE_SECONDS)
    share = dict.fromkeys(parts, 0.0)
    for m in re.finditer(r"([\d.]+)%\s+\[[k.]\]\s+(.+)", text):
        for part, names in parts.items():
            if any(n in m.group(2) for n in names):
                share[part] += float(m.group(1))
    parts = {p: ms * s / 100 for p, s in share.items()}
    parts["rest"] = ms - sum(parts.values())
    return ms, parts


def servers():
    print("| server (rule) | rounds | steps/s | server CPU ms a step | kernel copies | update pass | "
          "pass before it | rest |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for sys, label in SYSTEMS:
        ks = rounds(sys)
        runs = [profile(sys, k) for k in ks]
        cells = [span([r[1][p] for r in runs]) if any(r[1][p] for r in runs) else "–"
                 for p in ("copy", "update", "check", "rest")]
        print(f"| {label} | {len(ks)} | {span([steps_per_s(sys, k) for k in ks], 0)} | "
              f"{span([r[0] for r in runs])} | " + " | ".join(cells) + " |")
    print()
    print("| client of | client CPU ms a step | kernel's copy of its sends | of what it receives | "
          "its copy of θ | rest |")
    print("|---|--:|--:|--:|--:|--:|")
    for sys, label in SYSTEMS:
        runs = [profile(sys, k, ".client", CLIENT_PARTS) for k in rounds(sys)]
        print(f"| {label} | {span([r[0] for r in runs])} | "
              + " | ".join(span([r[1][p] for r in runs]) for p in ("send", "receive", "memcpy", "rest")) + " |")
    print()
    print("Paired by round: asgd × ps-lite's steps " +
          span([steps_per_s("asgd", k) / steps_per_s("pslite", k) for k in rounds("asgd")]) +
          "; fasgd × asgd " + span([steps_per_s("fasgd", k) / steps_per_s("asgd", k) for k in rounds("fasgd")]) +
          "; fasgd with the guard off × asgd " +
          span([steps_per_s("fasgd+noguard", k) / steps_per_s("asgd", k) for k in rounds("fasgd+noguard")]) + ".")


def net():
    """bench-net --pslite, the client's gradient where malloc put it (old,
    main's bench-net before) and at a page's start (new), in turns."""
    print("| run | bench-net | clients | asgd × ps-lite, paired (range) | steps/s asgd / ps-lite | "
          "srv-ms asgd / ps-lite | cli-ms asgd / ps-lite | fasgd × asgd |")
    print("|--:|---|--:|--:|--:|--:|--:|--:|")
    for f in sorted(glob.glob(os.path.join(HERE, "net-*-*.txt")), key=lambda f: (f[-9:-8], "new" in f)):
        run, which = re.search(r"net-(\d+)-(\w+)\.txt$", f).groups()
        rows = {}
        for line in open(f):
            p = line.split()
            if p and p[0] == "1000900":
                rows[(p[1], int(p[3]))] = p
        for n in (1, 4):
            a, ps, fa = rows[("asgd", n)], rows[("ps-lite", n)], rows[("fasgd", n)]
            print(f"| {run} | {'page-aligned' if which == 'new' else 'malloc'} | {n} | {a[11].replace('x', ' ')} | "
                  f"{a[4]} / {ps[4]} | {a[7]} / {ps[7]} | {a[8]} / {ps[8]} | {fa[13].rstrip('x')} |")


def offsets():
    """offsets.sh's runs: steps/s and the client's CPU a step by where its
    gradient starts in a page."""
    runs = {}
    for f in sorted(glob.glob(os.path.join(HERE, "offsets-*.txt"))):
        off = None
        for line in open(f):
            m = re.match(r"## offset (\d+)", line)
            if m:
                off = int(m.group(1))
            p = line.split()
            if p and p[0] == "1000900":
                runs.setdefault(off, []).append((float(p[4]), float(p[8])))
    print("| gradient's bytes past a page's start | passes | steps/s | client CPU ms a step |")
    print("|--:|--:|--:|--:|")
    for off in sorted(runs):
        v = runs[off]
        print(f"| {off:,} | {len(v)} | {span([r[0] for r in v], 0)} | {span([r[1] for r in v])} |")


def sizes():
    """sizes.txt: asgd beside ps-lite at 79,510 and 10M, the gradient at a
    page's start."""
    print("| D | clients | asgd × ps-lite, paired (range) | steps/s asgd / ps-lite | srv-ms asgd / ps-lite | "
          "cli-ms asgd / ps-lite |")
    print("|--:|--:|--:|--:|--:|--:|")
    rows = {}
    for line in open(os.path.join(HERE, "sizes.txt")):
        p = line.split()
        if p and p[0] in ("79510", "10099900"):
            rows[(p[0], p[1], int(p[3]))] = p
    for d in ("79510", "10099900"):
        for n in (1, 4):
            a, ps = rows[(d, "asgd", n)], rows[(d, "ps-lite", n)]
            print(f"| {int(d):,} | {n} | {a[11].replace('x', ' ')} | {a[4]} / {ps[4]} | {a[7]} / {ps[7]} | "
                  f"{a[8]} / {ps[8]} |")


def rules():
    runs = {}
    for f in sorted(glob.glob(os.path.join(HERE, "rules-*.txt"))):
        for line in open(f):
            p = line.split()
            if len(p) >= 5 and p[0] in ("asgd", "fasgd") and re.match(r"[\d.]+$", p[1]):
                runs.setdefault((p[0], "in place"), []).append(float(p[1]))
                runs.setdefault((p[0], "staged"), []).append(float(p[3]))
            m = re.match(r"# (one square root|five vectors streamed).*: ([\d.]+)", line)
            if m:
                runs.setdefault((m.group(1), ""), []).append(float(m.group(2)))
    print("| pass (ns a parameter) | runs | median (least–greatest) |")
    print("|---|--:|--:|")
    for (what, how), v in runs.items():
        print(f"| {what} {how} | {len(v)} | {span(v, 3)} |".replace("  |", " |"))


if __name__ == "__main__":
    if sys.argv[1:] == ["--offsets"]:
        offsets()
        sys.exit(0)
    if sys.argv[1:] == ["--before"]:
        HERE = os.path.join(HERE, "malloc-grad")
    servers()
    print()
    rules()
    if os.path.exists(os.path.join(HERE, "net-1-new.txt")):
        print()
        net()
    if os.path.exists(os.path.join(HERE, "sizes.txt")):
        print()
        sizes()
