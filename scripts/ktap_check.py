#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Strict check of a KTAP stream (run_all.sh output or one program's).

Stricter than the kernel's kunit.py parser, which tolerates a missing or
wrong plan. At every nesting level (4-space indentation, or '# ' prefixes
as run_kselftest.sh writes them) it checks:
  - the version line comes first, the plan comes before the results;
  - results are numbered 1, 2, ... in order and their count equals the plan;
  - every line that looks like a result (any case, any indentation:
    'ok', 'not ok', 'Not OK 2', 'not ok 2x', '  not ok 2') parses as one,
    otherwise it is an error;
  - each field of a '# Totals:' line equals the count of its results
    (pass, fail, xfail, xpass, skip, error);
  - 'Bail out!' is an error;
  - a nested document has its own version line and plan and is closed by
    a result line at its parent's level.
The parser is scripts/kbtools/ktap.py.

  ktap_check.py [--no-fail] [--skip-reasons] [FILE]   (stdin by default)

--no-fail       a 'not ok' at any level is an error
--skip-reasons  a SKIP without a reason is an error (a runner's bare
                '# SKIP' is fine when the nested output gives the reason)
Each error is one line on stderr, "ktap_check.py: FILE: line N: LEVEL:
what" (without "FILE: " for stdin).
Exit status: 0 clean, 1 errors found (listed on stderr), 2 bad usage.
"""

import argparse
import sys
from typing import List, Optional

from kbtools import cli, ktap


@cli.command("ktap_check.py")
def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="ktap_check.py",
                                 description="Strict KTAP stream check.")
    ap.add_argument("file", nargs="?", help="KTAP file (default: stdin)")
    ap.add_argument("--no-fail", action="store_true",
                    help="treat any 'not ok' as an error")
    ap.add_argument("--skip-reasons", action="store_true",
                    help="every SKIP must give a reason")
    opts = ap.parse_args(argv)
    with cli.reading(opts.file):
        doc = ktap.read(opts.file) if opts.file else \
            ktap.parse(sys.stdin.read())
    errors = ktap.check(doc, no_fail=opts.no_fail,
                        skip_reasons=opts.skip_reasons)
    for e in errors:
        print(f"ktap_check.py: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
