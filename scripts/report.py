#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One self-contained HTML report of a kbench run, or of an A/B comparison.

    report.py [-o FILE] DIR          a run_all.sh --json DIR (repeated or not)
    report.py [-o FILE] ABDIR        an A/B directory (base/ and candidate/)
    report.py [-o FILE] BASE CAND    two runs: verdicts and forest plot
    report.py --check                can a report be drawn here?

`kbench report` under this script's name (kbtools/report.py). Exit
status: 0 written; 2 bad usage or input that is not kbench results
(missing directory, not kbench JSON, base and candidate of different
tests); 4 matplotlib is missing (the message says how to install it).
"""

import sys

from kbtools import report

if __name__ == "__main__":
    sys.exit(report.main(sys.argv[1:], "report.py"))
