# The one table of colours: each rule has the same colour in every figure
# (loaded by curves.gp, sweeps.gp, summary.gp and scripts/baselines). rule_colour(NAME) is the
# colour of a rule as the grid names it (fasgd-abs: fasgd's abs statistic;
# dcasgd-a: DC-ASGD-a);
# an unknown name is black.
RULE_NAMES = "fasgd fasgd-abs sasgd asgd dcasgd gap-aware fasgd-norm dcasgd-a"
RULE_COLOURS = "#d62728 #ff7f0e #1f77b4 #7f7f7f #2ca02c #9467bd #8c564b #17becf"
rule_index(r) = sum [i = 1:words(RULE_NAMES)] (word(RULE_NAMES, i) eq r ? i : 0)
rule_colour(r) = rule_index(r) > 0 ? word(RULE_COLOURS, rule_index(r)) : "#000000"
