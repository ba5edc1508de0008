"""Hostile scrapers of an HTTP metrics endpoint, for a bounded time:
from a third of the time on, many idle connections (--idle) and slow
requests that send one byte every half second (--slow), garbage requests, and scrapes that never read
their reply (up to 500, held open), on new connections as fast as a loop goes (at most --max
of them). Everything is closed at the end; prints what it did.
Usage: hostile_scrape.py HOST PORT SECONDS [--idle N] [--slow N] [--max N]"""
import argparse
import os
import socket
import time

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("seconds", type=float)
ap.add_argument("--idle", type=int, default=1000)
ap.add_argument("--slow", type=int, default=100)
ap.add_argument("--max", type=int, default=20000)
a = ap.parse_args()


def opened():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect((a.host, a.port))
    except (BlockingIOError, InterruptedError):
        pass
    except OSError:
        s.close()
        return None
    return s


def send(s, data):
    try:
        s.send(data)
        return True
    except OSError:
        return False


start = time.monotonic()
end = start + a.seconds
idle = slow = []                        # opened a third of the way in: garbage and scrapes first
slow_at = 0
slow_text = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
garbage = [b"\x00\x01\x02\xff" * 64, b"GET " + b"/" * 20000 + b" HTTP/1.1\r\n\r\n",
           b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\n" + b"x" * 4096,
           b"GET /metrics HTTP/9.9\r\n\r\n", b"\r\n\r\n\r\n", os.urandom(512),
           b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 50]     # pipelined, never read
good = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
unread = []                             # scrapes whose replies are never read, held open
bursts = errors = slow_bytes = 0
while time.monotonic() < end and bursts < a.max:
    now = time.monotonic()
    if not idle and now >= start + a.seconds / 3:
        slow = [s for s in (opened() for _ in range(a.slow)) if s]
        idle = [s for s in (opened() for _ in range(a.idle)) if s]
    if now >= slow_at:
        for s in slow:
            if send(s, slow_text[slow_bytes:slow_bytes + 1]) is False:
                errors += 1
        slow_bytes += 1
        slow_at = now + 0.5
    s = opened()
    if not s:
        errors += 1
        time.sleep(0.001)
        continue
    time.sleep(0.0005)
    if bursts % 2 and len(unread) < 500:
        send(s, good)
        unread.append(s)
    else:
        send(s, garbage[bursts % len(garbage)])
        s.close()
    bursts += 1
for s in idle + slow + unread:
    s.close()
print(f"idle={len(idle)} slow={len(slow)} slow_bytes={slow_bytes} unread={len(unread)} bursts={bursts} "
      f"errors={errors}")
