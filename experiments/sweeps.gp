# Learning-rate sweep (final validation error vs alpha per rule, one panel
# per setting) and the epsilon sweep of fasgd std. Called by scripts/paper
# with R, OUT, SETS (MUxLAMBDA words), RULES, QUICK, and AF, AS, EPS (the
# figures' fasgd and sasgd alpha and epsilon, marked by dotted lines). Reads the tables that
# scripts/paper-report writes: R/plot-lr-SETTING.dat (one block per rule:
# alpha final best) and R/plot-eps.dat (epsilon, final per setting).
YMAX = 0.3
ns = words(SETS)
set terminal pngcairo size 1700, 620 font "DejaVu Sans,12" linewidth 1.5
set output OUT
set logscale x
set format x "10^{%T}"
set grid
set key below horizontal maxcols 3 box
set bmargin 8
set yrange [0:YMAX]
set ylabel "final validation error"
clip(y) = (y > YMAX ? YMAX : y)
set style line 1 lc rgb "#7f7f7f" lw 2.5 dt 2 pt 6 ps 1.6
set style line 2 lc rgb "#1f77b4" lw 1.5 pt 5 ps 1.1
set style line 3 lc rgb "#d62728" lw 1.5 pt 9 ps 1.3
set style line 4 lc rgb "#ff7f0e" lw 1.5 pt 11 ps 1.3
set style line 5 lc rgb "#2ca02c" lw 1.5 pt 13 ps 1.3
set style line 6 lc rgb "#9467bd" lw 1.5 pt 15 ps 1.2
set multiplot layout 1, ns + 1 title "Learning-rate and ε sweeps: final validation error (values above ".sprintf("%.1f", YMAX)." drawn at the top edge)".(QUICK ? " (--quick)" : "") font ",14"
set arrow 1 from AF, graph 0 to AF, graph 1 nohead dt 3 lw 1.5 lc rgb "#d62728" back
set arrow 2 from AS, graph 0 to AS, graph 1 nohead dt 3 lw 1.5 lc rgb "#1f77b4" back
set label 1 "fasgd α=".AF." (paper)" at AF, graph 0.04 right offset -0.5, 0 tc rgb "#d62728" font ",10" back
set label 2 "sasgd α=".AS." (paper)" at AS, graph 0.04 left offset 0.5, 0 tc rgb "#1f77b4" font ",10" back
do for [i = 1:ns] {
    s = word(SETS, i)
    x = strstrt(s, "x")
    set title sprintf("α sweep, μ = %s, λ = %s", s[1:x-1], s[x+1:])
    set xlabel "learning rate α"
    plot for [j = 1:words(RULES)] sprintf("%s/plot-lr-%s.dat", R, s) index (j - 1) \
        using 1:(clip($2)) with linespoints ls j title word(RULES, j)
}
unset arrow
unset label
set arrow 3 from EPS, graph 0 to EPS, graph 1 nohead dt 3 lw 1.5 lc rgb "#000000" back
set label 3 "ε used: ".EPS at EPS, graph 0.04 left offset 0.5, 0 font ",10" back
set title "ε sweep, fasgd std at α = ".AF
set key below vertical maxrows 2 box
set xlabel "ε (fasgd.epsilon)"
plot for [i = 1:ns] sprintf("%s/plot-eps.dat", R) using 1:(clip(column(i + 1))) \
    with linespoints ls (i + 2) title sprintf("μ = %s, λ = %s", word(SETS, i)[1:strstrt(word(SETS, i), "x")-1], word(SETS, i)[strstrt(word(SETS, i), "x")+1:])
unset multiplot
