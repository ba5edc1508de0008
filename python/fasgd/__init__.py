"""fasgd: a Python client of fasgd-server, over libfasgdclient.

A training loop in any framework becomes an asynchronous fasgd worker:

    import fasgd, numpy as np

    with fasgd.Client("tcp://host:5555", "tcp://host:5556", name="worker-1") as c:
        theta = np.empty(c.nparams, dtype=np.float32)
        c.fetch_into(theta)                     # θ and its timestamp (c.timestamp)
        for step in range(1000):
            grad = compute_gradient(theta)      # float32, c.nparams values
            c.step_gated(grad, theta)           # push (grad computed on θ of c.timestamp),
                                                # then refresh θ: each through its gate

The Client joins the server when it is made (join=False defers that to
join()), and leaves it when closed (close(), or the end of a with block).
Parameters and gradients are float32, C-contiguous numpy arrays of
nparams values, or lists of one array per tensor in the server's order
(client.tensors); they are read and written in place, and anything else is
refused with TypeError or ValueError before the library is called. A
failure of the library raises fasgd.Error with its code and reason; a
gradient the server refused (status 422: NaN or Inf, or judged outsized or
harmful by its guard) raises fasgd.Refused, a kind of fasgd.Error: nothing
was applied, and a loop counts it (Client.stats["refused"] does too) and
goes on from fresh parameters.

fasgd.torch_flat lays a PyTorch module's parameters and gradients out as
views of one flat buffer each, so fetches and pushes move no extra copies;
fasgd.idx reads MNIST's IDX files. Neither needs the library, and torch is
imported only when fasgd.torch_flat is used.

The library is looked up, in order: $FASGD_LIBRARY; the build tree
($FASGD_TOP_BUILDDIR, or the tree this module sits in); the libdir it was
installed to; `pkg-config --variable=libdir fasgd`;
ctypes.util.find_library("fasgdclient"); libfasgdclient.so.0.
Calls on one Client are serialised by a lock; while it is joined, the
library's own thread sends the heartbeats that keep an idle client known.
"""

import ctypes
import operator
import threading
import time
import weakref

import numpy as _np

from . import _lib
from . import idx            # noqa: F401  (fasgd.idx.load)
from . import torch_flat     # noqa: F401  (imports torch only when used)
from ._lib import (ETIMEOUT, EPROTO, EREFUSED, ENOTJOINED, EINVAL,  # noqa: F401
                   ENOMEM, ESOCKET, EVERSION, ESECURITY)

__all__ = ["Client", "Error", "Refused", "library_version", "library_path", "set_log_level",
           "ETIMEOUT", "EPROTO", "EREFUSED", "ENOTJOINED", "EINVAL", "ENOMEM",
           "ESOCKET", "EVERSION", "ESECURITY", "idx", "torch_flat"]


def __getattr__(name):
    # __version__: the installed module's, else the library's.
    if name == "__version__":
        try:
            from ._config import VERSION
            return VERSION
        except ImportError:
            return library_version()
    raise AttributeError("module 'fasgd' has no attribute %r" % name)


