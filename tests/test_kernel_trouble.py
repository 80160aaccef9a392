# SPDX-License-Identifier: GPL-2.0
"""testkernel/kernel_trouble.sh: the kernel's own trouble lines match,
user-space programs' warnings on the same console do not."""

import os
import subprocess
import tempfile
import unittest
from typing import List, Sequence

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "testkernel", "kernel_trouble.sh")

KERNEL_LINES = [
    "[    2.345678] WARNING: CPU: 1 PID: 42 at mm/memcontrol.c:4321 "
    "mem_cgroup_charge+0x1a/0x40",
    "WARNING: CPU: 0 PID: 1 at kernel/taskstats.c:77 fill_stats+0x5/0x9\r",
    "[   10.000001] [  T123] BUG: kernel NULL pointer dereference, "
    "address: 0000000000000008",
    "[    3.1] kernel BUG at mm/slub.c:455!",
    "[    3.2] Oops: 0002 [#1] PREEMPT SMP NOPTI",
    "[    3.3] Oops: general protection fault, probably for non-canonical "
    "address 0xdead: 0000 [#1] SMP",
    "[    3.4] general protection fault, probably for non-canonical address",
    "[    3.5] Call Trace:",
    "[    3.6] Kernel panic - not syncing: Attempted to kill init!",
]

USER_LINES = [
    "virtme-ng-init: WARNING: failed to run: systemd-tmpfiles",
    "[    1.5] virtme-ng-init: WARNING: failed to run: ip",
    "WARNING: the runs come from different setups",
    "# memcg_ks: WARNING: CPU: 1 PID: 2 at x.c:1 (a test's own text)",
    "WARNING: CPU: 1 PID: 2 at",
    "systemd[1]: BUG: not at the start",
    "ok 3 BUG: a test named so",
    "Kernel panic test skipped",
]


def run(lines: Sequence[str]) -> "subprocess.CompletedProcess[str]":
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write("".join(line + "\n" for line in lines))
    try:
        return subprocess.run([SCRIPT, path], capture_output=True,
                              text=True, check=False)
    finally:
        os.unlink(path)


class KernelTroubleTest(unittest.TestCase):
    def test_each_kernel_format_matches(self) -> None:
        for line in KERNEL_LINES:
            r = run(USER_LINES[:2] + [line])
            self.assertEqual(r.returncode, 0, line)
            self.assertEqual(r.stdout, line.rstrip("\r") + "\n")

    def test_user_space_warnings_do_not_match(self) -> None:
        for line in USER_LINES:
            r = run([line])
            self.assertEqual(r.returncode, 1, line)
            self.assertEqual(r.stdout, "")

    def test_bad_usage(self) -> None:
        cases: List[List[str]] = [[], ["/nonexistent/console.log"],
                                  ["a", "b"], ["--x"]]
        for args in cases:
            r = subprocess.run([SCRIPT] + args, capture_output=True,
                               text=True, check=False)
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr.startswith("kernel_trouble.sh: "), args)


if __name__ == "__main__":
    unittest.main()
