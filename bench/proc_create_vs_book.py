#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print a proc_create --json file's cells beside Table 28-3 of The Linux
Programming Interface (elapsed, parent CPU, rate for 100,000 creations).

Usage: bench/proc_create_vs_book.py JSON
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bench_tables, cli  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.json_table_main("proc_create_vs_book.py", bench_tables.book_table,
                                 sys.argv))
