#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the mean of the first row of a syscall_overhead JSON file in ns
(the row's unit is us), for bench/syscall_vs_perf.sh.

  syscall_vs_perf_row.py FILE
"""

import json
import sys


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: syscall_vs_perf_row.py FILE")
    with open(argv[0], encoding="utf-8") as f:
        row = json.load(f)["rows"][0]
    print("%.3f" % (row["mean"] * 1000))


if __name__ == "__main__":
    main(sys.argv[1:])
