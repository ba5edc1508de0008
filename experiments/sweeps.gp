# Learning-rate sweep (final validation error vs alpha per rule, one panel
# per setting) and the epsilon sweep of fasgd std. Called by scripts/paper-report
# with R, OUT, SETS (MUxLAMBDA words), ESETS (the ε sweep's settings, if
# not SETS), RULES, QUICK, and AF, AS, EPS (the
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
load "experiments/colours.gp"
do for [j = 1:words(RULES)] {
    point = 3 + 2 * j
    set style line j lc rgb rule_colour(word(RULES, j)) lw 1.5 pt point ps 1.2
}
# the ε panel: fasgd std in each sweep setting (settings, not rules)
set style line 21 lc rgb "#000000" lw 1.5 pt 7 ps 1.2
set style line 22 lc rgb "#000000" lw 1.5 dt 2 pt 6 ps 1.2
set multiplot layout 1, ns + 1 title "Learning-rate and ε sweeps: final validation error (values above ".sprintf("%.1f", YMAX)." drawn at the top edge)".(QUICK ? " (--quick)" : "") font ",14"
cf = rule_colour("fasgd")
cs = rule_colour("sasgd")
set arrow 1 from AF, graph 0 to AF, graph 1 nohead dt 3 lw 1.5 lc rgb cf back
set arrow 2 from AS, graph 0 to AS, graph 1 nohead dt 3 lw 1.5 lc rgb cs back
set label 1 "fasgd α=".AF." (paper)" at AF, graph 0.04 right offset -0.5, 0 tc rgb cf font ",10" back
set label 2 "sasgd α=".AS." (paper)" at AS, graph 0.04 left offset 0.5, 0 tc rgb cs font ",10" back
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
ES = exists("ESETS") ? ESETS : SETS
plot for [i = 1:words(ES)] sprintf("%s/plot-eps.dat", R) using 1:(clip(column(i + 1))) \
    with linespoints ls (i + 20) title sprintf("μ = %s, λ = %s", word(ES, i)[1:strstrt(word(ES, i), "x")-1], word(ES, i)[strstrt(word(ES, i), "x")+1:])
unset multiplot
