"""Finding and loading libfasgdclient, and the ctypes declarations of its
public API (include/fasgd/client.h, include/fasgd/types.h).

The library is loaded on first use, not at import: `import fasgd` works
without it (fasgd.idx needs only numpy), and the error that names every
place searched comes from the first Client.
"""

import ctypes
import ctypes.util
import os
import subprocess
import threading

SONAME = "libfasgdclient.so.0"

# Error codes of fasgd_client_* (client.h).
ETIMEOUT = -1
EPROTO = -2
EREFUSED = -3
ENOTJOINED = -4
EINVAL = -5
ENOMEM = -6
ESOCKET = -7
EVERSION = -8
ESECURITY = -9
ERROR_NAMES = {
    ETIMEOUT: "ETIMEOUT", EPROTO: "EPROTO", EREFUSED: "EREFUSED",
    ENOTJOINED: "ENOTJOINED", EINVAL: "EINVAL", ENOMEM: "ENOMEM",
    ESOCKET: "ESOCKET", EVERSION: "EVERSION", ESECURITY: "ESECURITY",
}

# types.h: the WELCOME description, mirrored field for field. Its size is
# checked against fasgd_client_sizeof ("fasgd_proto_desc_t") at load.
PROTO_MAX_TENSORS = 64
PROTO_MAX_DIMS = 8
PROTO_TEXT_MAX = 255


class ProtoTensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char * 32),
        ("ndim", ctypes.c_uint32),
        ("dims", ctypes.c_uint32 * PROTO_MAX_DIMS),
    ]


class ProtoDesc(ctypes.Structure):
    _fields_ = [
        ("protocol", ctypes.c_uint32),
        ("params", ctypes.c_uint64),
        ("ntensors", ctypes.c_int),
        ("tensors", ProtoTensor * PROTO_MAX_TENSORS),
        ("model", ctypes.c_char * 16),
        ("model_sizes", ctypes.c_char * 128),
        ("model_activation", ctypes.c_char * 16),
        ("rule", ctypes.c_char * 16),
        ("lr", ctypes.c_double),
        ("fetch_gate", ctypes.c_char * 16),
        ("push_gate", ctypes.c_char * 16),
        ("push_skip", ctypes.c_char * 16),
        ("fetch_every", ctypes.c_int),
        ("push_every", ctypes.c_int),
        ("fetch_c", ctypes.c_double),
        ("push_c", ctypes.c_double),
        ("gate_eps", ctypes.c_double),
        ("heartbeat_ms", ctypes.c_uint32),
        ("expiry_ms", ctypes.c_uint32),
        ("session", ctypes.c_uint64),
        ("wire_push", ctypes.c_char * 8),
        ("wire_params", ctypes.c_char * 8),
        ("shard", ctypes.c_uint32),
        ("shards", ctypes.c_uint32),
        ("offset", ctypes.c_uint64),
        ("length", ctypes.c_uint64),
    ]


class ClientStats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("pushes", "repeats", "accumulated", "fetches", "fetch_skips",
                 "bytes_out", "bytes_in")]


