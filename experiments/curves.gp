# Test error vs iteration, one panel per setting, one line per rule and α
# (Fig. 1, Fig. 2, Fashion-MNIST). Called by scripts/paper-report with:
#   R the folder of its tables, OUT the PNG, PREFIX (fig1, fig2, fashion),
#   SETS settings MUxLAMBDA, RUNS rule-aALPHA per line, LABELS their titles,
#   RULEOF each line's rule (its colour: colours.gp), DASHES each line's
#   dash type (1: the paper's α, 2: the sweep's), YLOS and YHIS each
#   panel's y range, TITLE, QUICK (1: a --smoke run).
# Each line reads R/band-PREFIX-SETTING-RUN.dat: iteration, then the mean,
# smallest and largest over the seeds of the running mean test error over
# the last 1,000 iterations; the band is the seeds' range. The key sits below the panels,
# off the data; each panel's y range spans every line after the first
# tenth of the run (scripts/paper-report), so no line is cut off there.
load "experiments/colours.gp"
n = words(SETS)
nc = (n > 1) ? 2 : 1
nr = (n + nc - 1) / nc
set terminal pngcairo size (nc == 1 ? 900 : 1500), (nr == 1 ? 700 : 480 * nr + 160) font "DejaVu Sans,12" linewidth 1.5
set output OUT
set grid
set xlabel "iteration (client minibatch gradients)"
set ylabel "test error (mean over the last 1,000 iterations)"
set format x "%.0s%c"
set format y "%.3g"     # ticks 0.005 apart read 0.035, 0.04, 0.045
do for [j = 1:words(RUNS)] {
    dash = word(DASHES, j) + 0
    set style line j lc rgb rule_colour(word(RULEOF, j)) lw 1.5 dt dash
}
bottom = (nr == 1) ? 0.22 : 0.16 / nr + 0.08
set multiplot layout nr, nc title TITLE.(QUICK ? " (--smoke)" : "") font ",15" \
    margins 0.07, 0.98, bottom, 0.92 spacing 0.07, 0.09
do for [i = 1:n] {
    s = word(SETS, i)
    x = strstrt(s, "x")
    set title sprintf("μ = %s, λ = %s", s[1:x-1], s[x+1:])
    set yrange [word(YLOS, i) + 0 : word(YHIS, i) + 0]
    if (i == n) {
        set key at screen 0.5, 0.01 center bottom horizontal maxrows 2 box opaque font ",11"
    } else {
        unset key
    }
    f(j) = sprintf("%s/band-%s-%s-%s.dat", R, PREFIX, s, word(RUNS, j))
    plot for [j = 1:words(RUNS)] f(j) using 1:3:4 with filledcurves ls j fs transparent solid 0.15 notitle, \
         for [j = 1:words(RUNS)] f(j) using 1:2 with lines ls j title word(LABELS, j)
}
unset multiplot
