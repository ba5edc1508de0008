"""Runs of fasgd-sim kept with their provenance: what scripts/ablation and
scripts/baselines share (standard library only), and how every report names
the machines its kept runs ran on (machines()).

A run goes to results/ as a CSV (through NAME.tmp, its messages in NAME.log,
its CPU seconds in NAME.cpu); a run whose CSV is complete is not run again,
so an interrupted invocation resumes. keep() copies the runs a report reads
into a kept directory under experiments/data/, each CSV gzipped (the same CSV
always makes the same bytes; `scripts/kept-curves pack` folds them into the
directory's curves.tar.xz), with a line per run in finals.csv: its keys,
the file, the command line, the commit, the binary's SHA-256, the CPU
seconds and the machine.
"""
import concurrent.futures
import csv
import gzip
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import time

from paperreport import curves
from paperreport.common import TOP, TAIL

SIM = os.path.join(TOP, "build", "sim", "fasgd-sim")
BASE = os.path.join(TOP, "experiments", "base.yaml")
PROVENANCE = ["file", "command", "commit", "binary_sha256", "cpu_s", "machine"]


def tail_mean(rows, col):
    """The final value of a column: the mean of its last TAIL evaluations."""
    v = [x[col] for x in rows[-TAIL:]]
    return sum(v) / len(v)


def complete(path, n):
    """The CSV's rows if it reached iteration n, else None."""
    try:
        with open(path) as f:
            rows = curves.rows_of(f)[0]
        return rows if rows and int(rows[-1]["iteration"]) == n else None
    except (OSError, StopIteration, ValueError):
        return None


def complete_or_kept(path, n, kept):
    """The rows of the run whose results/ CSV is path: from path if it
    reached iteration n, else from its curve kept in the directory kept if
    that did; None if neither."""
    rows = complete(path, n)
    gz = os.path.basename(path) + ".gz"
    if rows is None and curves.has(kept, gz):
        rows = curves.rows(kept, gz)
        rows = rows if rows and int(rows[-1]["iteration"]) == n else None
    return rows


def command(keys):
    """The command line a run's keys make, as finals.csv records it."""
    return "fasgd-sim -c experiments/base.yaml -t 1 " + " ".join("--set " + k for k in keys)


