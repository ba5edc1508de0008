# Fig. 2 (and Fashion-MNIST) in one panel: final test error against λ (log scale), one line per
# rule and α, the points the seeds' mean and the bars their range. Called
# by scripts/paper-report with R, OUT, RUNS (rule-aALPHA), LABELS, RULEOF,
# DASHES (as curves.gp), TITLE, QUICK. Reads R/summary-PREFIX.dat, one block
# per run: lambda, mean, smallest, largest.
load "experiments/colours.gp"
set terminal pngcairo size 1150, 700 font "DejaVu Sans,12" linewidth 1.5
set output OUT
set grid
set logscale x
set autoscale xfix
set autoscale yfix
set xlabel "λ (clients)"
set ylabel "final test error (mean over the last 1,000 iterations; bars: the seeds' range)"
set format y "%.2f"
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
set key outside right top vertical box opaque font ",11"
set title TITLE.(QUICK ? " (--smoke)" : "") font ",12"
do for [j = 1:words(RUNS)] {
    dash = word(DASHES, j) + 0
    set style line j lc rgb rule_colour(word(RULEOF, j)) lw 1.5 dt dash pt (4 + 2 * j) ps 1.2
}
# each line a little apart along x, so that the bars of one λ do not overlap
nx = words(RUNS)
sh(j) = 1 + 0.05 * (j - (nx + 1) / 2.0)
plot for [j = 1:nx] sprintf("%s/summary-%s.dat", R, PREFIX) index (j - 1) \
        using ($1 * sh(j)):2:3:4 with yerrorbars ls j notitle, \
     for [j = 1:nx] sprintf("%s/summary-%s.dat", R, PREFIX) index (j - 1) \
        using ($1 * sh(j)):2 with linespoints ls j title word(LABELS, j)
