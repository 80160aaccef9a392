#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read pmqtest JSON files the way an rt-tests user would.

The same functions read the file written by rt-tests' pmqtest (--json) and
the one written by kbench's pmqtest, which carries rt-tests' layout next to
the kbench "rows".

  rt_tests_json.py summary FILE           one line per pair: min avg max samples
  rt_tests_json.py schema RTTESTS KBENCH  every key of the rt-tests file must
                                          exist in the kbench one, same type
  rt_tests_json.py rows FILE              the kbench rows (what compare reads)
  rt_tests_json.py compare DIR NCONF ROUNDS MAX_RATIO
                                          bench/pmqtest_vs_rttests.sh's table:
                                          DIR/cN.cfg, DIR/cN_rR_{theirs,ours}.json
"""

import os
import sys
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bench_tables as rt  # noqa: E402


def main(argv: List[str]) -> int:
    if len(argv) == 3 and argv[1] == "summary":
        doc = rt.rt_load(argv[2])
        for p in rt.pairs(doc):
            print(f"pair {p['pair']}: min {p['min']} avg {p['avg']:.2f} "
                  f"max {p['max']} samples {p['samples']} "
                  f"timeouts {p['timeouts']}")
        return 0
    if len(argv) == 4 and argv[1] == "schema":
        problems = rt.schema_diff(rt.generalise(rt.rt_load(argv[2])),
                                  rt.generalise(rt.rt_load(argv[3])))
        for problem in problems:
            print(problem)
        print("schema: " + ("same keys and types" if not problems else
                            f"{len(problems)} difference(s)"))
        return 1 if problems else 0
    if len(argv) == 3 and argv[1] == "rows":
        doc = rt.rt_load(argv[2])
        for r in doc["rows"]:
            print(f"{r['name']}: {r.get('status')} n={r.get('n')} "
                  f"mean={r.get('mean')} median={r.get('median')} "
                  f"unit={r.get('unit')}")
        return 0
    if len(argv) == 6 and argv[1] == "compare":
        return rt.compare_dir(argv[2], int(argv[3]), int(argv[4]),
                              float(argv[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
