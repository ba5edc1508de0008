# Fig. 3 (B-FASGD) for one statistic: test error vs iteration for the
# fetch-gate and push-gate sweeps, and transmitted vs potential copies.
# Called by scripts/paper-report with R, OUT, ST (std or abs), CF and CP
# (the c values), KF and KP (every-k baselines, may be empty), SET, PFX (the
# runs' name prefix, fig3-ST-aALPHA), SEED (the suffix of the runs whose
# copies are drawn, -s1), ALPHA, BAND (what the error curves are), YLO and
# YHI (the error panels' range: every curve after the first tenth of the
# run), QUICK. Error curves read R/band-PFX....dat: iteration, then the
# mean, smallest and largest over the seeds of the running mean of the last
# 10 test errors. Copy curves read one seed's kept curve: 1 iteration,
# 6 fetches, 7 potential_fetches, 8 pushes, 9 potential_pushes. Each row's
# key sits below its middle panel, off the data.
load "experiments/smooth.gp"
set terminal pngcairo size 2100, 1400 font "DejaVu Sans,12" linewidth 1.5
set output OUT
set datafile separator ","
set grid
x = strstrt(SET, "x")
# one key a row, below its middle panel (KEYON), none elsewhere
KEYON = 'set key at graph 0.5, graph -0.2 center top horizontal maxcols 4 box opaque font ",11"'
set multiplot layout 2, 3 margins 0.05, 0.98, 0.12, 0.93 spacing 0.06, 0.19 title sprintf("Fig. 3: B-FASGD, fasgd %s at α = %s, μ = %s, λ = %s (errors: %s; copies: seed %s)%s", ST, ALPHA, SET[1:x-1], SET[x+1:], BAND, SEED[3:], QUICK ? " (--smoke)" : "") font ",15"
f(n) = sprintf("%s/%s%s%s.csv", R, PFX, n, SEED)
b(n) = sprintf("%s/band-%s%s.dat", R, PFX, n)
base = f("-c0")
set style line 1 lc rgb "#000000" lw 1.5
set style line 2 lc rgb "#1f77b4" lw 1.5
set style line 3 lc rgb "#2ca02c" lw 1.5
set style line 4 lc rgb "#ff7f0e" lw 1.5
set style line 5 lc rgb "#d62728" lw 1.5
set style line 6 lc rgb "#9467bd" lw 1.5
set style line 7 lc rgb "#8c564b" lw 1.5
set style line 11 lc rgb "#17becf" lw 1.5 dt 2
set style line 12 lc rgb "#e377c2" lw 1.5 dt 2
set style line 13 lc rgb "#7f7f7f" lw 1.5 dt 2
KFP = (words(KF) > 0) ? ', for [i = 1:words(KF)] b("-kfetch".word(KF, i)) using 1:2 with lines ls (i + 10) title "every k = ".word(KF, i)' : ''
KPP = (words(KP) > 0) ? ', for [i = 1:words(KP)] b("-kpush".word(KP, i)) using 1:2 with lines ls (i + 10) title "every k = ".word(KP, i)' : ''
KFC = (words(KF) > 0) ? ', for [i = 1:words(KF)] f("-kfetch".word(KF, i)) using ($7/1000):($6/1000) with lines ls (i + 10) title "every k = ".word(KF, i)' : ''
KPC = (words(KP) > 0) ? ', for [i = 1:words(KP)] f("-kpush".word(KP, i)) using ($9/1000):($8/1000) with lines ls (i + 10) title "every k = ".word(KP, i)' : ''
KFR = (words(KF) > 0) ? ', for [i = 1:words(KF)] f("-kfetch".word(KF, i)) using 1:(wr($6, $7)) with lines ls (i + 10) title "every k = ".word(KF, i)' : ''
KPR = (words(KP) > 0) ? ', for [i = 1:words(KP)] f("-kpush".word(KP, i)) using 1:(wr($8, $9)) with lines ls (i + 10) title "every k = ".word(KP, i)' : ''

