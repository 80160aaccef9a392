#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seed 000 table from the JSON files of bench/taskstats_seed.sh.

Usage: taskstats_seed.py OUTDIR GOAL SIZE...
Reads OUTDIR/taskstats_SIZE.json for each SIZE, prints seconds per pass
(median) per method, the ratio of each to per-pid netlink and the goal
(netlink_batched GOAL times faster than netlink_per_pid at 1000
processes). Exit status 1 when the goal is missed or not measured.
"""

import os
import sys
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bench_tables  # noqa: E402


def main(argv: List[str]) -> int:
    if len(argv) < 4:
        print((__doc__ or "").strip().splitlines()[2], file=sys.stderr)
        return 2
    outdir, goal, sizes = argv[1], float(argv[2]), argv[3:]
    rows, kernel = bench_tables.seed_rows(outdir, sizes)
    bench_tables.seed_tables(rows, kernel, sizes)
    return bench_tables.seed_goal(rows, goal)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
