#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print fork_vs_size.sh's table from a proc_create --json file:
per size, median and p10 per creation of fork, vfork and posix_spawn,
relative to the smallest size, and fork's cost per resident page.

Usage: bench/fork_vs_size.py JSON
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bench_tables, cli  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.json_table_main("fork_vs_size.py", bench_tables.fork_table,
                                 sys.argv))
