#!/usr/bin/python3
"""A PyTorch convolutional network trained on the MNIST digits as one
asynchronous fasgd worker. fasgd-server holds the parameters as an
external model (it knows only their names and shapes); this process
computes gradients and reports validation results.

    # the server's configuration and initial θ (PyTorch's default init, seeded):
    examples/torch_mnist.py --write-server-config /tmp/tm
    build/server/fasgd-server -c /tmp/tm/server.yaml &

    # as many workers as you like, each with its own minibatch order:
    examples/torch_mnist.py -s tcp://127.0.0.1:5555 -f tcp://127.0.0.1:5556 --index 0 --updates 6000
    examples/torch_mnist.py -s tcp://127.0.0.1:5555 -f tcp://127.0.0.1:5556 --index 1 --updates 6000

    # the validation error of the server's current θ, reported to it:
    examples/torch_mnist.py -s tcp://127.0.0.1:5555 -f tcp://127.0.0.1:5556 --evaluate

examples/torch_cluster.sh does all of that on loopback ports. Worker 0
(--index 0) evaluates on the validation digits every --eval-every steps and
reports each result to the server (Client.eval), which logs it and writes
it to its CSV. The parameters and gradients are views of one flat buffer
each (fasgd.torch_flat.ParamBuffer): a fetch writes straight into the
model, a push reads straight from its .grad tensors.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The module of this source tree, when it is not installed.
if os.path.isdir(os.path.join(HERE, "..", "python", "fasgd")):
    sys.path.insert(0, os.path.join(HERE, "..", "python"))

import numpy as np      # noqa: E402

import fasgd            # noqa: E402

# The learning rate the written server configuration carries (rule fasgd).
DEFAULT_LR = 0.003


def build_model(torch):
    nn = torch.nn

    class Net(nn.Module):
        """conv 1→32 3x3, pool, conv 32→64 3x3, pool, fc 3136→10: 50,186
        parameters, about 8 MFLOP per digit forward."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
            self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
            self.fc = nn.Linear(64 * 7 * 7, 10)

        def forward(self, x):
            f = nn.functional
            x = f.max_pool2d(f.relu(self.conv1(x)), 2)
            x = f.max_pool2d(f.relu(self.conv2(x)), 2)
            return self.fc(x.flatten(1))

    return Net()


def load_split(data, split):
    images, labels = fasgd.idx.load_mnist(data, split)
    return images[:, None, :, :].copy(), labels


