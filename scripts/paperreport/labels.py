"""Point labels that do not collide (Fig. 3 against bytes, fig3-bytes.gp):
each label goes to one of sixteen places around its point (eight
directions, near and a little farther), chosen so that no label covers
another label, a marker or an error bar, or leaves the panel; crossing a
line that joins points is avoided where it can be; among the places left,
a label keeps to its own preferred side (nearest first). The figure's axis
ranges are set here too (nice_range), since where a label falls in pixels
depends on them.

Sizes in pixels of gnuplot's pngcairo terminal ("DejaVu Sans,12", labels
",10"): measured on its output, a 10-point label's em is 12.5 pixels, its
text about 11 pixels tall centred on its anchor, and a point of ps 1.6 is
11 pixels across."""

import math

# DejaVu Sans advance widths, in em, of the characters labels use; others
# count as ANY_EM.
EM_PX = 12.5
WIDTHS = dict([(c, 0.636) for c in "0123456789"] +
              [(".", 0.318), (",", 0.318), ("=", 0.838), (" ", 0.318), ("c", 0.550), ("k", 0.579),
               ("-", 0.361), ("e", 0.615), ("x", 0.592)])
ANY_EM = 0.70
TEXT_H = 12.0      # a label's height (its box, centred on the anchor)
MARK = 6.0         # half a marker's width (ps 1.6)
PAD = 2.0          # the least gap between a label and anything else
BAR = 2.0          # half an error bar's width
CAP = 5.0          # half an error bar cap's length

# The eight directions, as (dx, dy) unit steps (y down, as in pixels);
# a label to the right is left-aligned, to the left right-aligned.
DIRS = {"NE": (1, -1), "E": (1, 0), "SE": (1, 1), "S": (0, 1), "SW": (-1, 1), "W": (-1, 0), "NW": (-1, -1),
        "N": (0, -1)}
ORDER = ("NE", "E", "SE", "S", "SW", "W", "NW", "N")


def text_width(s):
    return EM_PX * sum(WIDTHS.get(c, ANY_EM) for c in s)


def prefer(first):
    """The directions by how far they turn from first (clockwise first on
    a tie)."""
    i = ORDER.index(first)
    out = [first]
    for k in range(1, 5):
        for d in (ORDER[(i + k) % 8], ORDER[(i - k) % 8]):
            if d not in out:
                out.append(d)
    return out


def candidate(px, py, w, direction, far):
    """A label's place: (anchor x, anchor y, alignment, box) for a point at
    (px, py) pixels, w its text width; box is (x0, y0, x1, y1)."""
    dx, dy = DIRS[direction]
    gap = MARK + 4.0 + (12.0 if far else 0.0)
    if dx and dy:       # diagonal: the box's corner near the point
        ax = px + dx * (gap - 1.0)
        ay = py + dy * (gap - 1.0 + TEXT_H / 2)
    else:
        ax = px + dx * gap
        ay = py + dy * (gap + TEXT_H / 2)
    align = "left" if dx > 0 else "right" if dx < 0 else "center"
    x0 = ax if dx > 0 else ax - w if dx < 0 else ax - w / 2
    return ax, ay, align, (x0, ay - TEXT_H / 2, x0 + w, ay + TEXT_H / 2)


def overlap(a, b, pad=0.0):
    """The area two boxes share when one is grown by pad (0 when they are
    at least pad apart)."""
    w = min(a[2], b[2]) - max(a[0], b[0]) + pad
    h = min(a[3], b[3]) - max(a[1], b[1]) + pad
    return w * h if w > 0 and h > 0 else 0.0


def crosses(box, seg, pad=PAD + 1.0):
    """Whether the segment ((x0, y0), (x1, y1)) meets the box grown by pad
    (a line's width and a gap)."""
    box = (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)
    (x0, y0), (x1, y1) = seg
    # Liang-Barsky clipping
    t0, t1 = 0.0, 1.0
    for p, q in ((x0 - x1, x0 - box[0]), (x1 - x0, box[2] - x0), (y0 - y1, y0 - box[1]), (y1 - y0, box[3] - y0)):
        if p == 0:
            if q < 0:
                return False
        else:
            t = q / p
            if p < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
    return t0 <= t1


HARD = 1000.0


