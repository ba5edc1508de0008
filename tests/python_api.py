"""The Python module fasgd against live fasgd-servers on loopback: the
server's MLP (784-100-10, 79,510 parameters) with always-gates, and two
with B-FASGD gates (resend-last and accumulate). Reports TAP on stdout.

Run by tests/test_python.sh; by hand:
    FASGD_TOP_SRCDIR=. FASGD_TOP_BUILDDIR=build /usr/bin/python3 tests/python_api.py
"""

import ctypes
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

TOP_SRC = os.path.abspath(os.environ.get("FASGD_TOP_SRCDIR", "."))
TOP_BUILD = os.path.abspath(os.environ.get("FASGD_TOP_BUILDDIR", "."))
sys.path.insert(0, os.path.join(TOP_SRC, "python"))

import numpy as np      # noqa: E402

import fasgd            # noqa: E402
from fasgd import _lib  # noqa: E402

DATA = os.path.join(os.environ.get("FASGD_DATA_DIR") or os.path.join(TOP_SRC, "data"), "mnist")
SERVER = os.path.join(TOP_BUILD, "server", "fasgd-server")
MLP_TENSORS = [("w1", (784, 100)), ("b1", (1, 100)), ("w2", (100, 10)), ("b2", (1, 10))]
D = 79510

try:
    import torch
except ImportError:
    torch = None