def shifted(xb, rng, k):
    """Each image of xb (n, 1, 28, 28) moved by up to k pixels each way,
    zero-filled: the digits seen vary from epoch to epoch, which keeps a
    network trained long on 8,000 of them from learning them by heart."""
    if k == 0:
        return xb
    n, _, h, w = xb.shape
    padded = np.pad(xb, ((0, 0), (0, 0), (k, k), (k, k)))
    dy, dx = rng.integers(0, 2 * k + 1, n), rng.integers(0, 2 * k + 1, n)
    return np.stack([padded[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(n)])


def evaluate(torch, model, x, y, batch=500):
    """(error rate, mean NLL) of model on (x, y)."""
    wrong, nll = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            xb, yb = torch.from_numpy(x[i:i + batch]), torch.from_numpy(y[i:i + batch])
            logits = model(xb)
            nll += float(torch.nn.functional.cross_entropy(logits, yb, reduction="sum"))
            wrong += int((logits.argmax(1) != yb).sum())
    return wrong / len(x), nll / len(x)


def write_server_config(torch, args):
    """DIR/theta.npy (the seeded default init, in the server's order) and
    DIR/server.yaml naming it."""
    os.makedirs(args.write_server_config, exist_ok=True)
    torch.manual_seed(args.seed)
    model = build_model(torch)
    theta = fasgd.torch_flat.flat_parameters(model)
    init = os.path.abspath(os.path.join(args.write_server_config, "theta.npy"))
    np.save(init, theta)
    conf = os.path.join(args.write_server_config, "server.yaml")
    with open(conf, "w") as f:
        f.write("# fasgd-server for examples/torch_mnist.py: an external model of %d parameters\n"
                "push_endpoint: tcp://127.0.0.1:5555\n"
                "fetch_endpoint: tcp://127.0.0.1:5556\n"
                "clients: 4\n"
                "external:\n"
                "  tensors: %s\n"
                "  init: %s\n"
                "rule:                 # lr: measured with 4 workers, batch 32 (torch_cluster.sh)\n"
                "  name: fasgd\n"
                "  lr: %g\n"
                "gates:\n"
                "  fetch: {gate: always}\n"
                "  push: {gate: always}\n"
                % (theta.size, fasgd.torch_flat.tensors_spec(model), init, args.lr))
    print("wrote %s and %s (%d parameters)" % (conf, init, theta.size))


def run_evaluate(torch, args):
    """Fetches θ, evaluates it on the validation digits, reports it."""
    xv, yv = load_split(args.data, "t10k")
    model = build_model(torch)
    with fasgd.Client(args.server, args.fetch, timeout_ms=args.timeout_ms, name="torch-eval") as c:
        pb = fasgd.torch_flat.ParamBuffer(model, c)
        T = c.fetch_into(pb.params)
        err, nll = evaluate(torch, model, xv, yv)
        c.eval(err, nll, len(xv))
    print("T=%d validation error %.4f (nll %.4f) on %d digits" % (T, err, nll, len(xv)))


def run_worker(torch, args):
    x, y = load_split(args.data, "train")
    xv = yv = None
    if args.index == 0 and args.eval_every > 0:
        xv, yv = load_split(args.data, "t10k")
    model = build_model(torch)
    rng = np.random.default_rng(args.seed if args.seed is not None else args.index + 1)
    name = "torch-%d" % args.index
    t0 = time.monotonic()
    with fasgd.Client(args.server, args.fetch, timeout_ms=args.timeout_ms, name=name,
                      seed=args.index + 1) as c:
        if c.model != "external":
            sys.exit("%s: the server trains its own %s model; start it with the configuration "
                     "of --write-server-config" % (name, c.model))
        pb = fasgd.torch_flat.ParamBuffer(model, c)      # checks names and shapes
        c.fetch_gated(pb.params)
        order, pos = rng.permutation(len(x)), 0
        step, done, refused = 0, False, 0
        while not done:
            step += 1
            if pos + args.batch > len(order):
                order, pos = rng.permutation(len(x)), 0
            idx = order[pos:pos + args.batch]
            pos += args.batch
            pb.zero_grad()
            xb = shifted(x[idx], rng, args.shift)
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(xb)),
                                                     torch.from_numpy(y[idx]))
            loss.backward()
            try:
                c.step_gated(pb.grads, pb.params)   # push (computed on θ of c.timestamp), then fetch
            except fasgd.Refused as e:
                # 422: the server's guard refused this gradient (NaN, an
                # outsized norm, a harmful direction; limits.* and guard.*
                # in fasgd.yaml(5)); nothing was applied. Counted apart
                # from the pushes; go on from fresh parameters, as
                # fasgd-client does, after a wait that doubles while the
                # refusals go on (none after the first, 10 ms to 1 s).
                refused += 1
                waited = c.refused_wait()
                print("%s: step %d: %s; going on%s" % (name, step, e.reason,
                      " after %.0f ms" % (1000 * waited) if waited else ""), flush=True)
                c.fetch_into(pb.params)
            except fasgd.Error as e:
                # 401: the server forgot this client (limits.refusals
                # refusals in a row, or silence past heartbeat.expiry_ms).
                if e.status != 401 or c.joined:
                    raise
                c.join()
                print("%s: step %d: %s; joined again as client %d"
                      % (name, step, e.reason, c.id), flush=True)
                c.fetch_into(pb.params)
            done = (args.steps > 0 and step >= args.steps
                    or args.updates > 0 and c.server_timestamp >= args.updates)
            if xv is not None and ((args.eval_every > 0 and step % args.eval_every == 0) or done):
                err, nll = evaluate(torch, model, xv, yv)
                c.eval(err, nll, len(xv))
                print("%s: step %d  T=%d  validation error %.4f  (nll %.4f, %.0f s)"
                      % (name, step, c.timestamp, err, nll, time.monotonic() - t0), flush=True)
        s = c.stats
    secs = time.monotonic() - t0
    print("%s: %d steps in %.1f s (%.1f steps/s), %d pushes, %d repeats, %d accumulated, "
          "%d fetches, %d skipped, %d gradients refused (422)"
          % (name, step, secs, step / secs, s["pushes"], s["repeats"], s["accumulated"],
             s["fetches"], s["fetch_skips"], refused), flush=True)


