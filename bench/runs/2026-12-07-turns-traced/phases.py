#!/usr/bin/env python3
"""phases.py TRACE RATE: from trace.sh's record of a bench-link run with
one-trip fasgd systems, what each system's server link did. The server's
end of each connection sees the client's push arrive (segments with
data) and the ACKs of its reply (snd_una moving; snd_nxt ahead of it
while bytes are out). A run is the connections that opened together;
its window: 4 s after they opened to 2 s before the last closed. Every
millisecond of the window is one of: a reply under way (some connection
has reply bytes out), else a reply owed (some client's push is whole and
its reply not begun: the server's step, or a reply waiting for its
turn), else every client pushing. Prints, a run a line: its clients,
the payload ACKed over the link's rate (the qdisc's figure also counts
headers, about 4.4% more), the share of the window in each phase, the
payload rate while a reply is under way, the replies each client got
(min/median/max), the retransmissions down and up, the smoothed RTT
of the replies' ACKs (quartiles, ms), and, while a reply is under way,
the share of the window and the payload rate with 0, 1, or 2 or more
clients' pushes arriving (within 5 ms)."""
import collections, re, statistics, sys

PROBE = re.compile(r' (\d+\.\d+): tcp_probe: .*src=[\d.]+:(\d+) dest=[\d.]+:(\d+) .*data_len=(\d+) '
                   r'snd_nxt=(0x[0-9a-f]+) snd_una=(0x[0-9a-f]+) .*srtt=(\d+)')
RETX = re.compile(r' (\d+\.\d+): tcp_retransmit_skb: .*sport=(\d+) dport=(\d+)')


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: phases.py TRACE RATE_BITS")
    rate = float(sys.argv[2]) / 8
    rows = collections.defaultdict(list)
    retx = []
    for line in open(sys.argv[1]):
        m = PROBE.search(line)
        if m:
            t, sp, dp, dl, nxt, una, srtt = m.groups()
            if sp == '5555':
                rows[dp].append((float(t), int(dl), int(nxt, 16), int(una, 16), int(srtt)))
            continue
        m = RETX.search(line)
        if m:
            retx.append((float(m.group(1)), 'down' if m.group(2) == '5555' else 'up'))
    # Runs: connections that carried data, grouped by when they opened.
    conns = {p: r for p, r in rows.items() if sum(x[1] for x in r) > 1_000_000}
    runs = []
    for p in sorted(conns, key=lambda p: conns[p][0][0]):
        if runs and conns[p][0][0] - conns[runs[-1][0]][0][0] < 1.0:
            runs[-1].append(p)
        else:
            runs.append([p])
    t0 = min(r[0][0] for r in conns.values()) if conns else 0
    for ports in runs:
        a = max(conns[p][0][0] for p in ports) + 4.0
        b = min(conns[p][-1][0] for p in ports) - 2.0
        if b - a < 1.0:
            continue
        report(ports, conns, retx, a, b, t0, rate)


def report(ports, conns, retx, a, b, t0, rate):
    replies = {}        # port: [(start, end, push_last_byte)]
    acked = 0
    srtt = []
    steps = int((b - a) * 1000)
    b = a + steps / 1000
    acked_ms = [0] * steps                      # payload ACKed in each millisecond
    pushing_ms = [set() for _ in range(steps)]  # connections whose push data arrived then
    for p in ports:
        base = conns[p][0][3]
        cur = None
        last_data = None
        out = []
        prev = None
        for t, dl, nxt, una, rtt in conns[p]:
            n, u = (nxt - base) & 0xffffffff, (una - base) & 0xffffffff
            if dl > 0:
                last_data = t
                if a <= t < b:
                    pushing_ms[int((t - a) * 1000)].add(p)
            if n > u and cur is None:
                cur = [t, None, u, last_data]
            if cur is not None and n == u:
                if u - cur[2] > 100_000:
                    out.append((cur[0], t, cur[3]))
                cur = None
            if prev is not None and a <= t < b:
                acked += (una - prev) & 0xffffffff
                acked_ms[int((t - a) * 1000)] += (una - prev) & 0xffffffff
            if n > u and dl == 0 and a <= t < b:
                srtt.append(rtt / 1000)
            prev = una
        replies[p] = out
    phase = collections.Counter()
    by_pushes = collections.defaultdict(lambda: [0, 0])    # pushes arriving: [ms, bytes ACKed] with a reply under way
    for k in range(steps):
        t = a + (k + 0.5) / 1000
        owed = False
        under_way = False
        for p in ports:
            for s, e, last in replies[p]:
                if s <= t <= e:
                    under_way = True
                    break
                if last is not None and last <= t < s:
                    owed = True
            if under_way:
                break
        phase['reply' if under_way else 'owed' if owed else 'pushing'] += 1
        if under_way:
            # pushes arriving within 5 ms either side
            n = len(set().union(*pushing_ms[max(0, k - 5):k + 6]))
            by_pushes[min(n, 2)][0] += 1
            by_pushes[min(n, 2)][1] += acked_ms[k]
    got = sorted(sum(1 for s, e, _ in replies[p] if a <= e < b) for p in ports)
    rx = collections.Counter(d for t, d in retx if a <= t < b)
    cap = rate * (b - a)
    q = statistics.quantiles(srtt, n=4) if len(srtt) >= 4 else [0, 0, 0]
    share = {k: phase[k] / steps for k in ('reply', 'owed', 'pushing')}
    print(f"clients {len(ports)}, window {a - t0:.1f}-{b - t0:.1f} s: payload {acked / cap * 100:.1f}% of the link; "
          f"a reply under way {share['reply'] * 100:.1f}%, a reply owed {share['owed'] * 100:.1f}%, "
          f"every client pushing {share['pushing'] * 100:.1f}% of the time; "
          f"payload while a reply is under way {acked / cap / max(share['reply'], 1e-9) * 100:.1f}%; "
          f"replies a client {got[0]}/{statistics.median(got):g}/{got[-1]}; "
          f"retransmissions down {rx['down']} up {rx['up']}; "
          f"srtt of the replies' ACKs {q[0]:.1f}/{q[1]:.1f}/{q[2]:.1f} ms; "
          "with a reply under way and 0, 1, 2 or more pushes arriving: " +
          ", ".join(f"{by_pushes[n][0] / steps * 100:.0f}% of the time at "
                    f"{by_pushes[n][1] / (rate * by_pushes[n][0] / 1000) * 100 if by_pushes[n][0] else 0:.0f}%"
                    for n in (0, 1, 2)))


main()
