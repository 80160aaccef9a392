#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare kbench runs: a base and one or more candidates, each a results
file, a run_all.sh --json directory or a directory of repeated runs.

Per row: the ratio of the medians over repetitions with its 95%
Hodges-Lehmann interval, a Mann-Whitney U p-value (exact for small n),
Benjamini-Hochberg over the rows, and a verdict (slower, faster, same,
no-verdict, missing, skipped). `kbench compare` under this script's
name: see kbtools/compare.py.

Exit status: 0 compared; 1 a row is significantly slower with its
interval's lower bound above --fail-above PCT; 2 unreadable or mismatched
input, or bad usage.
"""

import sys

from kbtools import compare

if __name__ == "__main__":
    sys.exit(compare.main(sys.argv[1:], "compare.py"))