_vp = ctypes.c_void_p
_PROTOTYPES = {
    # name: (restype, argtypes)
    "fasgd_client_new": (_vp, [ctypes.c_char_p, ctypes.c_char_p]),
    "fasgd_client_destroy": (None, [ctypes.POINTER(_vp)]),
    "fasgd_client_set_timeout": (None, [_vp, ctypes.c_int]),
    "fasgd_client_set_seed": (None, [_vp, ctypes.c_uint64]),
    "fasgd_client_set_curve": (ctypes.c_int, [_vp, ctypes.c_char_p, ctypes.c_char_p]),
    "fasgd_client_public_key": (ctypes.c_char_p, [_vp]),
    "fasgd_client_join": (ctypes.c_int, [_vp, ctypes.c_char_p]),
    "fasgd_client_desc": (ctypes.POINTER(ProtoDesc), [_vp]),
    "fasgd_client_id": (ctypes.c_uint32, [_vp]),
    "fasgd_client_nparams": (ctypes.c_size_t, [_vp]),
    "fasgd_client_shards": (ctypes.c_size_t, [_vp]),
    "fasgd_client_fetch": (ctypes.c_int, [_vp, _vp, ctypes.POINTER(ctypes.c_uint64), ctypes.c_int]),
    "fasgd_client_push_n": (ctypes.c_int, [_vp, _vp, ctypes.c_size_t, ctypes.c_uint64]),
    "fasgd_client_push_repeat": (ctypes.c_int, [_vp]),
    "fasgd_client_want_fetch": (ctypes.c_int, [_vp]),
    "fasgd_client_want_push": (ctypes.c_int, [_vp]),
    "fasgd_client_push_gated": (ctypes.c_int, [_vp, _vp, ctypes.c_uint64]),
    "fasgd_client_fetch_gated": (ctypes.c_int, [_vp, _vp, ctypes.POINTER(ctypes.c_uint64)]),
    "fasgd_client_step_gated": (ctypes.c_int, [_vp, _vp, _vp, ctypes.POINTER(ctypes.c_uint64),
                                               ctypes.POINTER(ctypes.c_int64)]),
    "fasgd_client_eval": (ctypes.c_int, [_vp, ctypes.c_double, ctypes.c_double, ctypes.c_uint64]),
    "fasgd_client_leave": (ctypes.c_int, [_vp]),
    "fasgd_client_vbar": (ctypes.c_double, [_vp]),
    "fasgd_client_server_timestamp": (ctypes.c_uint64, [_vp]),
    "fasgd_client_last_status": (ctypes.c_int, [_vp]),
    "fasgd_client_last_reason": (ctypes.c_char_p, [_vp]),
    "fasgd_client_stats": (ctypes.POINTER(ClientStats), [_vp]),
    "fasgd_client_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "fasgd_client_set_log_level": (ctypes.c_int, [ctypes.c_char_p]),
    "fasgd_client_version": (ctypes.c_char_p, []),
    "fasgd_client_sizeof": (ctypes.c_size_t, [ctypes.c_char_p]),
}

_lock = threading.Lock()
_lib = None
_path = None


def _candidates():
    """Where to look, in order: (path or name, how it was found)."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    env = os.environ.get("FASGD_LIBRARY")
    if env:
        # Named explicitly: nothing else is tried.
        return [(env, "FASGD_LIBRARY")]
    builddir = os.environ.get("FASGD_TOP_BUILDDIR")
    if builddir:
        found.append((os.path.join(builddir, "client", ".libs", SONAME), "FASGD_TOP_BUILDDIR"))
    # The module inside a source tree: python/fasgd/ next to an in-tree
    # build, or next to the build/ that scripts/build makes.
    top = os.path.dirname(os.path.dirname(here))
    for sub in ("", "build"):
        found.append((os.path.join(top, sub, "client", ".libs", SONAME), "build tree"))
    try:
        from . import _config
        found.append((os.path.join(_config.LIBDIR, SONAME), "installed libdir"))
    except ImportError:
        pass
    # A prefix that `make install` used: its fasgd.pc, on PKG_CONFIG_PATH.
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "fasgd"], capture_output=True,
                             text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            found.append((os.path.join(out.stdout.strip(), SONAME), "pkg-config fasgd"))
    except (OSError, subprocess.SubprocessError):
        pass
    name = ctypes.util.find_library("fasgdclient")
    if name:
        found.append((name, "find_library"))
    found.append((SONAME, "the dynamic linker's search path"))
    return found


def _declare(lib):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            if name == "fasgd_client_sizeof":
                continue        # an older library: the checks after join remain
            raise
        fn.restype = restype
        fn.argtypes = argtypes
    sizeof = getattr(lib, "fasgd_client_sizeof", None)
    if sizeof is not None:
        for cname, pytype in (("fasgd_proto_desc_t", ProtoDesc),
                              ("fasgd_client_stats_t", ClientStats)):
            size = sizeof(cname.encode())
            if size != ctypes.sizeof(pytype):
                raise OSError("libfasgdclient's %s is %d bytes, this module's mirror %d: "
                              "the library and the Python module come from different versions"
                              % (cname, size, ctypes.sizeof(pytype)))


def load():
    """The loaded library (a ctypes.CDLL), loading it on the first call.
    Raises OSError naming every place searched."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path, how in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append("%s (%s: no such file)" % (path, how))
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s: %s)" % (path, how, e))
                continue
            _declare(lib)
            _lib, _path = lib, path
            return lib
        raise OSError("cannot load libfasgdclient, the C library under the fasgd module; tried:\n  "
                      + "\n  ".join(tried)
                      + "\nInstall it (./configure && make && make install, then ldconfig for a "
                      "system prefix), or set FASGD_LIBRARY to the path of libfasgdclient.so.0, or "
                      "PKG_CONFIG_PATH to the PREFIX/lib/pkgconfig of the prefix it was installed to")


def path():
    """The path or name the library was loaded from (loading it if needed)."""
    load()
    return _path