def _path(value, what):
    """A file name or key for the library: None, str or bytes."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    if hasattr(value, "__fspath__"):
        return _path(value.__fspath__(), what)
    raise TypeError("%s must be a path or a key string" % what)


# Codes whose last_reason was written by the failing call itself.
_FRESH_REASON = (ETIMEOUT, EPROTO, EREFUSED, ENOTJOINED, EVERSION, ESECURITY)


class Error(Exception):
    """A failure reported by libfasgdclient.

    code     the negative FASGD_CLIENT_E* code (fasgd.ETIMEOUT, ...)
    name     its name: "ETIMEOUT", "EREFUSED", ...
    message  fasgd_client_strerror (code)
    call     the method that failed, e.g. "push"
    status   the server's status code for a refusal (e.g. 422), else 0
    reason   the server's reason, or the library's account of a timeout or
             a malformed reply; "" when there is none
    """

    def __init__(self, code, call, message=None, status=0, reason=""):
        self.code = code
        self.name = _lib.ERROR_NAMES.get(code, str(code))
        if message is None:
            message = _strerror(code)
        self.message = message
        self.call = call
        self.status = status
        self.reason = reason
        text = "%s: %s" % (call, message)
        if status and reason:
            text += " (%d: %s)" % (status, reason)
        elif reason:
            text += " (%s)" % reason
        super().__init__(text)


class Refused(Error):
    """The server refused a gradient (status 422) and applied nothing: it
    held NaN or Inf, or the server's guard judged it outsized or harmful
    (e.reason says which). Not a failure of the run: count it apart from
    the steps and go on from fresh parameters (fetch_into). A client
    refused limits.refusals times in a row is forgotten: its next call
    raises fasgd.Error with status 401, and join() starts afresh.
    """


def _strerror(code):
    try:
        return _lib.load().fasgd_client_strerror(code).decode("utf-8", "replace")
    except OSError:
        return "error %d" % code


def library_version():
    """The version of the loaded libfasgdclient, e.g. "0.1.0"."""
    return _lib.load().fasgd_client_version().decode()


def library_path():
    """Where libfasgdclient was loaded from."""
    return _lib.path()


def set_log_level(level):
    """What the library logs on standard error, for the whole process:
    "error", "warn", "notice" (the default), "info" or "debug"."""
    if _lib.load().fasgd_client_set_log_level(str(level).encode()) != 0:
        raise ValueError("log level must be one of error, warn, notice, info, debug (got %r)" % (level,))


def _text(raw):
    return raw.decode("utf-8", "replace")


def _destroy(lib, box):
    """Frees a client's handle once (close(), garbage collection or exit)."""
    if box.value:
        lib.fasgd_client_destroy(ctypes.byref(box))


def _as_array(x, what, writable):
    """x as a float32 C-contiguous numpy array sharing its memory, or
    TypeError / ValueError saying what is wrong with it."""
    if not isinstance(x, _np.ndarray) and type(x).__module__.split(".")[0] == "torch":
        # A CPU torch tensor: its numpy view shares the memory.
        if getattr(x, "device", None) is not None and x.device.type != "cpu":
            raise TypeError("%s is a torch tensor on %s: fasgd reads and writes CPU memory"
                            % (what, x.device))
        x = x.detach().numpy()
    if not isinstance(x, _np.ndarray):
        raise TypeError("%s must be a numpy.ndarray of float32, not %s" % (what, type(x).__name__))
    if x.dtype != _np.float32:
        raise TypeError("%s must have dtype float32 (native byte order), not %s: "
                        "convert it with .astype(numpy.float32)" % (what, x.dtype))
    if not x.flags.c_contiguous:
        raise ValueError("%s must be C-contiguous: use numpy.ascontiguousarray, or a view "
                         "of a contiguous buffer" % what)
    if not x.flags.aligned:
        raise ValueError("%s is not aligned for float32" % what)
    if writable and not x.flags.writeable:
        raise ValueError("%s is read-only: fetching writes into it" % what)
    return x


