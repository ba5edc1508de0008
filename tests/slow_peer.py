"""A peer whose first request arrives slowly, as a client's first push of a
large model does over a slow or shared link: it completes ZeroMQ's ZMTP 3
handshake (NULL security) as a DEALER with the server's ROUTER at
HOST:PORT, starts a message of SIZE bytes, and sends it at RATE bytes a
second for SECONDS (never completing it), then sends nothing more and
waits up to WAIT seconds. Prints one line: "open" or "closed", the bytes
sent, the seconds from its first request byte to the close (or to the end),
and the seconds from its last byte to the close. Exit 0, or 2 when the
handshake failed. Usage: slow_peer.py HOST PORT RATE SECONDS WAIT [SIZE]"""
import socket
import struct
import sys
import time

host, port = sys.argv[1], int(sys.argv[2])
rate, seconds, wait = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
size = int(sys.argv[6]) if len(sys.argv) > 6 else 200000

GREETING = (b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00")
            + b"\x00" + b"\x00" * 31)


def ready():
    name, value = b"Socket-Type", b"DEALER"
    body = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(value)) + value
    return b"\x04" + bytes([len(body)]) + body


def recv_exactly(s, k):
    got = b""
    while len(got) < k:
        part = s.recv(k - len(got))
        if not part:
            raise OSError("closed during the handshake")
        got += part
    return got


s = socket.create_connection((host, port), timeout=10)
try:
    s.sendall(GREETING)
    recv_exactly(s, 64)
    s.sendall(ready())
    flags, n = recv_exactly(s, 2)
    recv_exactly(s, n if flags == 0x04 else struct.unpack(">Q", bytes([n]) + recv_exactly(s, 7))[0])
except OSError as e:
    print("handshake failed:", e)
    sys.exit(2)

# A message's one frame, longer than 255 bytes: flags, then its 8-byte size.
s.sendall(b"\x02" + struct.pack(">Q", size))
s.settimeout(0.1)
start = time.monotonic()
sent = 0
last = start
closed = None
while closed is None:
    now = time.monotonic()
    if now - start < seconds:
        due = int(rate * (now - start)) - sent
        if due > 0:
            try:
                s.sendall(b"\x00" * min(due, size - sent))
                sent += min(due, size - sent)
                last = now
            except OSError:
                closed = now
                break
    elif now - last > wait:
        break
    try:
        if not s.recv(4096):
            closed = time.monotonic()
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic()
if closed is None:
    print("open %d %.1f -" % (sent, time.monotonic() - start))
else:
    print("closed %d %.1f %.1f" % (sent, closed - start, closed - last))
