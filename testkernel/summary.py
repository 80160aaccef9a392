#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the seeds' two comparisons from a test-kernel run: `kbench kernel
summary` (scripts/kbtools/testkernel.py) under this script's name, with
the same options, output and exit status."""

import os
import sys

if __name__ == "__main__":
    kbench = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..",
                          "kbench")
    os.environ["KBENCH_PROG"] = "summary.py"
    os.execv(sys.executable, [sys.executable, kbench, "kernel", "summary",
                              *sys.argv[1:]])
