#!/usr/bin/python3
"""numpy-sim: a vectorised numpy simulator of the paper's setting, the
yardstick that fasgd-sim's speed is compared with (bench-sim --numpy).

It runs the simulation order of docs/ALGORITHMS.md with the asgd or the
fasgd (std) rule and the always gates: lambda clients, each with its own
copy of theta and its timestamp; each iteration picks a client uniformly at
random, the client computes the mean gradient of minibatch (i mod the
number of minibatches) of a 784-H-10 ReLU MLP on its copy, the server
applies the rule with tau = T - j, and the client fetches theta. The
validation error and NLL are measured every EVERY timestamps on the whole
validation set in one pass.

It is written to be fast in numpy's terms: float32 throughout, every
buffer allocated once and written with out=, theta and the gradient flat
vectors with views for the layers. It does not leave out blank input
columns, share equal client copies, or compute gradients ahead: those are
fasgd-sim's own. Its numbers are not fasgd-sim's (other initial weights,
another random stream); its work per iteration is the same.

Only the loop is timed (loading and the clients' first copies are not),
as bench-sim times fasgd_sim_run. The last line printed is

    numpy-sim: RULE ITERATIONS iterations in S s: R it/s, ...

OpenBLAS's thread count is set from --threads before numpy is loaded.
"""

