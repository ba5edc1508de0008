# The one table of colours: each rule has the same colour in every figure
# (loaded by curves.gp, sweeps.gp, summary.gp and scripts/baselines). rule_colour(NAME) is the
# colour of a rule as the grid names it (fasgd-abs: fasgd's abs statistic;
# dcasgd-a: DC-ASGD-a);
# an unknown name is black.
RULE_NAMES = "fasgd fasgd-abs sasgd asgd dcasgd gap-aware fasgd-norm dcasgd-a"
RULE_COLOURS = "#d62728 #ff7f0e #1f77b4 #7f7f7f #2ca02c #9467bd #8c564b #17becf"
rule_index(r) = sum [i = 1:words(RULE_NAMES)] (word(RULE_NAMES, i) eq r ? i : 0)
rule_colour(r) = rule_index(r) > 0 ? word(RULE_COLOURS, rule_index(r)) : "#000000"
# Fig. 3's gates (fig3.gp, fig3-bytes.gp): gate_colour(KEY) for c0 (the
# ungated run), c1..c4 (the c values of a B-FASGD sweep by their place in
# it, smallest first: the two statistics sweep different c but as many) and
# kK (the every-k baseline with that k). The every-k lines are dashed.
GATE_NAMES = "c0 c1 c2 c3 c4 k2 k4 k10"
GATE_COLOURS = "#000000 #1f77b4 #2ca02c #ff7f0e #d62728 #17becf #e377c2 #7f7f7f"
gate_index(g) = sum [i = 1:words(GATE_NAMES)] (word(GATE_NAMES, i) eq g ? i : 0)
gate_colour(g) = gate_index(g) > 0 ? word(GATE_COLOURS, gate_index(g)) : "#000000"