def binary_sha256():
    with open(SIM, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def run_sim(path, keys):
    """Runs fasgd-sim into path (through path.tmp; its messages in
    path.log; the binary's hash in path.bin, taken as it starts, since a
    rebuild during a long invocation replaces it); returns the run's own
    CPU seconds."""
    with open(path + ".bin", "w") as f:
        f.write(binary_sha256() + "\n")
    args = ["nice", "-n", "19", SIM, "-c", BASE, "-t", "1", "-q", "-o", path + ".tmp"]
    for k in keys:
        args += ["--set", k]
    with open(path + ".log", "w") as log:
        p = subprocess.Popen(args, stdout=log, stderr=log)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        with open(path + ".log") as log:
            raise RuntimeError("%s failed (exit %d): %s" % (" ".join(args), p.returncode, log.read()[-400:]))
    os.replace(path + ".tmp", path)
    cpu = usage.ru_utime + usage.ru_stime
    with open(path + ".cpu", "w") as f:
        f.write("%.1f\n" % cpu)
    return cpu


def run_all(jobs, todo, what, tag, deadline=None):
    """todo: [(path, keys)], each run whose CSV is not complete; returns
    {path: CPU seconds}. Progress lines start with tag. A run not started
    by deadline (seconds since the epoch), or that fails, is left out."""
    if not todo:
        return {}
    cpu = {}
    t0 = time.time()

    def one(path, keys):
        if deadline is not None and time.time() >= deadline:
            return None
        try:
            return run_sim(path, keys)
        except RuntimeError as e:
            # A run stopped from outside (a signal) is left out, not the
            # whole invocation: the next one runs it again.
            print("%s: %s" % (tag, e), flush=True)
            return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {ex.submit(one, path, keys): path for path, keys in todo}
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            path = futs[fut]
            secs = fut.result()
            if secs is None:
                continue
            cpu[path] = secs
            el = time.time() - t0
            print("%s: %s %d/%d, %s (%.0f s), ETA %.0f s" % (
                tag, what, i, len(todo), os.path.basename(path), cpu[path], el / i * (len(todo) - i)), flush=True)
    return cpu


def built_commit(program, top):
    """The commit program was built from: build-commit in its build folder
    (make writes it, "+changes" when the code differed from it; "unknown"
    without it), followed by "(tree at HEAD)", with a warning, when the tree
    at top has moved to another commit since."""
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(program)), "build-commit")) as f:
            commit = f.read().strip() or "unknown"
    except OSError:
        commit = "unknown"
    head = subprocess.run(["git", "-C", top, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "unknown"
    if commit.removesuffix("+changes") != head:
        print("%s was built from commit %s, but the tree is at %s (make rebuilds it)" % (program, commit, head),
              file=sys.stderr, flush=True)
        commit += " (tree at %s)" % head
    return commit


def provenance():
    """The commit fasgd-sim was built from (built_commit), the binary's hash
    and the machine, with the OpenBLAS kernels its runs use: those
    scripts/blas-kernels pins (OPENBLAS_CORETYPE) for every run this
    process starts, or OpenBLAS's own choice as it names it."""
    blas = os.path.join(TOP, "scripts", "blas-kernels")
    kernels = subprocess.run([blas], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    if kernels:
        os.environ["OPENBLAS_CORETYPE"] = kernels
    kernels = subprocess.run([blas, "--name"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    commit = built_commit(SIM, TOP)
    binhash = binary_sha256()
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"commit": commit, "binary_sha256": binhash,
            "machine": "%s, %d cores, %s %s%s" % (model, os.cpu_count() or 0, platform.system(), platform.release(),
                                                  ", OpenBLAS %s" % kernels)}


def machines(rows):
    """Where kept runs ran, as a report's cost line names it: every distinct
    machine of rows (their "machine" field; an empty one names none),
    sorted and joined with "; ", or "no machine" when there is none."""
    return "; ".join(sorted({x["machine"] for x in rows if x.get("machine")})) or "no machine"


def keep(kept, key_cols, runs, cpu, prov, others=None):
    """Copies each run into kept and writes kept/finals.csv. runs: [(key,
    src, keys)], key a tuple of key_cols' values, src the run's CSV, keys its
    --set keys. A run kept before keeps its provenance unless it ran again in
    this invocation (its path in cpu); one kept before whose CSV is no
    longer in results/ stays as it was kept (its file is not copied again).
    others(row), when given, says which rows kept before and not among runs
    stay (first, as they were, with their files): those of the parts this
    invocation did not run."""
    old = {}
    path = os.path.join(kept, "finals.csv")
    if os.path.exists(path):
        with open(path) as f:
            old = {tuple(x[c] for c in key_cols): x for x in csv.DictReader(f)}
    mine = {key for key, _, _ in runs}
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, key_cols + PROVENANCE, lineterminator="\n")
        w.writeheader()
        if others is not None:
            w.writerows(x for k, x in old.items() if k not in mine and others(x))
        for key, src, keys in runs:
            gz = os.path.basename(src) + ".gz"
            if not os.path.exists(src) and key in old and curves.has(kept, old[key]["file"]):
                w.writerow(old[key])
                continue
            with open(src, "rb") as fi, open(os.path.join(kept, gz), "wb") as fo:
                # mtime 0: the same CSV always makes the same bytes.
                with gzip.GzipFile(filename="", mode="wb", fileobj=fo, mtime=0) as z:
                    shutil.copyfileobj(fi, z)
            row = old.get(key)
            if row is None or src in cpu:
                secs = ""
                if os.path.exists(src + ".cpu"):
                    with open(src + ".cpu") as fc:
                        secs = fc.read().strip()
                row = dict(prov, file=gz, command=command(keys), cpu_s=secs, **dict(zip(key_cols, key)))
                if os.path.exists(src + ".bin"):
                    with open(src + ".bin") as fb:
                        row["binary_sha256"] = fb.read().strip()
            w.writerow(row)
    os.replace(path + ".tmp", path)
