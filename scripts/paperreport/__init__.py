"""scripts/paper-report, by section: common, runs, report, and a module a
figure or section (intro, sweeps, fig1, fig2, fig3, fashion)."""
