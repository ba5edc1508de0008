#!/usr/bin/env python3
"""Prints the table of experiments/turns-het.md from the runs kept beside
it (run.sh; ../testbed_summaries.py says what each cell is): the
variants off, on, offng and onng, then the wall seconds' ratios run by
run (same seed) of on to off, onng to offng, and off to offng (the
guard's cost); then offng2 and onng2 (run.sh), and onng2 to offng2."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from testbed_summaries import report  # noqa: E402

report(here, "het", ("off", "on", "offng", "onng"), (("on", "off"), ("onng", "offng"), ("off", "offng")))
print()
report(here, "het", ("offng2", "onng2"), (("onng2", "offng2"),))
