# Validation error vs iteration, one panel per setting, one line per rule
# (Fig. 1, Fig. 2, Fashion-MNIST). Called by scripts/paper with:
#   R results folder, OUT the PNG, PREFIX (fig1, fig2, fashion),
#   SETS settings MUxLAMBDA, RUNS rule-aALPHA per line, LABELS their titles,
#   TITLE, QUICK (1: a --smoke run), YMAX (optional, default 0.3).
# Each line reads R/band-PREFIX-SETTING-RUN.dat (scripts/paper-report):
# iteration, then the mean, smallest and largest over the seeds of the
# running mean of the last 10 validations; the band is the seeds' range.
YMAX = exists("YMAX") ? YMAX + 0 : 0.3     # may arrive as a string
n = words(SETS)
nc = (n > 1) ? 2 : 1
nr = (n + nc - 1) / nc
set terminal pngcairo size (nc == 1 ? 900 : 1500), (nr == 1 ? 600 : 520 * nr) font "DejaVu Sans,12" linewidth 1.5
set output OUT
set key top right box opaque
set grid
set xlabel "iteration (client minibatch gradients)"
set ylabel "validation error (mean of last 10)"
set yrange [0:YMAX]
set format x "%.0s%c"
set format y "%.2f"
set style line 1 lc rgb "#d62728" lw 1.5
set style line 2 lc rgb "#1f77b4" lw 1.5
set style line 3 lc rgb "#2ca02c" lw 1.5
set style line 4 lc rgb "#9467bd" lw 1.5
set style line 5 lc rgb "#ff7f0e" lw 1.5
set style line 6 lc rgb "#8c564b" lw 1.5
set style line 7 lc rgb "#e377c2" lw 1.5
set style line 8 lc rgb "#7f7f7f" lw 1.5
set multiplot layout nr, nc title TITLE.(QUICK ? " (--smoke)" : "") font ",15"
do for [i = 1:n] {
    s = word(SETS, i)
    x = strstrt(s, "x")
    set title sprintf("μ = %s, λ = %s", s[1:x-1], s[x+1:])
    f(j) = sprintf("%s/band-%s-%s-%s.dat", R, PREFIX, s, word(RUNS, j))
    plot for [j = 1:words(RUNS)] f(j) using 1:3:4 with filledcurves ls j fs transparent solid 0.2 notitle, \
         for [j = 1:words(RUNS)] f(j) using 1:2 with lines ls j title word(LABELS, j)
}
unset multiplot
