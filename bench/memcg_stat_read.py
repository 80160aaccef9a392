#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Side-by-side table of one memcg_ks JSON result (memcg_stat_read.sh).

Per file and filter: the median microseconds of one read kept-fd
(per_read), open+read+close (per_cat) and an external cat (cat_process),
with the ratios cat/read and cat/per_cat, then ks / legacy ratios, then
the BPF cgroup iterator rows against legacy and the .ks filters.
"""

import json
import os
import sys
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bench_tables  # noqa: E402


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: memcg_stat_read.py MEMCG_KS_JSON", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
        lines = bench_tables.memcg_table(doc)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("memcg_stat_read.py: %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
