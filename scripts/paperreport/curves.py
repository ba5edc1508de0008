"""Where a kept directory's curves live, and the one way to read them.

A script that keeps a run writes its CSV gzipped into the kept directory as
NAME.csv.gz, and its runs.csv (or finals.csv) names that file. `scripts/
kept-curves pack DIR` then folds every such file into DIR/curves.tar.xz, one
xz stream for all (as NAME.csv): the runs of a directory share their
columns, iterations and much of their counters, which one stream finds and
a file at a time does not (the Fig. 3 runs at 10^6 iterations take 6.0 MB
gzipped one by one, 3.0 MB packed). A file kept after the pack (a run added
or run again) is read before its packed namesake. Files are always named as
kept, NAME.csv.gz, whichever holds them.

Standard library only; no reader here writes.
"""

import csv
import gzip
import io
import lzma
import os
import tarfile

PACK = "curves.tar.xz"

_packs = {}


def _member(file):
    return file[:-3] if file.endswith(".gz") else file


def packed(folder):
    """{member name: its bytes} of folder's pack ({} without one), read once
    a process (again if the pack changed)."""
    path = os.path.join(folder, PACK)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    key = os.path.realpath(path)
    stamp = (st.st_mtime_ns, st.st_size)
    got = _packs.get(key)
    if got is None or got[0] != stamp:
        members = {}
        with tarfile.open(path, "r:xz") as t:
            for m in t:
                if m.isfile():
                    members[m.name] = t.extractfile(m).read()
        got = _packs[key] = (stamp, members)
    return got[1]


def has(folder, file):
    """Whether folder keeps the curve file (loose or packed)."""
    return os.path.exists(os.path.join(folder, file)) or _member(file) in packed(folder)


def names(folder):
    """Every curve folder keeps, by the name it was kept under, sorted."""
    loose = {f for f in os.listdir(folder) if f.endswith(".csv.gz")} if os.path.isdir(folder) else set()
    return sorted(loose | {m + ".gz" for m in packed(folder)})


def text(folder, file):
    """The curve's CSV as a text stream; FileNotFoundError if folder does
    not keep it."""
    path = os.path.join(folder, file)
    if os.path.exists(path):
        return gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    data = packed(folder).get(_member(file))
    if data is None:
        raise FileNotFoundError("%s keeps no curve %s (neither loose nor in %s)" % (folder, file, PACK))
    return io.StringIO(data.decode())


def rows_of(f):
    """A CSV stream's complete rows as dicts of floats, and its header."""
    r = csv.reader(f)
    header = next(r)
    return [{k: float(v) for k, v in zip(header, row)} for row in r if len(row) == len(header)], header


def rows(folder, file):
    """The kept curve's complete rows as dicts of floats."""
    with text(folder, file) as f:
        return rows_of(f)[0]


def pack(folder):
    """Folds folder's loose NAME.csv.gz files into its pack (a loose file
    replacing its packed namesake) and removes them; the same curves always
    make the same bytes (members sorted, no times or owners). Returns the
    number of files folded."""
    loose = sorted(f for f in os.listdir(folder) if f.endswith(".csv.gz"))
    if not loose:
        return 0
    members = dict(packed(folder))
    for f in loose:
        with gzip.open(os.path.join(folder, f), "rb") as z:
            members[_member(f)] = z.read()
    path = os.path.join(folder, PACK)
    with open(path + ".tmp", "wb") as out:
        with lzma.open(out, "wb", preset=9) as x:
            with tarfile.open(fileobj=x, mode="w", format=tarfile.USTAR_FORMAT) as t:
                for name in sorted(members):
                    info = tarfile.TarInfo(name)
                    info.size = len(members[name])
                    info.mode = 0o644
                    info.mtime = 0
                    t.addfile(info, io.BytesIO(members[name]))
    os.replace(path + ".tmp", path)
    for f in loose:
        os.remove(os.path.join(folder, f))
    return len(loose)
