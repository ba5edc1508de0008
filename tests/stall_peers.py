"""Holds connections that never complete a ZMTP handshake, as an attacker
who knows the server's defences would: N connections to HOST:PORT, each
from its own loopback source address (127.0.0.2, .3, ...), each sending
half a greeting and then nothing, each reopened at once when the server
drops it. Runs SECONDS, then prints how many connections it opened and how
many the server dropped. Usage: stall_peers.py HOST PORT N SECONDS
[ADDRESSES] (ADDRESSES source addresses shared round robin; default N).
Writes "holding" to standard output once all N were opened once."""
import errno
import select
import socket
import sys
import time

host, port, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
naddr = int(sys.argv[5]) if len(sys.argv) > 5 else count
# The first half of a ZMTP 3 greeting: the signature's first bytes.
HALF_GREETING = b"\xff\x00\x00\x00\x00\x00\x00\x00"

opened = dropped = 0


def source(i):
    k = 2 + i % naddr
    return "127.%d.%d.%d" % (k >> 16 & 255, k >> 8 & 255, k & 255)


def open_one(i):
    global opened
    s = socket.socket()
    s.setblocking(False)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((source(i), 0))
    err = s.connect_ex((host, port))
    if err not in (0, errno.EINPROGRESS):
        s.close()
        return None
    opened += 1
    return s


socks = {}                      # fileno -> (index, socket, greeted)
end = time.monotonic() + seconds
for i in range(count):
    s = open_one(i)
    if s:
        socks[s.fileno()] = (i, s, False)
print("holding", len(socks), flush=True)
poller = select.poll()
for fd in socks:
    poller.register(fd, select.POLLIN | select.POLLOUT)
while time.monotonic() < end:
    for fd, ev in poller.poll(100):
        i, s, greeted = socks[fd]
        if ev & select.POLLOUT and not greeted:
            try:
                s.send(HALF_GREETING)
                greeted = True
                socks[fd] = (i, s, True)
                poller.modify(fd, select.POLLIN)
            except OSError:
                ev |= select.POLLHUP
        gone = bool(ev & (select.POLLHUP | select.POLLERR))
        if ev & select.POLLIN and not gone:
            try:
                if not s.recv(4096):
                    gone = True
            except OSError:
                gone = True
        if gone:
            dropped += 1
            poller.unregister(fd)
            del socks[fd]
            s.close()
            # At once, from the same address.
            for _ in range(3):
                t = open_one(i)
                if t:
                    socks[t.fileno()] = (i, t, False)
                    poller.register(t.fileno(), select.POLLIN | select.POLLOUT)
                    break
print("opened", opened, "dropped", dropped, flush=True)
