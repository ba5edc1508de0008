#!/usr/bin/python3
"""bench-shards: steps per second of clients training a model held by S
fasgd-servers (shards) on this machine, S = 1 and more side by side.

For each model size and each round, every shard count in --shards runs in
turn (alternating, so that a neighbour's load falls on all of them alike):
S fasgd-servers are started on 127.0.0.1 (rule asgd, no validation, an
external model of the given size cut into two tensors), C client threads
join all of them through libfasgdclient (fasgd.Client given S endpoints)
and each repeats a step, push a gradient and fetch theta, for --seconds
after --warmup. A step is one round trip with THEN_FETCH (--trips 1,
fasgd.Client.step_gated with the gates off) or two (--trips 2: push, then
fetch). The table gives each S's median over the rounds and its ratio to
S = 1 in the same run, and the CPU seconds a step cost the servers and the
client process (from /proc), which a comparison survives better than the
rate does on a loaded machine.

With --push and --fetch (the S shards' endpoints, comma-separated) it
starts no server: it measures the running shards there once with the
first of --clients and prints one line, steps_per_s=RATE, for scripts
that run the servers elsewhere (scripts/testbed-shards, on emulated hosts).

Usage: bench/bench-shards.py [--build DIR] [--sizes LIST] [--shards LIST]
                             [--clients LIST] [--trips 1|2] [--seconds S]
                             [--warmup S] [--rounds R] [--push LIST --fetch LIST]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(TOP, "build"),
                   help="build tree holding server/fasgd-server and the client library (default: build)")
    p.add_argument("--sizes", default="1000000,10000000", help="model sizes D (default 1000000,10000000)")
    p.add_argument("--shards", default="1,2", help="shard counts S, the first the reference (default 1,2)")
    p.add_argument("--clients", default="1,4", help="client threads (default 1,4)")
    p.add_argument("--trips", type=int, choices=(1, 2), default=2, help="round trips a step (default 2)")
    p.add_argument("--seconds", type=float, default=3.0, help="measured seconds a run (default 3)")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring (default 1)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of all shard counts (default 3)")
    p.add_argument("--push", help="measure running shards: their push endpoints, comma-separated")
    p.add_argument("--fetch", help="... and their fetch endpoints, in the same order")
    a = p.parse_args()
    if (a.push is None) != (a.fetch is None):
        p.error("--push and --fetch go together")
    try:
        a.sizes = [int(x) for x in a.sizes.split(",")]
        a.shards = [int(x) for x in a.shards.split(",")]
        a.clients = [int(x) for x in a.clients.split(",")]
    except ValueError:
        p.error("--sizes, --shards and --clients take comma-separated integers")
    if (min(a.sizes) < 2 or min(a.shards) < 1 or min(a.clients) < 1 or a.rounds < 1
            or not 0 < a.seconds <= 3600 or not 0 <= a.warmup <= 3600):
        p.error("sizes from 2, shards and clients from 1, rounds from 1, seconds in (0, 3600]")
    return a


def cpu_seconds(pid):
    """User + system CPU seconds of a process and its threads so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Shards:
    """S fasgd-servers holding a model of D parameters between them."""

    def __init__(self, exe, d, count):
        self.dir = tempfile.mkdtemp(prefix="fasgd-bench-shards-")
        self.procs, self.push, self.fetch = [], [], []
        half = d // 2
        tensors = "a:%d,b:%d" % (half, d - half)
        try:
            for k in range(count):
                conf = os.path.join(self.dir, "s%d.yaml" % k)
                ports = os.path.join(self.dir, "p%d" % k)
                with open(conf, "w") as f:
                    f.write("push_endpoint: tcp://127.0.0.1:*\n"
                            "fetch_endpoint: tcp://127.0.0.1:*\n"
                            "control_endpoint: \"\"\n"
                            "external: {tensors: \"%s\"}\n"
                            "rule: {name: asgd, lr: 0.0001}\n"
                            "eval: {enabled: false}\n"
                            "heartbeat: {expiry_ms: 3600000}\n"
                            "log: {status_seconds: 0}\n"
                            "shard: {count: %d, index: %d}\n" % (tensors, count, k))
                log = open(os.path.join(self.dir, "s%d.log" % k), "w")
                self.procs.append(subprocess.Popen([exe, "-c", conf, "--port-file", ports],
                                                   stdout=log, stderr=subprocess.STDOUT))
                deadline = time.monotonic() + 60
                while not (os.path.exists(ports) and os.path.getsize(ports) > 0):
                    if self.procs[-1].poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("fasgd-server did not start; its log: " + log.name)
                    time.sleep(0.01)
                with open(ports) as f:
                    ep = dict(line.strip().split("=", 1) for line in f if "=" in line)
                self.push.append(ep["push"])
                self.fetch.append(ep["fetch"])
        except BaseException:
            self.stop()
            raise

    def cpu(self):
        return sum(cpu_seconds(p.pid) for p in self.procs)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Running:
    """Shards started by someone else: their endpoints, no CPU figures."""

    def __init__(self, push, fetch):
        self.push, self.fetch = push.split(","), fetch.split(",")
        if len(self.push) != len(self.fetch):
            sys.exit("bench-shards: --push and --fetch list different numbers of endpoints")

    def cpu(self):
        return 0.0


