#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write kbench results as one KCIDB I/O document (schema v5).

usage: kcidb.py [-o FILE] [--origin NAME] [--git-commit HASH]
                [--tree-name NAME] [--repo-url URL] [--validate] DIR...

DIR is a `run_all.sh --json DIR` directory (repeated or not, host or
--kernel run; an A/B directory exports both sides), or one result file.
When DIR holds run_all.ktap (run_all.sh keeps it), every KTAP check is
exported too, and a program that crashed or timed out is an ERROR.
Submit the document with KCIDB's own tool: kcidb-submit -p PROJECT -t
TOPIC < FILE. `kbench kcidb` under this script's name (kbtools/kcidb.py).
Exit status: 0 written, 2 bad input or usage.
"""

import sys

from kbtools import kcidb

if __name__ == "__main__":
    sys.exit(kcidb.main(sys.argv[1:], "kcidb.py"))
