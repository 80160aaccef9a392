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
`kbench ktap` under this script's name: the parser and the check are
scripts/kbtools/ktap.py.

  ktap_check.py [--no-fail] [--skip-reasons] [FILE]   (stdin by default)

--no-fail       a 'not ok' at any level is an error
--skip-reasons  a SKIP without a reason is an error (a runner's bare
                '# SKIP' is fine when the nested output gives the reason)
Each error is one line on stderr, "ktap_check.py: FILE: line N: LEVEL:
what" (without "FILE: " for stdin).
Exit status: 0 clean, 1 errors found (listed on stderr), 2 bad usage.
"""

import sys

from kbtools import ktap

if __name__ == "__main__":
    sys.exit(ktap.main(sys.argv[1:], "ktap_check.py"))
