"""IDX files, the format of MNIST (yann.lecun.com/exdb/mnist), plain or
gzipped: a 4-byte magic (0, 0, type, ndim), ndim big-endian uint32 sizes,
then the values in C order, big-endian.

    images = fasgd.idx.load("data/mnist/train-images-idx3-ubyte.gz")   # uint8, (8000, 28, 28)
"""

import gzip
import struct

import numpy as np

# The type byte: numpy's dtype of the values as stored (big-endian).
_TYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def loads(data, name="<bytes>"):
    """The array an IDX file's bytes hold (gzip is recognised by its magic
    bytes), in native byte order. ValueError names what is wrong."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise ValueError("%s: not a valid gzip stream: %s" % (name, e)) from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError("%s: not an IDX file (bad magic)" % name)
    kind, ndim = data[2], data[3]
    if kind not in _TYPES:
        raise ValueError("%s: unknown IDX value type 0x%02x" % (name, kind))
    if ndim < 1:
        raise ValueError("%s: an IDX file with no dimensions" % name)
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError("%s: truncated header" % name)
    shape = struct.unpack(">%dI" % ndim, data[4:header])
    dtype = _TYPES[kind]
    count = 1
    for s in shape:
        count *= s
    size = count * dtype.itemsize
    if len(data) - header != size:
        raise ValueError("%s: %d bytes of values, the header (%s of %s) says %d"
                         % (name, len(data) - header, "x".join(map(str, shape)), dtype.name, size))
    values = np.frombuffer(data, dtype=dtype, count=count, offset=header).reshape(shape)
    return values.astype(dtype.newbyteorder("="), copy=True)


def load(path):
    """The array in the IDX file at path (plain or .gz)."""
    with open(path, "rb") as f:
        return loads(f.read(), str(path))


def load_mnist(directory, split="train"):
    """(images, labels) of MNIST's split "train" or "t10k" in directory:
    images as float32 in [0, 1] of shape (n, rows, cols), labels as int64.
    Each file is found with or without .gz."""
    import os
    out = []
    for kind, ndim in (("images-idx3", 3), ("labels-idx1", 1)):
        base = os.path.join(directory, "%s-%s-ubyte" % (split, kind))
        path = base + ".gz" if os.path.exists(base + ".gz") else base
        out.append(load(path))
        if out[-1].ndim != ndim:
            raise ValueError("%s: expected %d dimensions, found %d" % (path, ndim, out[-1].ndim))
    images, labels = out
    if len(images) != len(labels):
        raise ValueError("%s: %d images but %d labels" % (directory, len(images), len(labels)))
    return images.astype(np.float32) / 255.0, labels.astype(np.int64)