class Server:
    """A fasgd-server on ephemeral loopback ports, with a configuration
    of extra YAML lines."""

    def __init__(self, tmp, name, extra=""):
        self.dir = tmp
        self.log = os.path.join(tmp, name + ".log")
        conf = os.path.join(tmp, name + ".yaml")
        ports = os.path.join(tmp, name + ".ports")
        keys = subprocess.run([SERVER, "--keys"], capture_output=True, text=True, timeout=30).stdout
        with open(conf, "w") as f:
            f.write("push_endpoint: tcp://127.0.0.1:*\n"
                    "fetch_endpoint: tcp://127.0.0.1:*\n"
                    "data: {dir: \"%s\"}\n"
                    "eval: {every: 1000000}\n"
                    "checkpoint: {file: \"\"}\n"
                    "log: {level: info}\n" % DATA)
            if "control_endpoint" in keys:
                f.write("control_endpoint: \"\"\n")
            f.write(extra)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([SERVER, "-c", conf, "--port-file", ports],
                                         stdout=log, stderr=subprocess.STDOUT,
                                         preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        while not (os.path.exists(ports) and os.path.getsize(ports) > 0):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fasgd-server did not start:\n" + self.log_text())
            time.sleep(0.05)
        with open(ports) as f:
            ep = dict(line.strip().split("=", 1) for line in f if "=" in line)
        self.push, self.fetch = ep["push"], ep["fetch"]

    def client(self, **kw):
        kw.setdefault("timeout_ms", 5000)
        return fasgd.Client(self.push, self.fetch, **kw)

    def log_text(self):
        with open(self.log) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _die_with_parent():
    """In the forked server: SIGTERM when this test process dies, however
    it dies (Linux's PR_SET_PDEATHSIG), so no server outlives the test."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, 15, 0, 0, 0)
    except (OSError, AttributeError):
        pass


servers = {}
tmpdir = None


def setUpModule():
    global tmpdir
    fasgd.library_path()        # a library that cannot load fails here, before any server
    tmpdir = tempfile.mkdtemp(prefix="fasgd-test-python-")
    # These test the traffic: a client's first pushes count at once, not
    # after the guard's probation (guard.probation), and pushes of zeros
    # move T: judged against a reference, a push that predicts nothing is
    # applied at one push in three or so, so no reference judges them.
    servers["mlp"] = Server(tmpdir, "mlp", "rule: {name: fasgd, lr: 0.005}\nguard: {probation: 0, examples: 0}\n")
    servers["resend"] = Server(tmpdir, "resend",
                               "gates:\n  fetch: {gate: bfasgd, c: 0.01}\n"
                               "  push: {gate: bfasgd, c: 0.01, skip: resend-last}\n"
                               "guard: {probation: 0, examples: 0}\n")
    # Its pushes of ones are a gate's test, not gradients: no guard
    # judges their direction, and every push moves T.
    servers["accumulate"] = Server(tmpdir, "accumulate",
                                   "gates:\n  push: {gate: bfasgd, c: 0.01, skip: accumulate}\n"
                                   "guard: {examples: 0}\n")


def tearDownModule():
    for s in servers.values():
        s.stop()
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


def mnist_batch(n=64):
    images = fasgd.idx.load(os.path.join(DATA, "train-images-idx3-ubyte.gz"))
    labels = fasgd.idx.load(os.path.join(DATA, "train-labels-idx1-ubyte.gz"))
    return images[:n].reshape(n, -1).astype(np.float32) / 255.0, labels[:n].astype(np.int64)


def mlp_loss_grad(views, x, y):
    """The relu MLP's mean cross-entropy on (x, y) and its gradient, per tensor."""
    w1, b1, w2, b2 = (v for _, v in views)
    h_pre = x @ w1 + b1
    h = np.maximum(h_pre, 0)
    logits = h @ w2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    n = len(y)
    loss = -np.log(p[np.arange(n), y] + 1e-12).mean()
    dlogits = p
    dlogits[np.arange(n), y] -= 1
    dlogits /= n
    gw2 = h.T @ dlogits
    gb2 = dlogits.sum(axis=0, keepdims=True)
    dh = (dlogits @ w2.T) * (h_pre > 0)
    gw1 = x.T @ dh
    gb1 = dh.sum(axis=0, keepdims=True)
    return float(loss), [g.astype(np.float32) for g in (gw1, gb1, gw2, gb2)]


class Library(unittest.TestCase):
    def test_library_loads_from_the_build_tree(self):
        path = fasgd.library_path()
        self.assertTrue(os.path.exists(path), path)
        self.assertEqual(fasgd.library_version(), fasgd.__version__)

    def test_struct_mirrors_match_the_library(self):
        lib = _lib.load()
        self.assertEqual(lib.fasgd_client_sizeof(b"fasgd_proto_desc_t"), ctypes.sizeof(_lib.ProtoDesc))
        self.assertEqual(lib.fasgd_client_sizeof(b"fasgd_client_stats_t"), ctypes.sizeof(_lib.ClientStats))

    def test_missing_library_is_named(self):
        code = ("import fasgd\n"
                "try:\n    fasgd.Client(join=False)\n"
                "except OSError as e:\n    print(e)\n")
        env = dict(os.environ, FASGD_LIBRARY="/nonexistent/libfasgdclient.so.0",
                   PYTHONPATH=os.path.join(TOP_SRC, "python"), PYTHONDONTWRITEBYTECODE="1")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=60).stdout
        self.assertIn("/nonexistent/libfasgdclient.so.0", out)
        self.assertIn("FASGD_LIBRARY", out)

    def test_module_works_without_torch(self):
        code = ("import sys\nsys.modules['torch'] = None\n"
                "import fasgd\nimport fasgd.torch_flat\n"
                "try:\n    fasgd.torch_flat.ParamBuffer(object())\n"
                "except ImportError as e:\n    print('ImportError:', e)\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(TOP_SRC, "python"), PYTHONDONTWRITEBYTECODE="1")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ImportError: fasgd.torch_flat needs PyTorch", r.stdout)

    def test_log_level(self):
        fasgd.set_log_level("notice")
        with self.assertRaises(ValueError):
            fasgd.set_log_level("loud")


class Idx(unittest.TestCase):
    def test_mnist_files(self):
        images = fasgd.idx.load(os.path.join(DATA, "train-images-idx3-ubyte.gz"))
        labels = fasgd.idx.load(os.path.join(DATA, "train-labels-idx1-ubyte.gz"))
        self.assertEqual(images.shape, (8000, 28, 28))
        self.assertEqual(images.dtype, np.uint8)
        self.assertEqual(labels.shape, (8000,))
        self.assertEqual(set(np.unique(labels)), set(range(10)))
        x, y = fasgd.idx.load_mnist(DATA, "t10k")
        self.assertEqual(x.shape, (2000, 28, 28))
        self.assertEqual(x.dtype, np.float32)
        self.assertLessEqual(float(x.max()), 1.0)
        self.assertEqual(y.shape, (2000,))

    def test_other_types_and_errors(self):
        raw = b"\x00\x00\x0d\x02" + (2).to_bytes(4, "big") + (3).to_bytes(4, "big") \
            + np.arange(6, dtype=">f4").tobytes()
        a = fasgd.idx.loads(raw)
        self.assertEqual(a.shape, (2, 3))
        self.assertEqual(a.dtype, np.float32)
        self.assertEqual(a.tolist(), [[0, 1, 2], [3, 4, 5]])
        for bad, why in ((b"\x01\x00\x08\x01", "bad magic"), (b"\x00\x00\x07\x01", "unknown IDX value type"),
                         (raw[:-1], "bytes of values"), (raw[:10], "truncated header")):
            with self.assertRaisesRegex(ValueError, why):
                fasgd.idx.loads(bad)


