# Fig. 3's cost against the bytes it saves: each gate's final test error
# against the total bytes the run moved (both directions); a column a
# statistic, a row a gated direction (fetches, pushes). Called by
# scripts/paper-report with R, OUT, SET, AS and AA (each statistic's α),
# ITERS, SEEDS (what the points and bars are), QUICK; W and H (its size in
# pixels), MARGINS and SPACING (the panels' layout), XR and YR (each
# panel's x and y range, row by row), for which paper-report placed the
# labels (paperreport/labels.py). Reads
# R/bytes-STAT.dat: a block a series (0 ungated, 1 B-FASGD fetch gate,
# 2 B-FASGD push gate, 3 every-k fetch, 4 every-k push), a row a gate:
# bytes (GB) mean, smallest and largest over the seeds, final test error
# mean, smallest and largest, the gate's key (its colour: gate_colour,
# experiments/colours.gp, as in fig3-STAT.png) and label. The shape tells
# the series; a grey line joins it (solid: B-FASGD, dashed: every k).
# Each point's label is at the place R/bytes-labels-STAT-DIR.dat gives
# (x, y, label, its alignment): B-FASGD's above right and every k's below
# left where there is room, elsewhere where it covers no other label,
# marker or bar.
load "experiments/colours.gp"
rgb(g) = ("0x".gate_colour(g)[2:]) + 0
set terminal pngcairo size W, H font "DejaVu Sans,12" linewidth 1.5
set output OUT
set grid
x = strstrt(SET, "x")
set multiplot layout 2, 2 title sprintf("Fig. 3: final test error at %s iterations against bytes moved, fasgd at μ = %s, λ = %s (%s)%s", ITERS, SET[1:x-1], SET[x+1:], SEEDS, QUICK ? " (--smoke)" : "") font ",15" \
    margins word(MARGINS, 1) + 0, word(MARGINS, 2) + 0, word(MARGINS, 3) + 0, word(MARGINS, 4) + 0 \
    spacing word(SPACING, 1) + 0, word(SPACING, 2) + 0
set xlabel "bytes moved, both directions (GB)"
set ylabel "final test error (mean over the last 1,000 iterations)"
set format y "%.3f"
# ungated: filled pentagon; B-FASGD: filled circle; every k: filled square
PU = 15; PB = 7; PK = 5
do for [row = 1:2] {
    do for [p = 1:2] {
        st = (p == 1) ? "std" : "abs"
        dir = (row == 1) ? "fetch" : "push"
        f = sprintf("%s/bytes-%s.dat", R, st)
        lf = sprintf("%s/bytes-labels-%s-%s.dat", R, st, dir)
        k = 2 * (row - 1) + p
        set xrange [word(XR, 2 * k - 1) + 0 : word(XR, 2 * k) + 0]
        set yrange [word(YR, 2 * k - 1) + 0 : word(YR, 2 * k) + 0]
        sb = row; sk = row + 2
        set title sprintf("%s statistic (α = %s), %s gate (every %s made)", st, (p == 1) ? AS : AA, dir, \
                          (row == 1) ? "push" : "fetch")
        if (row == 2 && p == 2) {
            set key at screen 0.5, 0.01 center bottom horizontal maxrows 1 box opaque font ",11" samplen 1
        } else {
            unset key
        }
        plot f index sb using 1:4 with lines lc rgb "#9a9a9a" lw 1 dt 1 notitle, \
             f index sk using 1:4 with lines lc rgb "#9a9a9a" lw 1 dt 2 notitle, \
             f index 0 using 1:4:2:3:5:6:(rgb(strcol(7))) with xyerrorbars lc rgb variable pt PU ps 1.6 lw 1.2 notitle, \
             f index sb using 1:4:2:3:5:6:(rgb(strcol(7))) with xyerrorbars lc rgb variable pt PB ps 1.6 lw 1.2 notitle, \
             f index sk using 1:4:2:3:5:6:(rgb(strcol(7))) with xyerrorbars lc rgb variable pt PK ps 1.6 lw 1.2 notitle, \
             lf using 1:2:(strcol(4) eq "left" ? strcol(3) : "") with labels left font ",10" notitle, \
             lf using 1:2:(strcol(4) eq "right" ? strcol(3) : "") with labels right font ",10" notitle, \
             lf using 1:2:(strcol(4) eq "center" ? strcol(3) : "") with labels center font ",10" notitle, \
             keyentry with points lc rgb "#000000" pt PU ps 1.6 title "ungated (c = 0)", \
             keyentry with points lc rgb "#404040" pt PB ps 1.6 title "B-FASGD gate (c)", \
             keyentry with points lc rgb "#404040" pt PK ps 1.6 title "every-k gate (k)"
    }
}
unset multiplot