class Client:
    """One worker's connection to a fasgd-server.

    Client(push="tcp://127.0.0.1:5555", fetch="tcp://127.0.0.1:5556",
           timeout_ms=5000, name=None, seed=None, join=True)

    push, fetch  the server's push and fetch endpoints; for a model sharded
                 across S servers, two lists of S endpoints (or strings of
                 S comma-separated ones): the client trains with all of them
    timeout_ms   how long each request waits for its reply; a server that
                 is not there gives fasgd.Error ETIMEOUT after that long
    name         the name the server logs (at most 255 bytes of UTF-8)
    seed         seed of the B-FASGD gates' draws (default: the client id)
    join         join at once (the default); with False, call join()
    server_key   speak CURVE (encrypted, authenticated) to a server with this
                 public certificate (fasgd-ctl keygen's NAME.key) or public
                 key (40 Z85 characters), for shards one per shard separated by
                 commas; a handshake that fails gives
                 fasgd.Error ESECURITY, its reason saying why
    cert         this client's secret certificate (NAME.key_secret); None
                 with server_key: a key of this process's own, which only
                 a server with security.curve.allow_any accepts

    A context manager: `with fasgd.Client(...) as c:` leaves and frees the
    connection at the end of the block.
    """

    def __init__(self, push="tcp://127.0.0.1:5555", fetch="tcp://127.0.0.1:5556",
                 timeout_ms=5000, name=None, seed=None, join=True, server_key=None, cert=None):
        lib = _lib.load()
        # A sharded model: one endpoint per shard, as lists (or tuples).
        if isinstance(push, (list, tuple)) and isinstance(fetch, (list, tuple)):
            if (not push or len(push) != len(fetch)
                    or not all(isinstance(e, str) and e and "," not in e for e in list(push) + list(fetch))):
                raise ValueError("push and fetch must list the same number of endpoints, one per shard")
            push, fetch = ",".join(push), ",".join(fetch)
        if not isinstance(push, str) or not isinstance(fetch, str):
            raise TypeError("push and fetch must be endpoint strings such as tcp://host:5555, "
                            "or lists of them, one per shard")
        timeout_ms = _integer(timeout_ms, "timeout_ms", 1, 2 ** 31 - 1)
        if seed is not None:
            seed = _integer(seed, "seed", 0, 2 ** 64 - 1)
        self._lib = lib
        self._lock = threading.RLock()
        self._joined = False
        self._ts = 0
        self._id = 0
        self._timed_out = False
        self._refused = 0                   # 422s since join
        self._refused_run = 0               # 422s in a row, and the wait after the last
        self._refused_wait_s = 0.0
        self._pushes_seen = 0
        self._desc = None
        self._name = self._check_name(name)
        self.push_endpoint = push
        self.fetch_endpoint = fetch
        self._box = ctypes.c_void_p(lib.fasgd_client_new(push.encode(), fetch.encode()))
        if not self._box.value:
            raise ValueError("cannot connect to %r and %r: not ZeroMQ endpoints such as "
                             "tcp://host:5555" % (push, fetch))
        self._finalizer = weakref.finalize(self, _destroy, lib, self._box)
        self.timeout_ms = timeout_ms
        if seed is not None:
            lib.fasgd_client_set_seed(self._box, seed)
        if server_key is not None or cert is not None:
            rc = lib.fasgd_client_set_curve(self._box, _path(server_key, "server_key"), _path(cert, "cert"))
            if rc != 0:
                reason = _text(lib.fasgd_client_last_reason(self._box))
                self.close()
                raise ValueError(reason or "server_key and cert: %s" % _text(lib.fasgd_client_strerror(rc)))
        if join:
            try:
                self.join()
            except BaseException:
                self.close()
                raise

    # Plumbing ------------------------------------------------------------

    @staticmethod
    def _check_name(name):
        if name is None:
            return None
        raw = name.encode("utf-8") if isinstance(name, str) else bytes(name)
        if len(raw) > _lib.PROTO_TEXT_MAX:
            raise ValueError("name must be at most %d bytes (got %d)" % (_lib.PROTO_TEXT_MAX, len(raw)))
        return raw

    def _handle(self):
        if not self._box.value:
            raise ValueError("the client is closed")
        return self._box

    def _need_joined(self, call):
        if not self._joined:
            raise Error(ENOTJOINED, call,
                        reason="this client is not joined: call join() first" if self._desc is None
                        else "this client left or the server forgot it: call join() again")

    def _check(self, rc, call):
        """rc unless it is an error code, which becomes fasgd.Error."""
        self._timed_out = rc == ETIMEOUT
        if rc >= 0:
            return rc
        status, reason = 0, ""
        if rc in _FRESH_REASON:
            status = self._lib.fasgd_client_last_status(self._box)
            reason = _text(self._lib.fasgd_client_last_reason(self._box))
            if rc == ETIMEOUT:
                status = 0
        if rc == ENOTJOINED:
            self._joined = False            # the server answered 401
        if rc == EREFUSED and status == 422:
            self._refused += 1
            raise Refused(rc, call, status=status, reason=reason)
        raise Error(rc, call, status=status, reason=reason)

    def _buffer(self, params, what, writable):
        """(address, None) when params can be used in place: a flat array of
        nparams floats, or per-tensor arrays laid out back to back in one
        buffer (views of it); (None, arrays) for separate per-tensor arrays,
        which the caller moves through a flat copy."""
        n = self._desc["params"]
        if isinstance(params, (list, tuple)):
            tensors = self._desc["tensors"]
            if len(params) != len(tensors):
                raise ValueError("%s has %d arrays; the server has %d tensors (%s)"
                                 % (what, len(params), len(tensors),
                                    ", ".join(t[0] for t in tensors)))
            arrays = []
            for i, (a, (tname, shape)) in enumerate(zip(params, tensors)):
                a = _as_array(a, "%s[%d]" % (what, i), writable)
                size = _prod(shape)
                if a.size != size:
                    raise ValueError("%s[%d] has %d values; the server's tensor %s (%s) has %d"
                                     % (what, i, a.size, tname, _shape_text(shape), size))
                arrays.append(a)
            addr = arrays[0].ctypes.data
            expect = addr
            for a in arrays:
                if a.ctypes.data != expect:
                    return None, arrays
                expect += a.nbytes
            return addr, None
        a = _as_array(params, what, writable)
        if a.size != n:
            raise ValueError("%s has %d values; the server's model has %d parameters"
                             % (what, a.size, n))
        return a.ctypes.data, None

    @staticmethod
    def _gather(arrays):
        return _np.concatenate([a.reshape(-1) for a in arrays])

    @staticmethod
    def _scatter(flat, arrays):
        off = 0
        for a in arrays:
            a.reshape(-1)[...] = flat[off:off + a.size]
            off += a.size

    # Session -------------------------------------------------------------

    def join(self, name=None):
        """Joins the server (again, after leave() or a 401), learning the
        model description. name overrides the constructor's."""
        with self._lock:
            h = self._handle()
            if name is not None:
                self._name = self._check_name(name)
            self._joined = False
            self._check(self._lib.fasgd_client_join(h, self._name), "join")
            d = self._lib.fasgd_client_desc(h)
            if not d:
                raise Error(EPROTO, "join", reason="joined, but no description")
            self._desc = self._read_desc(d.contents)
            self._id = int(self._lib.fasgd_client_id(h))
            self._ts = 0
            self._refused = 0               # the library's counts start afresh too
            self._refused_run, self._refused_wait_s, self._pushes_seen = 0, 0.0, 0
            self._joined = True
        return self

    def _read_desc(self, d):
        tensors = []
        for i in range(min(d.ntensors, _lib.PROTO_MAX_TENSORS)):
            t = d.tensors[i]
            tensors.append((_text(t.name), tuple(int(t.dims[k]) for k in range(min(t.ndim, _lib.PROTO_MAX_DIMS)))))
        nparams = int(self._lib.fasgd_client_nparams(self._box))
        # The codec checked the description; these catch a mirror that does
        # not match the library's struct.
        if (d.params != nparams or d.ntensors < 1 or d.ntensors > _lib.PROTO_MAX_TENSORS
                or sum(_prod(s) for _, s in tensors) != nparams):
            raise Error(EPROTO, "join", reason="the description does not add up: this module "
                        "and libfasgdclient come from different versions")
        return {
            "protocol": int(d.protocol), "params": nparams, "tensors": tensors,
            "model": _text(d.model), "model.sizes": _text(d.model_sizes),
            "model.activation": _text(d.model_activation),
            "rule": _text(d.rule), "rule.lr": float(d.lr),
            "gates.fetch": _text(d.fetch_gate), "gates.fetch.every": int(d.fetch_every),
            "gates.fetch.c": float(d.fetch_c),
            "gates.push": _text(d.push_gate), "gates.push.every": int(d.push_every),
            "gates.push.c": float(d.push_c), "gates.push.skip": _text(d.push_skip),
            "gates.eps": float(d.gate_eps),
            "heartbeat_ms": int(d.heartbeat_ms), "expiry_ms": int(d.expiry_ms),
        }

    def leave(self):
        """Leaves the server; join() may follow."""
        with self._lock:
            h = self._handle()
            self._need_joined("leave")
            self._joined = False
            self._check(self._lib.fasgd_client_leave(h), "leave")

    def close(self):
        """Leaves (if joined, and the last request did not time out: the
        server will expire this client; errors ignored) and frees the
        connection. Idempotent; the Client is unusable afterwards."""
        with self._lock:
            if not self._box.value:
                return
            if self._joined and not self._timed_out:
                try:
                    self.leave()
                except Error:
                    pass
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if not self._box.value else "joined" if self._joined else "not joined"
        return "<fasgd.Client %s %s id=%d nparams=%d>" % (self.push_endpoint, state,
                                                          self._id,
                                                          self.nparams)

    # Description and state -----------------------------------------------

    def _described(self, key):
        if self._desc is None:
            raise Error(ENOTJOINED, key, reason="no description before the first join()")
        return self._desc[key]

    @property
    def joined(self):
        """True between a successful join() and leave(), close() or a 401."""
        return self._joined

    @property
    def public_key(self):
        """This client's CURVE public key (Z85), "" without CURVE."""
        return _text(self._lib.fasgd_client_public_key(self._handle()))

    @property
    def nparams(self):
        """D, the number of float32 parameters (0 before the first join)."""
        return self._desc["params"] if self._desc else 0

    @property
    def tensors(self):
        """[(name, shape tuple), ...]: the views of θ in order (C order)."""
        return list(self._described("tensors"))

    @property
    def rule(self):
        """The server's update rule, e.g. "fasgd"."""
        return self._described("rule")

    @property
    def model(self):
        """The server's model: "mlp" (its own) or "external"."""
        return self._described("model")

    @property
    def description(self):
        """The whole WELCOME description as a dict (PROTOCOL.md's keys)."""
        self._described("params")
        d = dict(self._desc)
        d["tensors"] = list(d["tensors"])
        return d

    @property
    def shards(self):
        """The servers this client trains with: 1, or S for a model sharded
        across S servers (then timestamps are the sum of the shards', and
        vbar their mean)."""
        return int(self._lib.fasgd_client_shards(self._handle()))

    @property
    def id(self):
        """The client id the server assigned at the last join (0 before)."""
        return self._id

    @property
    def timestamp(self):
        """The timestamp of the parameters last fetched (0 before a fetch):
        what push() sends by default."""
        return self._ts

    @property
    def server_timestamp(self):
        """T, the server's timestamp in its last reply."""
        return int(self._lib.fasgd_client_server_timestamp(self._handle()))

    @property
    def vbar(self):
        """v̄, the server's statistic in its last reply (the gates use it)."""
        return float(self._lib.fasgd_client_vbar(self._handle()))

    @property
    def last_status(self):
        """The status code of the last reply (200, 202, 304, or a refusal's)."""
        return int(self._lib.fasgd_client_last_status(self._handle()))

    @property
    def last_reason(self):
        """The reason of the last refusal, timeout or malformed reply."""
        return _text(self._lib.fasgd_client_last_reason(self._handle()))

    @property
    def stats(self):
        """Counts since join: pushes (gradients the server took),
        repeats, accumulated, fetches, fetch_skips, bytes_out, bytes_in,
        and refused: gradients the server refused with 422 (fasgd.Refused),
        counted apart from the pushes."""
        s = self._lib.fasgd_client_stats(self._handle()).contents
        d = {name: int(getattr(s, name)) for name, _ in _lib.ClientStats._fields_}
        d["refused"] = self._refused
        return d

    # After gradients refused in a row, the waits fasgd-client makes.
    REFUSED_FIRST_S = 0.010
    REFUSED_MAX_S = 1.0

    def refused_wait(self):
        """Call after a fasgd.Refused, before the next push: waits as
        fasgd-client does, so that a server that refuses everything is
        not pushed to as fast as gradients come. The first refusal in a
        row is followed at once (an honest client meets one now and
        then), each later one by a wait twice the last, from 10 ms to
        1 s; a push the server took since the last call ends the run.
        Returns the seconds waited."""
        pushes = self.stats["pushes"]
        if pushes != self._pushes_seen:
            self._pushes_seen = pushes
            self._refused_run, self._refused_wait_s = 0, 0.0
        self._refused_run += 1
        if self._refused_run == 1:
            return 0.0
        w = self._refused_wait_s * 2 if self._refused_wait_s else self.REFUSED_FIRST_S
        self._refused_wait_s = min(w, self.REFUSED_MAX_S)
        time.sleep(self._refused_wait_s)
        return self._refused_wait_s

    @property
    def timeout_ms(self):
        """Milliseconds each request waits for its reply."""
        return self._timeout_ms

    @timeout_ms.setter
    def timeout_ms(self, ms):
        ms = _integer(ms, "timeout_ms", 1, 2 ** 31 - 1)
        self._lib.fasgd_client_set_timeout(self._handle(), ms)
        self._timeout_ms = ms

    def views(self, flat):
        """[(name, view), ...]: flat (nparams values) cut into the server's
        tensors, each view reshaped, sharing flat's memory."""
        flat = _as_array(flat, "flat", False).reshape(-1)
        if flat.size != self.nparams:
            raise ValueError("flat has %d values; the server's model has %d" % (flat.size, self.nparams))
        out, off = [], 0
        for name, shape in self.tensors:
            n = _prod(shape)
            out.append((name, flat[off:off + n].reshape(shape)))
            off += n
        return out

    # Parameters ----------------------------------------------------------

    def fetch_into(self, params, if_newer=False):
        """Fetches θ into params (written in place) and returns its
        timestamp. With if_newer, params is taken to hold θ of
        client.timestamp already, and is left alone when that is current."""
        with self._lock:
            h = self._handle()
            self._need_joined("fetch_into")
            # Lists of arrays are written only when θ arrives (not on a 304).
            addr, arrays, scratch = self._params_out(params)
            ts = ctypes.c_uint64(self._ts if if_newer else 0)
            rc = self._check(self._lib.fasgd_client_fetch(h, addr, ctypes.byref(ts), 1 if if_newer else 0),
                             "fetch_into")
            if rc == 0:
                if arrays is not None:
                    self._scatter(scratch, arrays)
                self._ts = int(ts.value)
            return self._ts

    def fetch(self):
        """θ as a new float32 array of nparams values (client.timestamp is
        its timestamp)."""
        with self._lock:
            self._need_joined("fetch")
            theta = _np.empty(self.nparams, dtype=_np.float32)
            self.fetch_into(theta)
            return theta

    def fetch_gated(self, params):
        """Fetches θ into params if the fetch gate says so (the first fetch
        of a session always does). True when params was refreshed."""
        with self._lock:
            h = self._handle()
            self._need_joined("fetch_gated")
            addr, arrays, scratch = self._params_out(params)
            ts = ctypes.c_uint64(self._ts)
            rc = self._check(self._lib.fasgd_client_fetch_gated(h, addr, ctypes.byref(ts)), "fetch_gated")
            if rc == 1:
                if arrays is not None:
                    self._scatter(scratch, arrays)
                self._ts = int(ts.value)
            return rc == 1

    def push(self, grads, timestamp=None):
        """Pushes a gradient computed on θ of timestamp (default:
        client.timestamp). Returns the server's timestamp T after it;
        last_status is 202 when softsync buffered it."""
        with self._lock:
            h = self._handle()
            self._need_joined("push")
            ts = self._timestamp(timestamp)
            addr, flat = self._grads_in(grads)
            self._check(self._lib.fasgd_client_push_n(h, addr, self.nparams, ts), "push")
            return self.server_timestamp

    def push_repeat(self):
        """Asks the server to re-apply this client's last gradient (B-FASGD
        resend-last). Returns T."""
        with self._lock:
            h = self._handle()
            self._need_joined("push_repeat")
            self._check(self._lib.fasgd_client_push_repeat(h), "push_repeat")
            return self.server_timestamp

    def push_gated(self, grads, timestamp=None):
        """Pushes through the push gate: returns what happened, "push" (the
        gradient was sent, with any accumulated ones), "repeat" (PUSH_REPEAT
        under resend-last) or "accumulate" (summed locally for the next
        push)."""
        with self._lock:
            h = self._handle()
            self._need_joined("push_gated")
            ts = self._timestamp(timestamp)
            addr, flat = self._grads_in(grads)
            before = self.stats
            self._check(self._lib.fasgd_client_push_gated(h, addr, ts), "push_gated")
            after = self.stats
            if after["pushes"] > before["pushes"]:
                return "push"
            if after["repeats"] > before["repeats"]:
                return "repeat"
            return "accumulate"

    def step_gated(self, grads, params):
        """One training step through both gates: push_gated(grads), a
        gradient computed on θ of client.timestamp, then fetch_gated(params),
        with the same gate draws; push and fetch travel in one round trip
        when the fetch gate allows it (gates always and every; not bfasgd,
        not softsync). Returns (refreshed, tau): whether params now holds
        newer θ, and the staleness of the gradient the server applied in
        this step (None when none was applied at once)."""
        with self._lock:
            h = self._handle()
            self._need_joined("step_gated")
            gaddr, flat = self._grads_in(grads)
            paddr, parrays, scratch = self._params_out(params)
            ts = ctypes.c_uint64(self._ts)
            tau = ctypes.c_int64(-1)
            rc = self._check(self._lib.fasgd_client_step_gated(h, gaddr, paddr, ctypes.byref(ts),
                                                               ctypes.byref(tau)), "step_gated")
            if rc == 1:
                if parrays is not None:
                    self._scatter(scratch, parrays)
                self._ts = int(ts.value)
            return rc == 1, (int(tau.value) if tau.value >= 0 else None)

    def _params_out(self, params):
        """Where the library may write θ for params: (address, the arrays
        to scatter it into afterwards or None, the scratch buffer or None)."""
        addr, arrays = self._buffer(params, "params", True)
        scratch = None
        if arrays is not None:
            scratch = _np.empty(self.nparams, dtype=_np.float32)
            addr = scratch.ctypes.data
        return addr, arrays, scratch

    def _grads_in(self, grads):
        """The address of grads as one flat float32 buffer, and the flat copy
        (kept alive by the caller) when grads was a list of arrays."""
        addr, arrays = self._buffer(grads, "grads", False)
        flat = None
        if arrays is not None:
            flat = self._gather(arrays)
            addr = flat.ctypes.data
        return addr, flat

    def _timestamp(self, timestamp):
        if timestamp is None:
            return self._ts
        return _integer(timestamp, "timestamp", 0, 2 ** 64 - 1)

    def want_push(self):
        """The push gate's decision for one opportunity: True to transmit."""
        with self._lock:
            h = self._handle()
            self._need_joined("want_push")
            return self._check(self._lib.fasgd_client_want_push(h), "want_push") == 1

    def want_fetch(self):
        """The fetch gate's decision for one opportunity: True to transmit."""
        with self._lock:
            h = self._handle()
            self._need_joined("want_fetch")
            return self._check(self._lib.fasgd_client_want_fetch(h), "want_fetch") == 1

    def eval(self, error, nll, examples):
        """Reports a validation result this client measured (error rate,
        mean negative log-likelihood, number of examples); the server logs
        it, and for an external model records it as its validation result
        (its CSV row)."""
        error, nll = float(error), float(nll)
        examples = _integer(examples, "examples", 0, 2 ** 64 - 1)
        with self._lock:
            h = self._handle()
            self._need_joined("eval")
            self._check(self._lib.fasgd_client_eval(h, error, nll, examples), "eval")


def _integer(value, what, low, high):
    """value as an int in [low, high] (Python or numpy integers), else
    TypeError or ValueError."""
    if isinstance(value, bool):
        raise TypeError("%s must be an integer, not bool" % what)
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__)) from None
    if not low <= value <= high:
        raise ValueError("%s must be in [%d, %d] (got %d)" % (what, low, high, value))
    return value


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _shape_text(shape):
    return "x".join(str(s) for s in shape)