def measure(fasgd, np, shards, clients, trips, warmup, seconds):
    """Steps per second of `clients` threads, and CPU seconds a step cost
    the servers and this process."""
    d = None
    counts = [0] * clients
    errors = []
    phase = {"stop": False}
    ready = threading.Barrier(clients + 1)

    def worker(i):
        try:
            with fasgd.Client(shards.push, shards.fetch, name="bench-%d" % i, timeout_ms=60000) as c:
                theta = c.fetch()
                grad = np.full(c.nparams, 1e-3, dtype=np.float32)
                ready.wait()
                while not phase["stop"]:
                    if trips == 1:
                        c.step_gated(grad, theta)
                    else:
                        c.push(grad)
                        c.fetch_into(theta)
                    counts[i] += 1
        except Exception as e:          # reported by the caller
            errors.append(e)
            try:
                ready.abort()
            except threading.BrokenBarrierError:
                pass

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        pass
    time.sleep(warmup)
    n0, c0, s0, t0 = sum(counts), cpu_seconds(os.getpid()), shards.cpu(), time.monotonic()
    time.sleep(seconds)
    n1, c1, s1, t1 = sum(counts), cpu_seconds(os.getpid()), shards.cpu(), time.monotonic()
    phase["stop"] = True
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    steps = max(n1 - n0, 1)
    return (n1 - n0) / (t1 - t0), (s1 - s0) / steps * 1e3, (c1 - c0) / steps * 1e3


def main():
    a = parse_args()
    os.environ.setdefault("FASGD_LIBRARY", os.path.join(a.build, "client", ".libs", "libfasgdclient.so"))
    sys.path.insert(0, os.path.join(TOP, "python"))
    sys.path.insert(0, os.path.join(a.build, "python"))
    import numpy as np
    import fasgd
    if a.push:
        rate, _, client_ms = measure(fasgd, np, Running(a.push, a.fetch), a.clients[0], a.trips,
                                     a.warmup, a.seconds)
        print("steps_per_s=%.3f\nclient_ms_per_step=%.2f" % (rate, client_ms))
        return
    exe = os.path.join(a.build, "server", "fasgd-server")
    if not os.access(exe, os.X_OK):
        sys.exit("bench-shards: no %s: build first (scripts/build build)" % exe)
    print("# bench-shards: %s" % " ".join(sys.argv[1:]) if sys.argv[1:] else "# bench-shards")
    print("# %d CPUs, load %.2f at start; %d trip%s a step" % (os.cpu_count(), os.getloadavg()[0],
                                                           a.trips, "" if a.trips == 1 else "s"))
    print("%12s %8s %7s %12s %8s %14s %14s" % ("D", "clients", "shards", "steps/s", "vs S=%d" % a.shards[0],
                                              "server ms/step", "client ms/step"))
    for d in a.sizes:
        for clients in a.clients:
            runs = {s: [] for s in a.shards}
            for _ in range(a.rounds):
                for s in a.shards:
                    shards = Shards(exe, d, s)
                    try:
                        runs[s].append(measure(fasgd, np, shards, clients, a.trips, a.warmup, a.seconds))
                    finally:
                        shards.stop()
            ref = statistics.median(r[0] for r in runs[a.shards[0]])
            for s in a.shards:
                rate = statistics.median(r[0] for r in runs[s])
                print("%12d %8d %7d %12.1f %8.2f %14.2f %14.2f" % (
                    d, clients, s, rate, rate / ref if ref else 0.0,
                    statistics.median(r[1] for r in runs[s]), statistics.median(r[2] for r in runs[s])))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