def place(points, frame, segments=(), budget=200000):
    """Places each point's label. points: dicts with px, py (pixels),
    optional xbar (x0, x1) and ybar (y0, y1) in pixels, text, and side (its
    preferred direction, one of DIRS); frame: the panel (x0, y0, x1, y1);
    segments: lines between points ((x0, y0), (x1, y1)) a label should not
    cross. Returns, for each point, (anchor x, anchor y, alignment, box)
    and the count of labels that still overlap something (0 unless there
    is no room)."""
    obstacles = []
    for p in points:
        obstacles.append((p["px"] - MARK, p["py"] - MARK, p["px"] + MARK, p["py"] + MARK))
        if p.get("ybar"):
            lo, hi = sorted(p["ybar"])
            obstacles.append((p["px"] - BAR, lo, p["px"] + BAR, hi))
            obstacles += [(p["px"] - CAP, y - BAR, p["px"] + CAP, y + BAR) for y in (lo, hi)]
        if p.get("xbar"):
            lo, hi = sorted(p["xbar"])
            obstacles.append((lo, p["py"] - BAR, hi, p["py"] + BAR))
            obstacles += [(x - BAR, p["py"] - CAP, x + BAR, p["py"] + CAP) for x in (lo, hi)]
    cands = []     # per point: [(unary cost, place)] cheapest first
    for p in points:
        w = text_width(p["text"])
        cs = []
        for rank, d in enumerate(prefer(p.get("side", "NE"))):
            for far in (False, True):
                c = candidate(p["px"], p["py"], w, d, far)
                box = c[3]
                cost = rank + (8.0 if far else 0.0)
                cost += sum(HARD * (1 + v) for v in (overlap(box, o, PAD) for o in obstacles) if v > 0)
                out = (max(0.0, frame[0] - box[0]) + max(0.0, box[2] - frame[2]) +
                       max(0.0, frame[1] - box[1]) + max(0.0, box[3] - frame[3]))
                if out > 0:
                    cost += HARD * (1 + out)
                cost += sum(20.0 for s in segments if crosses(box, s))
                cs.append((cost, c))
        cs.sort(key=lambda x: x[0])
        cands.append(cs)

    def pair(a, b):
        o = overlap(a[3], b[3], PAD)
        return HARD * (1 + o) if o > 0 else 0.0

    # Branch and bound over the labels (most constrained first), the best
    # assignment by total cost; budget caps the nodes it visits.
    order = sorted(range(len(points)), key=lambda i: (cands[i][0][0], i), reverse=True)
    rest = [0.0] * (len(order) + 1)
    for k in range(len(order) - 1, -1, -1):
        rest[k] = rest[k + 1] + cands[order[k]][0][0]
    best = [math.inf, None]
    chosen = [None] * len(points)
    nodes = [0]

    def go(k, cost):
        if cost + rest[k] >= best[0] or nodes[0] > budget:
            return
        if k == len(order):
            best[0], best[1] = cost, list(chosen)
            return
        i = order[k]
        for u, c in cands[i]:
            nodes[0] += 1
            extra = u + sum(pair(c, chosen[j]) for j in order[:k])
            chosen[i] = c
            go(k + 1, cost + extra)
            chosen[i] = None
    go(0, 0.0)
    got = best[1]
    bad = 0
    for i, c in enumerate(got):
        box = c[3]
        if (any(overlap(box, o, 0.0) > 0 for o in obstacles) or
                any(overlap(box, got[j][3], 0.0) > 0 for j in range(len(got)) if j != i)):
            bad += 1
    return got, bad


def nice_range(lo, hi, before=0.05, after=0.05):
    """An axis range holding [lo, hi] with a margin of before and after
    (fractions of its span) each side, widened to a multiple of the step
    gnuplot would choose for its tics."""
    span = hi - lo if hi > lo else abs(hi) or 1.0
    lo, hi = lo - before * span, hi + after * span
    arg = hi - lo
    power = 10 ** math.floor(math.log10(arg))
    posns = 20 / (arg / power)
    step = (0.05 if posns > 40 else 0.1 if posns > 20 else 0.2 if posns > 10 else 0.5 if posns > 4 else
            1 if posns > 2 else 2 if posns > 0.5 else math.ceil(arg / power)) * power
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
