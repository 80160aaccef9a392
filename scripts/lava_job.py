#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a LAVA job definition that boots a kernel with a root filesystem
holding the built kbench collection, runs run_all.sh there and reports
every check and timing row as a LAVA test case (scripts/guest/lava_run.sh).

  scripts/lava_job.py --kernel URL --rootfs URL [-t TEST]... [--repeat N]
                      [--full] [-o job.yaml]

`kbench lava job` under this script's name (kbtools/lava_job.py). The
default job is for LAVA's 'qemu' device type without KVM; see
docs/lava.md, for a board.
"""

import sys

from kbtools import lava_job

if __name__ == "__main__":
    sys.exit(lava_job.main(sys.argv[1:], "lava_job.py"))