class Join(unittest.TestCase):
    def test_join_describes_the_mlp(self):
        with servers["mlp"].client(name="py-join") as c:
            self.assertTrue(c.joined)
            self.assertGreater(c.id, 0)
            self.assertEqual(c.nparams, D)
            self.assertEqual(c.tensors, MLP_TENSORS)
            self.assertEqual(c.model, "mlp")
            self.assertEqual(c.rule, "fasgd")
            d = c.description
            self.assertEqual(d["model.sizes"], "784,100,10")
            self.assertEqual(d["rule.lr"], 0.005)
            self.assertEqual(d["gates.fetch"], "always")
            self.assertEqual(c.last_status, 200)
            self.assertEqual(c.timestamp, 0)
        self.assertFalse(c.joined)
        self.assertIn("client %d (py-join) joined" % c.id, servers["mlp"].log_text())

    def test_join_later_leave_rejoin(self):
        c = servers["mlp"].client(join=False)
        self.assertFalse(c.joined)
        self.assertEqual(c.nparams, 0)
        c.join("py-later")
        first = c.id
        c.leave()
        self.assertFalse(c.joined)
        with self.assertRaises(fasgd.Error) as cm:
            c.leave()
        self.assertEqual(cm.exception.code, fasgd.ENOTJOINED)
        c.join()
        self.assertNotEqual(c.id, first)
        c.close()
        c.close()                        # idempotent
        with self.assertRaisesRegex(ValueError, "closed"):
            c.join()

    def test_push_and_fetch_before_join(self):
        c = servers["mlp"].client(join=False)
        try:
            for call in (lambda: c.push(np.zeros(D, np.float32), 0),
                         lambda: c.push_gated(np.zeros(D, np.float32)),
                         lambda: c.fetch_into(np.zeros(D, np.float32)),
                         c.fetch, c.want_push, lambda: c.eval(0.1, 0.2, 3)):
                with self.assertRaises(fasgd.Error) as cm:
                    call()
                self.assertEqual(cm.exception.code, fasgd.ENOTJOINED)
                self.assertEqual(cm.exception.name, "ENOTJOINED")
                self.assertIn("call join() first", str(cm.exception))
            with self.assertRaises(fasgd.Error):
                c.tensors
            self.assertEqual(c.stats["bytes_out"], 0)
        finally:
            c.close()

    def test_no_server_times_out(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        t0 = time.monotonic()
        with self.assertRaises(fasgd.Error) as cm:
            fasgd.Client("tcp://127.0.0.1:%d" % port, "tcp://127.0.0.1:%d" % port, timeout_ms=300)
        elapsed = time.monotonic() - t0
        self.assertEqual(cm.exception.code, fasgd.ETIMEOUT)
        self.assertEqual(cm.exception.call, "join")
        self.assertIn("no reply from the server within the timeout", str(cm.exception))
        self.assertLess(elapsed, 5.0)

    def test_server_gone_times_out_and_close_does_not_wait(self):
        server = Server(tmpdir, "gone")
        try:
            c = server.client(name="py-gone", timeout_ms=300)
            theta = c.fetch()
            c.push(np.zeros(D, np.float32), np.uint64(c.timestamp))
        finally:
            server.stop()
        t0 = time.monotonic()
        with self.assertRaises(fasgd.Error) as cm:
            c.push(np.zeros(D, np.float32))
        self.assertEqual(cm.exception.code, fasgd.ETIMEOUT)
        self.assertIn("within 300 ms", cm.exception.reason)
        with self.assertRaises(fasgd.Error):
            c.fetch_into(theta)
        c.close()               # no LEAVE to wait for after a timeout
        self.assertLess(time.monotonic() - t0, 3.0)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            fasgd.Client("not an endpoint", "tcp://127.0.0.1:1", join=False)
        with self.assertRaises(ValueError):
            fasgd.Client(timeout_ms=0, join=False)
        with self.assertRaises(ValueError):
            fasgd.Client(seed=-1, join=False)
        with self.assertRaises(ValueError):
            fasgd.Client(name="x" * 256, join=False)


class Traffic(unittest.TestCase):
    def setUp(self):
        self.c = servers["mlp"].client(name="py-traffic", seed=5)

    def tearDown(self):
        self.c.close()

    def test_fetch_into_and_fetch(self):
        theta = np.full(D, np.nan, dtype=np.float32)
        ts = self.c.fetch_into(theta)
        self.assertEqual(ts, self.c.timestamp)
        self.assertTrue(np.isfinite(theta).all())
        self.assertGreater(float(np.abs(theta).max()), 0)
        again = self.c.fetch()
        self.assertEqual(again.dtype, np.float32)
        self.assertEqual(again.shape, (D,))
        np.testing.assert_array_equal(again, theta)
        # Any shape of D values, e.g. a 2-D view.
        self.c.fetch_into(theta.reshape(2, -1))

    def test_fetch_if_newer_leaves_current_params_alone(self):
        theta = np.empty(D, dtype=np.float32)
        ts = self.c.fetch_into(theta)
        fetches = self.c.stats["fetches"]
        sentinel = np.full(D, 7.0, dtype=np.float32)
        self.assertEqual(self.c.fetch_into(sentinel, if_newer=True), ts)
        self.assertEqual(self.c.last_status, 304)
        self.assertTrue((sentinel == 7.0).all())
        self.assertEqual(self.c.stats["fetches"], fetches + 1)

    def test_per_tensor_arrays(self):
        flat = self.c.fetch()
        separate = [np.empty(shape, dtype=np.float32) for _, shape in MLP_TENSORS]
        self.c.fetch_into(separate)
        np.testing.assert_array_equal(np.concatenate([a.ravel() for a in separate]), flat)
        # Views back to back in one buffer are used in place.
        buf = np.zeros(D, dtype=np.float32)
        views = [v for _, v in self.c.views(buf)]
        self.assertEqual([v.shape for v in views], [s for _, s in MLP_TENSORS])
        self.c.fetch_into(views)
        np.testing.assert_array_equal(buf, flat)
        T = self.c.server_timestamp
        self.assertEqual(self.c.push([np.zeros(s, np.float32) for _, s in MLP_TENSORS]), T + 1)

    def test_push_zeros_advances_the_timestamp(self):
        theta = np.empty(D, dtype=np.float32)
        ts = self.c.fetch_into(theta)
        T = self.c.push(np.zeros(D, dtype=np.float32), ts)
        self.assertEqual(T, ts + 1)
        self.assertEqual(self.c.server_timestamp, T)
        self.assertEqual(self.c.stats["pushes"], 1)
        self.assertEqual(self.c.push(np.zeros(D, dtype=np.float32)), T + 1)   # default: c.timestamp
        self.assertEqual(self.c.fetch_into(theta), T + 1)
        # Under always-gates the server caches no gradient to repeat.
        with self.assertRaises(fasgd.Error) as cm:
            self.c.push_repeat()
        self.assertEqual((cm.exception.code, cm.exception.status), (fasgd.EREFUSED, 409))
        self.assertEqual(self.c.server_timestamp, T + 1)

    def test_real_gradients_lower_the_loss(self):
        x, y = mnist_batch()
        theta = np.empty(D, dtype=np.float32)
        views = self.c.views(theta)
        self.c.fetch_into(theta)
        first, _ = mlp_loss_grad(views, x, y)
        for _ in range(30):
            _, grads = mlp_loss_grad(views, x, y)
            self.c.push(grads)
            self.c.fetch_into(theta)
        last, _ = mlp_loss_grad(views, x, y)
        self.assertLess(last, first - 0.05, "loss %.4f -> %.4f" % (first, last))

    def test_wrong_arrays_are_refused_before_anything_is_sent(self):
        c = self.c
        c.fetch()
        before = c.stats
        cases = [
            (TypeError, "dtype float32", lambda: c.push(np.zeros(D, np.float64))),
            (TypeError, "dtype float32", lambda: c.fetch_into(np.zeros(D, ">f4"))),
            (TypeError, "numpy.ndarray", lambda: c.push(b"\0" * (4 * D))),
            (TypeError, "numpy.ndarray", lambda: c.fetch_into([0.0] * 4)),
            (ValueError, "79509 values", lambda: c.push(np.zeros(D - 1, np.float32))),
            (ValueError, "79511 values", lambda: c.fetch_into(np.zeros(D + 1, np.float32))),
            (ValueError, "79511 values", lambda: c.fetch_gated(np.zeros(D + 1, np.float32))),
            (ValueError, "79511 values", lambda: c.push_gated(np.zeros(D + 1, np.float32))),
            (ValueError, "C-contiguous", lambda: c.push(np.zeros(2 * D, np.float32)[::2])),
            (ValueError, "C-contiguous", lambda: c.fetch_into(np.zeros((D, 2), np.float32)[:, 0])),
            (ValueError, "C-contiguous", lambda: c.fetch_into(np.zeros((2, D // 2 + 1), np.float32).T)),
            (ValueError, "read-only", lambda: c.fetch_into(_readonly(D))),
            (ValueError, "3 arrays; the server has 4 tensors", lambda: c.push([np.zeros(1, np.float32)] * 3)),
            (ValueError, "tensor b1", lambda: c.fetch_into([np.zeros(s, np.float32) for _, s in MLP_TENSORS][:1]
                                                           + [np.zeros(99, np.float32)]
                                                           + [np.zeros(s, np.float32) for _, s in MLP_TENSORS][2:])),
            (ValueError, "timestamp", lambda: c.push(np.zeros(D, np.float32), -1)),
        ]
        for exc, text, call in cases:
            with self.assertRaises(exc) as cm:
                call()
            self.assertIn(text, str(cm.exception))
        self.assertEqual(c.stats, before)

    def test_refusal_carries_status_and_reason(self):
        self.c.fetch()
        grad = np.zeros(D, dtype=np.float32)
        grad[3] = np.nan
        with self.assertRaises(fasgd.Refused) as cm:
            self.c.push(grad)
        e = cm.exception
        self.assertIsInstance(e, fasgd.Error)
        self.assertEqual(e.code, fasgd.EREFUSED)
        self.assertEqual(e.status, 422)
        self.assertEqual((self.c.stats["refused"], self.c.stats["pushes"]), (1, 0))
        self.assertTrue(e.reason)
        self.assertIn("the server refused the request", e.message)
        self.assertIn("422", str(e))
        self.assertEqual(self.c.last_status, 422)
        self.assertTrue(self.c.joined)
        # Counted apart: a push taken next is a push, the refusal stays one.
        self.c.push(np.zeros(D, dtype=np.float32))
        self.assertEqual((self.c.stats["refused"], self.c.stats["pushes"]), (1, 1))

    def test_refused_wait_doubles_and_ends_with_a_push(self):
        # Client.refused_wait: nothing after the first refusal in a row,
        # then 10 ms doubling; a push the server took ends the run.
        self.c.fetch()
        grad = np.zeros(D, dtype=np.float32)
        grad[3] = np.nan
        waits = []
        for _ in range(4):
            with self.assertRaises(fasgd.Refused):
                self.c.push(grad)
            t0 = time.monotonic()
            waits.append(self.c.refused_wait())
            self.assertGreaterEqual(time.monotonic() - t0, waits[-1])
        self.assertEqual(waits, [0.0, 0.01, 0.02, 0.04])
        self.c.push(np.zeros(D, dtype=np.float32))
        with self.assertRaises(fasgd.Refused):
            self.c.push(grad)
        self.assertEqual(self.c.refused_wait(), 0.0)

    def test_forgotten_client_joins_again(self):
        # limits.refusals (10) refusals in a row: the server forgets the
        # client; the next request gets 401, and join() starts afresh
        # (what examples/torch_mnist.py does).
        self.c.fetch()
        grad = np.zeros(D, dtype=np.float32)
        grad[3] = np.nan
        for _ in range(10):
            with self.assertRaises(fasgd.Error) as cm:
                self.c.push(grad)
            self.assertEqual(cm.exception.status, 422)
        old = self.c.id
        with self.assertRaises(fasgd.Error) as cm:
            self.c.push(np.zeros(D, dtype=np.float32))
        self.assertEqual(cm.exception.status, 401)
        self.assertNotIsInstance(cm.exception, fasgd.Refused)
        self.assertFalse(self.c.joined)
        self.c.join()
        self.assertGreater(self.c.id, old)
        self.c.fetch()
        self.c.push(np.zeros(D, dtype=np.float32))

    def test_eval_and_leave(self):
        self.c.fetch()
        self.c.eval(0.125, 0.5, 2000)
        self.c.leave()
        self.assertFalse(self.c.joined)
        log = servers["mlp"].log_text()
        self.assertIn("error=0.125", log)
        self.assertIn("examples=2000", log)
        self.assertIn("client %d (py-traffic) left" % self.c.id, log)
        with self.assertRaises(fasgd.Error) as cm:
            self.c.push(np.zeros(D, np.float32))
        self.assertIn("call join() again", str(cm.exception))

    def test_always_gates(self):
        theta = np.empty(D, dtype=np.float32)
        self.assertTrue(self.c.want_push())
        self.assertTrue(self.c.want_fetch())
        self.assertTrue(self.c.fetch_gated(theta))
        self.assertEqual(self.c.push_gated(np.zeros(D, np.float32)), "push")

    def test_step_gated(self):
        # Gates always: push and fetch in one round trip; θ after the push.
        theta = self.c.fetch()
        ts = self.c.timestamp
        before = self.c.stats
        g = np.full(D, 1e-3, np.float32)
        refreshed, tau = self.c.step_gated(g, theta)
        self.assertTrue(refreshed)
        self.assertEqual(tau, 0)
        self.assertEqual(self.c.timestamp, ts + 1)
        np.testing.assert_array_equal(theta, self.c.fetch())
        after = self.c.stats
        self.assertEqual(after["pushes"], before["pushes"] + 1)
        self.assertEqual(after["fetches"], before["fetches"] + 2)
        with self.assertRaisesRegex(ValueError, "read-only"):
            self.c.step_gated(g, _readonly(D))
        with self.assertRaisesRegex(ValueError, "79509 values"):
            self.c.step_gated(np.zeros(D - 1, np.float32), theta)


def _readonly(n):
    a = np.zeros(n, np.float32)
    a.setflags(write=False)
    return a


class Gates(unittest.TestCase):
    def test_bfasgd_resend_last(self):
        with servers["resend"].client(name="py-resend", seed=3) as c:
            self.assertEqual(c.description["gates.push.skip"], "resend-last")
            theta = np.empty(D, dtype=np.float32)
            self.assertTrue(c.fetch_gated(theta))           # the first always fetches
            self.assertEqual(c.push_gated(np.zeros(D, np.float32)), "push")   # the first always pushes
            actions, refreshed = [], []
            for _ in range(60):
                actions.append(c.push_gated(np.zeros(D, np.float32)))
                refreshed.append(c.fetch_gated(theta))
            self.assertIn("push", actions)
            self.assertIn("repeat", actions)
            self.assertNotIn("accumulate", actions)
            s = c.stats
            self.assertEqual(s["pushes"], 1 + actions.count("push"))
            self.assertEqual(s["repeats"], actions.count("repeat"))
            self.assertEqual(s["fetch_skips"], refreshed.count(False))
            self.assertGreater(s["fetch_skips"], 0)
            self.assertGreater(c.vbar, 0)
            draws = [c.want_push() for _ in range(50)]
            self.assertIn(True, draws)
            self.assertIn(False, draws)
            T = c.server_timestamp
            self.assertEqual(c.push_repeat(), T + 1)

    def test_bfasgd_accumulate(self):
        with servers["accumulate"].client(name="py-accumulate", seed=3) as c:
            theta = c.fetch()
            actions = [c.push_gated(np.ones(D, np.float32)) for _ in range(40)]
            self.assertEqual(actions[0], "push")
            self.assertIn("accumulate", actions)
            self.assertNotIn("repeat", actions)
            self.assertEqual(c.stats["accumulated"], actions.count("accumulate"))
            self.assertEqual(c.server_timestamp, actions.count("push"))
            self.assertTrue(c.fetch_gated(theta) in (True, False))


class Shards(unittest.TestCase):
    """The MLP split across two servers: one Client given both shards'
    endpoints trains it whole."""

    @classmethod
    def setUpClass(cls):
        cls.shards = [Server(tmpdir, "shard%d" % i, "rule: {name: fasgd, lr: 0.005}\n"
                             "shard: {count: 2, index: %d}\n" % i) for i in (0, 1)]

    @classmethod
    def tearDownClass(cls):
        for s in cls.shards:
            s.stop()

    def test_trains_across_shards(self):
        push = [s.push for s in self.shards]
        fetch = [s.fetch for s in self.shards]
        with fasgd.Client(push, fetch, name="py-shards", seed=5) as c:
            self.assertEqual(c.shards, 2)
            self.assertEqual(c.nparams, D)
            self.assertEqual(c.description["params"], D)
            x, y = mnist_batch(64)
            theta = c.fetch()
            first = None
            for _ in range(60):
                loss, grads = mlp_loss_grad(c.views(theta), x, y)
                first = loss if first is None else first
                c.push(grads)
                theta = c.fetch()
            self.assertLess(loss, first * 0.7)
            # Each shard applied all 60 pushes: the sum of their T.
            self.assertEqual(c.server_timestamp, 120)
            self.assertEqual(c.stats["pushes"], 120)
        # Given as lists, both must list as many endpoints.
        with self.assertRaises(ValueError):
            fasgd.Client(push, fetch[:1], join=False)
        # One shard alone is no model.
        with self.assertRaises(fasgd.Error) as cm:
            fasgd.Client(push[1], fetch[1])
        self.assertIn("shard 1 of 2", str(cm.exception))


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchFlat(unittest.TestCase):
    def mlp(self):
        m = torch.nn.Module()
        for name, shape in MLP_TENSORS:
            setattr(m, name, torch.nn.Parameter(torch.randn(shape) * 0.01))
        return m

    def test_param_buffer_is_the_models_memory(self):
        torch.manual_seed(0)
        m = self.mlp()
        with servers["mlp"].client(name="py-torch") as c:
            pb = fasgd.torch_flat.ParamBuffer(m, c)
            self.assertEqual(pb.spec(), "w1:784x100,b1:1x100,w2:100x10,b2:1x10")
            c.fetch_into(pb.params)
            np.testing.assert_array_equal(m.w1.detach().numpy(), c.fetch()[:784 * 100].reshape(784, 100))
            x, y = mnist_batch(16)
            pb.zero_grad()
            xt = torch.from_numpy(x)
            logits = torch.relu(xt @ m.w1 + m.b1) @ m.w2 + m.b2
            torch.nn.functional.cross_entropy(logits, torch.from_numpy(y)).backward()
            pb.check()
            _, want = mlp_loss_grad([(n, v) for n, v in c.views(pb.params)], x, y)
            np.testing.assert_allclose(pb.grads, np.concatenate([g.ravel() for g in want]),
                                       rtol=1e-3, atol=1e-6)
            T = c.server_timestamp
            self.assertEqual(c.push(pb.grads), T + 1)
            # The torch buffers themselves are accepted, and shared.
            c.fetch_into(pb.flat)
            np.testing.assert_array_equal(m.b2.detach().numpy().ravel(), c.fetch()[-10:])
            with self.assertRaisesRegex(TypeError, "dtype float32"):
                c.push(pb.grad_flat.double())
            m.w1.grad = None
            with self.assertRaisesRegex(RuntimeError, "w1's .grad is None"):
                pb.grads

    def test_mismatch_lists_every_tensor(self):
        m = self.mlp()
        del m.b2
        m.extra = torch.nn.Parameter(torch.zeros(3))
        m.w2 = torch.nn.Parameter(torch.zeros(10, 100))
        with self.assertRaises(ValueError) as cm:
            fasgd.torch_flat.ParamBuffer(m, tensors=MLP_TENSORS)
        text = str(cm.exception)
        self.assertIn("b2 (1x10) is on the server but not in the model", text)
        self.assertIn("extra (3) is in the model but not on the server", text)
        self.assertIn("w2: the server's shape is 100x10, the model's 10x100", text)


class TapResult(unittest.TestResult):
    """One TAP line per test."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        self.n = 0

    def _line(self, ok, test, extra=""):
        self.n += 1
        self.stream.write("%s %d - %s%s\n" % ("ok" if ok else "not ok", self.n, test.id().replace("__main__.", ""), extra))
        self.stream.flush()

    def _diag(self, text):
        for line in text.rstrip().splitlines():
            self.stream.write("# %s\n" % line)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test)
        self._diag(self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        if not hasattr(test, "id") or not callable(getattr(test, "id", None)) \
                or isinstance(test, unittest.suite._ErrorHolder):
            self._diag("error in %s:\n%s" % (test, self.errors[-1][1]))
            return
        self._line(False, test)
        self._diag(self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, " # SKIP %s" % reason)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    total = suite.countTestCases()
    print("1..%d" % total, flush=True)
    result = TapResult(sys.stdout)
    suite.run(result)
    # A module set-up failure runs no test: report the rest as failed.
    while result.n < total:
        result.n += 1
        print("not ok %d - not run" % result.n)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