# row 1: the fetch gate
set format x "%.0s%c"
set format y "%.2f"
unset key
set xrange [0:*]
set yrange [YLO + 0 : YHI + 0]
set xlabel "iteration"
set ylabel "test error (mean of last 10)"
set title "fetch gate swept (every push sent)"
set datafile separator whitespace
plot b("-c0") using 1:3:4 with filledcurves ls 1 fs transparent solid 0.15 notitle, \
     for [i = 1:words(CF)] b("-cfetch".word(CF, i)) using 1:3:4 with filledcurves ls (i + 1) fs transparent solid 0.15 notitle, \
     b("-c0") using 1:2 with lines ls 1 title "c = 0", \
     for [i = 1:words(CF)] b("-cfetch".word(CF, i)) using 1:2 with lines ls (i + 1) title "c_{fetch} = ".word(CF, i) @KFP
set datafile separator ","
set format x "%g"
set format y "%g"
set yrange [0:*]
@KEYON
set xlabel "potential fetches (thousands)"
set ylabel "actual fetches (copies of θ sent, thousands)"
set title "fetches: actual vs potential"
plot base using ($7/1000):($6/1000) with lines ls 1 title "c = 0", \
     for [i = 1:words(CF)] f("-cfetch".word(CF, i)) using ($7/1000):($6/1000) with lines ls (i + 1) title "c_{fetch} = ".word(CF, i) @KFC
set format x "%.0s%c"
set format y "%.1f"
set yrange [0:1.05]
unset key
set xlabel "iteration"
set ylabel "fetches / potential fetches"
set title "fetch rate over the last 1,000 iterations"
plot base using 1:(wr($6, $7)) with lines ls 1 title "c = 0", \
     for [i = 1:words(CF)] f("-cfetch".word(CF, i)) using 1:(wr($6, $7)) with lines ls (i + 1) title "c_{fetch} = ".word(CF, i) @KFR

# row 2: the push gate
set format x "%.0s%c"
set format y "%.2f"
set yrange [YLO + 0 : YHI + 0]
set xlabel "iteration"
set ylabel "test error (mean of last 10)"
set title "push gate swept (every fetch made; skipped push: resend last)"
set datafile separator whitespace
plot b("-c0") using 1:3:4 with filledcurves ls 1 fs transparent solid 0.15 notitle, \
     for [i = 1:words(CP)] b("-cpush".word(CP, i)) using 1:3:4 with filledcurves ls (i + 1) fs transparent solid 0.15 notitle, \
     b("-c0") using 1:2 with lines ls 1 title "c = 0", \
     for [i = 1:words(CP)] b("-cpush".word(CP, i)) using 1:2 with lines ls (i + 1) title "c_{push} = ".word(CP, i) @KPP
set datafile separator ","
set format x "%g"
set format y "%g"
set yrange [0:*]
@KEYON
set xlabel "potential pushes (thousands)"
set ylabel "actual pushes (gradients sent, thousands)"
set title "pushes: actual vs potential"
plot base using ($9/1000):($8/1000) with lines ls 1 title "c = 0", \
     for [i = 1:words(CP)] f("-cpush".word(CP, i)) using ($9/1000):($8/1000) with lines ls (i + 1) title "c_{push} = ".word(CP, i) @KPC
set format x "%.0s%c"
set format y "%.1f"
set yrange [0:1.05]
unset key
set xlabel "iteration"
set ylabel "pushes / potential pushes"
set title "push rate over the last 1,000 iterations"
plot base using 1:(wr($8, $9)) with lines ls 1 title "c = 0", \
     for [i = 1:words(CP)] f("-cpush".word(CP, i)) using 1:(wr($8, $9)) with lines ls (i + 1) title "c_{push} = ".word(CP, i) @KPR
unset multiplot