def main():
    p = argparse.ArgumentParser(description="Train a small CNN on MNIST as one fasgd worker.")
    p.add_argument("-s", "--server", metavar="ENDPOINT", help="the server's push endpoint")
    p.add_argument("-f", "--fetch", metavar="ENDPOINT", help="the server's fetch endpoint")
    p.add_argument("--data", default=os.path.join(os.environ.get("FASGD_DATA_DIR")
                                                  or os.path.join(HERE, "..", "data"), "mnist"),
                   help="folder of the MNIST IDX files (default: $FASGD_DATA_DIR/mnist, "
                        "else data/mnist of this tree)")
    p.add_argument("--index", type=int, default=0,
                   help="this worker's number; 0 evaluates (default 0)")
    p.add_argument("--steps", type=int, default=0,
                   help="stop after this many gradient steps (default 0: no limit)")
    p.add_argument("--updates", type=int, default=6000,
                   help="stop once the server's timestamp reaches this, so that workers started "
                        "together stop together (default 6000; 0: no limit)")
    p.add_argument("--batch", type=int, default=32, help="minibatch size (default 32)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the minibatch order (default: index + 1); with "
                        "--write-server-config, of the initial parameters (default 1)")
    p.add_argument("--shift", type=int, default=2,
                   help="move each training digit by up to this many pixels (default 2; 0: never)")
    p.add_argument("--eval-every", type=int, default=250,
                   help="worker 0 evaluates every this many steps; 0: only at the end (default 250)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--timeout-ms", type=int, default=10000, help="wait for each reply (default 10000)")
    p.add_argument("--evaluate", action="store_true",
                   help="evaluate the server's θ on the validation digits, report it and exit")
    p.add_argument("--write-server-config", metavar="DIR",
                   help="write DIR/server.yaml and DIR/theta.npy for fasgd-server and exit")
    p.add_argument("--lr", type=float, default=DEFAULT_LR,
                   help="with --write-server-config: rule.lr (default %g)" % DEFAULT_LR)
    args = p.parse_args()

    try:
        import torch
    except ImportError:
        sys.exit("torch_mnist.py needs PyTorch (Debian: apt-get install python3-torch)")
    torch.set_num_threads(args.threads)

    if args.write_server_config:
        if args.seed is None:
            args.seed = 1
        write_server_config(torch, args)
        return 0
    if not args.server or not args.fetch:
        p.error("the server's endpoints are required (-s and -f), or --write-server-config DIR")
    if args.batch < 1 or args.steps < 0 or args.updates < 0 or args.eval_every < 0:
        p.error("--batch must be at least 1; --steps, --updates and --eval-every at least 0")
    if args.steps == 0 and args.updates == 0 and not args.evaluate:
        p.error("--steps 0 and --updates 0 would never stop")
    try:
        if args.evaluate:
            run_evaluate(torch, args)
        else:
            run_worker(torch, args)
    except fasgd.Error as e:
        sys.exit("torch_mnist.py: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
