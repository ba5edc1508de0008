# rows of docs/ALGORITHMS.md's table from an alone.csv: attack, then
# test_left → test_error per seed, mean rise, updates alone (min–max),
# θ set back (guard_loss_rollbacks summed over seeds). Usage:
#   awk -f experiments/data/attacks-alone/table.awk DIR/alone.csv
BEGIN { FS = "," }
NR > 1 { a = $4; if (!(a in n)) order[++k] = a
         s[a] = s[a] (n[a]++ ? ", " : "") sprintf("%.3f → %.3f", $9, $11)
         r[a] += $11 - $9; b[a] += $17
         if (!(a in lo) || $12 < lo[a]) lo[a] = $12; if (!(a in hi) || $12 > hi[a]) hi[a] = $12 }
function th(x) { return x >= 1000 ? int(x / 1000) "," sprintf("%03d", x % 1000) : x }
END { for (i = 1; i <= k; i++) { a = order[i]
        m = sprintf("%+.3f", r[a] / n[a]); sub(/^-/, "−", m)
        printf "| %s | %s | %s | %s–%s | %s |\n", a, s[a], m, th(lo[a]), th(hi[a]), th(b[a]) } }