import argparse
import gzip
import os
import struct
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="numpy-sim",
        description="vectorised numpy simulator of asynchronous SGD "
        "(asgd or fasgd), timed like bench-sim times fasgd-sim")
    p.add_argument("--data", default="data/mnist",
                   help="directory of the IDX files (default data/mnist)")
    p.add_argument("--rule", choices=("asgd", "fasgd"), default="fasgd")
    p.add_argument("--lr", type=float, default=None,
                   help="learning rate (default 0.05 for asgd, 0.005 for fasgd)")
    p.add_argument("--iterations", type=int, default=5000)
    p.add_argument("--clients", type=int, default=1000)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--hidden", type=int, default=100)
    p.add_argument("--every", type=int, default=100,
                   help="validate every N timestamps (default 100)")
    p.add_argument("--threads", type=int, default=0,
                   help="OpenBLAS threads (default: OpenBLAS's own choice)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    for name in ("iterations", "clients", "batch", "hidden", "every"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name)
    if a.threads < 0:
        p.error("--threads must be at least 0")
    if a.lr is None:
        a.lr = 0.05 if a.rule == "asgd" else 0.005
    return a


def read_idx(path):
    """The array in an IDX file, gzipped or not."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 8:
        sys.exit("numpy-sim: %s: not an IDX file of unsigned bytes" % path)
    ndim = raw[3]
    dims = struct.unpack(">%dI" % ndim, raw[4:4 + 4 * ndim])
    count = 1
    for d in dims:
        count *= d
    if len(raw) != 4 + 4 * ndim + count:
        sys.exit("numpy-sim: %s: size does not match its header" % path)
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(data, stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(data, name)
        if os.path.exists(path):
            return path
    sys.exit("numpy-sim: no %s[.gz] in %s (run scripts/get-mnist)" % (stem, data))


def load(data, stem):
    x = read_idx(find(data, stem + "-images-idx3-ubyte"))
    y = read_idx(find(data, stem + "-labels-idx1-ubyte"))
    x = (x.reshape(x.shape[0], -1).astype(np.float32) / np.float32(255))
    return np.ascontiguousarray(x), y.astype(np.intp)


def main(argv):
    a = parse_args(argv)
    if a.threads > 0:
        os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    global np
    import numpy as np

    x, y = load(a.data, "train")
    vx, vy = load(a.data, "t10k")
    n, d = x.shape
    h, k, mu = a.hidden, 10, a.batch
    if n < mu:
        sys.exit("numpy-sim: %d training examples, fewer than a batch of %d" % (n, mu))
    nbatches = n // mu
    batches = [(x[i * mu:(i + 1) * mu], y[i * mu:(i + 1) * mu]) for i in range(nbatches)]

    # theta = [W1 (d x h), b1 (h), W2 (h x k), b2 (k)], He initialisation.
    sizes = (d * h, h, h * k, k)
    nparams = sum(sizes)
    rng = np.random.default_rng(a.seed)
    theta = np.zeros(nparams, dtype=np.float32)
    theta[:d * h] = rng.standard_normal(d * h) * np.sqrt(2.0 / d)
    theta[d * h + h:d * h + h + h * k] = rng.standard_normal(h * k) * np.sqrt(2.0 / h)

    def views(v):
        o1, o2, o3 = d * h, d * h + h, d * h + h + h * k
        return (v[:o1].reshape(d, h), v[o1:o2], v[o2:o3].reshape(h, k), v[o3:])

    copies = np.tile(theta, (a.clients, 1))
    stamps = np.zeros(a.clients, dtype=np.int64)
    picks = rng.integers(0, a.clients, size=a.iterations)

    g = np.empty(nparams, dtype=np.float32)
    gW1, gb1, gW2, gb2 = views(g)
    H = np.empty((mu, h), dtype=np.float32)
    Z = np.empty((mu, k), dtype=np.float32)
    dH = np.empty((mu, h), dtype=np.float32)
    active = np.empty((mu, h), dtype=bool)
    rows = np.arange(mu)
    tmp = np.empty(nparams, dtype=np.float32)
    sn = np.zeros(nparams, dtype=np.float32)
    sb = np.zeros(nparams, dtype=np.float32)
    sv = np.zeros(nparams, dtype=np.float32)
    gamma, beta, eps = np.float32(0.9), np.float32(0.9), np.float32(1e-4)
    one = np.float32(1)
    W1, b1, W2, b2 = views(theta)
    VH = np.empty((vx.shape[0], h), dtype=np.float32)
    VZ = np.empty((vx.shape[0], k), dtype=np.float32)
    vrows = np.arange(vx.shape[0])

    def gradient(c, xb, yb):
        cW1, cb1, cW2, cb2 = views(copies[c])
        np.matmul(xb, cW1, out=H)
        np.add(H, cb1, out=H)
        np.maximum(H, 0, out=H)
        np.matmul(H, cW2, out=Z)
        np.add(Z, cb2, out=Z)
        np.subtract(Z, Z.max(axis=1, keepdims=True), out=Z)
        np.exp(Z, out=Z)
        np.divide(Z, Z.sum(axis=1, keepdims=True), out=Z)
        Z[rows, yb] -= one
        np.multiply(Z, np.float32(1.0 / mu), out=Z)
        np.matmul(H.T, Z, out=gW2)
        Z.sum(axis=0, out=gb2)
        np.matmul(Z, cW2.T, out=dH)
        np.greater(H, 0, out=active)
        np.multiply(dH, active, out=dH)
        np.matmul(xb.T, dH, out=gW1)
        dH.sum(axis=0, out=gb1)

    def apply(tau):
        if a.rule == "asgd":
            np.multiply(g, np.float32(a.lr), out=tmp)
            np.subtract(theta, tmp, out=theta)
            return
        np.multiply(g, g, out=tmp)
        np.multiply(tmp, one - gamma, out=tmp)
        np.multiply(sn, gamma, out=sn)
        np.add(sn, tmp, out=sn)
        np.multiply(g, one - gamma, out=tmp)
        np.multiply(sb, gamma, out=sb)
        np.add(sb, tmp, out=sb)
        np.multiply(sb, sb, out=tmp)
        np.subtract(sn, tmp, out=tmp)
        np.maximum(tmp, 0, out=tmp)
        np.add(tmp, eps, out=tmp)
        np.sqrt(tmp, out=tmp)
        np.divide(one - beta, tmp, out=tmp)
        np.multiply(sv, beta, out=sv)
        np.add(sv, tmp, out=sv)
        np.multiply(sv, g, out=tmp)
        np.multiply(tmp, np.float32(a.lr / max(tau, 1)), out=tmp)
        np.subtract(theta, tmp, out=theta)

    def validate():
        np.matmul(vx, W1, out=VH)
        np.add(VH, b1, out=VH)
        np.maximum(VH, 0, out=VH)
        np.matmul(VH, W2, out=VZ)
        np.add(VZ, b2, out=VZ)
        err = float(np.mean(VZ.argmax(axis=1) != vy))
        np.subtract(VZ, VZ.max(axis=1, keepdims=True), out=VZ)
        nll = float(np.mean(np.log(np.exp(VZ).sum(axis=1)) - VZ[vrows, vy]))
        return err, nll

    T = 0
    err, nll = validate()
    t0 = time.perf_counter()
    c0 = time.process_time()
    for i in range(a.iterations):
        c = picks[i]
        xb, yb = batches[i % nbatches]
        gradient(c, xb, yb)
        apply(T - stamps[c])
        T += 1
        np.copyto(copies[c], theta)
        stamps[c] = T
        if T % a.every == 0:
            err, nll = validate()
    secs = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print("numpy-sim: %s %d iterations in %.3f s: %.0f it/s, %.0f it/cpu-s, "
          "validation error %.4f, NLL %.4f"
          % (a.rule, a.iterations, secs, a.iterations / secs, a.iterations / cpu, err, nll))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
