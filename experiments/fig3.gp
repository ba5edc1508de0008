# Fig. 3 (B-FASGD) for one statistic: test error vs iteration for the
# fetch-gate and push-gate sweeps, and transmitted vs potential copies.
# Called by scripts/paper-report with R, OUT, ST (std or abs), CF and CP
# (the c values), KF and KP (every-k baselines, may be empty), SET, PFX (the
# runs' name prefix, fig3-ST-aALPHA), ALPHA, BAND (what the curves are),
# YLO and YHI (the error panels' range: every curve after the first tenth
# of the run), QUICK. Error curves read R/band-PFX....dat: iteration, then
# the mean, smallest and largest over the seeds of the running mean test
# error over the last 1,000 iterations. Copy curves read R/copies-PFX....dat, over the same
# seeds: 1 iteration, 2 potential fetches, 3-5 actual fetches (mean,
# smallest, largest), 6 potential pushes, 7-9 actual pushes, 10-12 fetch
# rate and 13-15 push rate over the last 10 evaluations (1,000 iterations).
# Colours: gate_colour (experiments/colours.gp). Each row's key sits below
# its middle panel, off the data.
load "experiments/colours.gp"
set terminal pngcairo size 2100, 1400 font "DejaVu Sans,12" linewidth 1.5
set output OUT
set grid
x = strstrt(SET, "x")
# one key a row, below its middle panel (KEYON), none elsewhere
KEYON = 'set key at graph 0.5, graph -0.2 center top horizontal maxcols 4 box opaque font ",11"'
set multiplot layout 2, 3 margins 0.05, 0.98, 0.12, 0.93 spacing 0.06, 0.19 title sprintf("Fig. 3: B-FASGD, fasgd %s at α = %s, μ = %s, λ = %s (%s)%s", ST, ALPHA, SET[1:x-1], SET[x+1:], BAND, QUICK ? " (--smoke)" : "") font ",15"
b(n) = sprintf("%s/band-%s%s.dat", R, PFX, n)
c(n) = sprintf("%s/copies-%s%s.dat", R, PFX, n)
cc(i) = gate_colour("c".i)
kc(k) = gate_colour("k".k)
BANDS = 'fs transparent solid 0.15 noborder notitle'
# every-k lines of a panel: KLINES(WHAT, KS, USING) as a plot clause
KLINES(w, ks, u) = (words(ks) > 0) ? sprintf(', for [i = 1:words(%s)] %s("-%s".word(%s, i)) using %s with lines lc rgb kc(word(%s, i)) lw 1.5 dt 2 title "every k = ".word(%s, i)', ks, (u eq "band" ? "b" : "c"), w, ks, (u eq "band" ? "1:2" : u), ks, ks) : ''

# row 1: the fetch gate
set format x "%.0s%c"
set format y "%.2f"
unset key
set xrange [0:*]
set yrange [YLO + 0 : YHI + 0]
set xlabel "iteration"
set ylabel "test error (mean over the last 1,000 iterations)"
set title "fetch gate swept (every push sent)"
K = KLINES("kfetch", "KF", "band")
plot b("-c0") using 1:3:4 with filledcurves lc rgb cc(0) @BANDS, \
     for [i = 1:words(CF)] b("-cfetch".word(CF, i)) using 1:3:4 with filledcurves lc rgb cc(i) @BANDS, \
     b("-c0") using 1:2 with lines lc rgb cc(0) lw 1.5 title "c = 0", \
     for [i = 1:words(CF)] b("-cfetch".word(CF, i)) using 1:2 with lines lc rgb cc(i) lw 1.5 title "c_{fetch} = ".word(CF, i) @K
set format x "%g"
set format y "%g"
set yrange [0:*]
@KEYON
set xlabel "potential fetches (thousands)"
set ylabel "actual fetches (copies of θ sent, thousands)"
set title "fetches: actual vs potential"
K = KLINES("kfetch", "KF", "($2/1000):($3/1000)")
plot for [i = 1:words(CF)] c("-cfetch".word(CF, i)) using ($2/1000):($4/1000):($5/1000) with filledcurves lc rgb cc(i) @BANDS, \
     c("-c0") using ($2/1000):($3/1000) with lines lc rgb cc(0) lw 1.5 title "c = 0", \
     for [i = 1:words(CF)] c("-cfetch".word(CF, i)) using ($2/1000):($3/1000) with lines lc rgb cc(i) lw 1.5 title "c_{fetch} = ".word(CF, i) @K
set format x "%.0s%c"
set format y "%.1f"
set yrange [0:1.05]
unset key
set xlabel "iteration"
set ylabel "fetches / potential fetches"
set title "fetch rate over the last 1,000 iterations"
K = KLINES("kfetch", "KF", "1:10")
plot for [i = 1:words(CF)] c("-cfetch".word(CF, i)) using 1:11:12 with filledcurves lc rgb cc(i) @BANDS, \
     c("-c0") using 1:10 with lines lc rgb cc(0) lw 1.5 title "c = 0", \
     for [i = 1:words(CF)] c("-cfetch".word(CF, i)) using 1:10 with lines lc rgb cc(i) lw 1.5 title "c_{fetch} = ".word(CF, i) @K

# row 2: the push gate
set format x "%.0s%c"
set format y "%.2f"
set yrange [YLO + 0 : YHI + 0]
set xlabel "iteration"
set ylabel "test error (mean over the last 1,000 iterations)"
set title "push gate swept (every fetch made; skipped push: resend last)"
K = KLINES("kpush", "KP", "band")
plot b("-c0") using 1:3:4 with filledcurves lc rgb cc(0) @BANDS, \
     for [i = 1:words(CP)] b("-cpush".word(CP, i)) using 1:3:4 with filledcurves lc rgb cc(i) @BANDS, \
     b("-c0") using 1:2 with lines lc rgb cc(0) lw 1.5 title "c = 0", \
     for [i = 1:words(CP)] b("-cpush".word(CP, i)) using 1:2 with lines lc rgb cc(i) lw 1.5 title "c_{push} = ".word(CP, i) @K
set format x "%g"
set format y "%g"
set yrange [0:*]
@KEYON
set xlabel "potential pushes (thousands)"
set ylabel "actual pushes (gradients sent, thousands)"
set title "pushes: actual vs potential"
K = KLINES("kpush", "KP", "($6/1000):($7/1000)")
plot for [i = 1:words(CP)] c("-cpush".word(CP, i)) using ($6/1000):($8/1000):($9/1000) with filledcurves lc rgb cc(i) @BANDS, \
     c("-c0") using ($6/1000):($7/1000) with lines lc rgb cc(0) lw 1.5 title "c = 0", \
     for [i = 1:words(CP)] c("-cpush".word(CP, i)) using ($6/1000):($7/1000) with lines lc rgb cc(i) lw 1.5 title "c_{push} = ".word(CP, i) @K
set format x "%.0s%c"
set format y "%.1f"
set yrange [0:1.05]
unset key
set xlabel "iteration"
set ylabel "pushes / potential pushes"
set title "push rate over the last 1,000 iterations"
K = KLINES("kpush", "KP", "1:13")
plot for [i = 1:words(CP)] c("-cpush".word(CP, i)) using 1:14:15 with filledcurves lc rgb cc(i) @BANDS, \
     c("-c0") using 1:13 with lines lc rgb cc(0) lw 1.5 title "c = 0", \
     for [i = 1:words(CP)] c("-cpush".word(CP, i)) using 1:13 with lines lc rgb cc(i) lw 1.5 title "c_{push} = ".word(CP, i) @K
unset multiplot
