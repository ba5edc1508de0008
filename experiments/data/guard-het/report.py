#!/usr/bin/env python3
"""Prints the table of experiments/guard-het.md from the runs kept beside
it (run.sh; ../testbed_summaries.py says what each cell is): the
variants het25, het25ng, hom5 and hom5ng, then each
guard-on variant's wall seconds over its guard-off twin's, run by run
(same seed)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from testbed_summaries import COLS, report  # noqa: E402

report(here, "guard", ("het25", "het25ng", "hom5", "hom5ng"), (("het25", "het25ng"), ("hom5", "hom5ng")), COLS[:6])
