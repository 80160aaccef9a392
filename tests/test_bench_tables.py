# SPDX-License-Identifier: GPL-2.0
"""Tests of bench/fork_vs_size.py and bench/proc_create_vs_book.py on a
small proc_create JSON document, and their bad-input handling."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(TOP, "bench")


def cell(name: str, median: float, p10: float, vmsize: int, vmrss: int,
         creations: int = 1000, elapsed: float = 0.1) -> Dict[str, Any]:
    return {"name": name, "status": "ok", "unit": "us", "median": median,
            "extra": {"p10": p10, "vmsize_kib": vmsize, "vmrss_kib": vmrss,
                      "creations": creations, "elapsed_s": elapsed,
                      "parent_cpu_s": elapsed / 2,
                      "rate_per_s": creations / elapsed}}


DOC = {
    "cmdline": "proc_create --json x", "kernel": {"release": "6.18"},
    "machine": {"cpus": 2},
    "rows": [
        cell("fork@1.70MB", 120.0, 100.0, 1741, 1300),
        cell("vfork@1.70MB", 30.0, 25.0, 1741, 1300),
        cell("fork@1GiB", 60000.0, 50000.0, 1050000, 1049000),
        cell("vfork@1GiB", 31.0, 26.0, 1050000, 1049000),
        {"name": "vfork@2.70MB", "status": "skip", "reason": "no"},
        {"name": "fork_grows", "status": "ok",
         "extra": {"ratio": 500.0, "bound": 2.0}},
    ],
}


def run(script: str, *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, os.path.join(BENCH, script)] +
                          list(args), capture_output=True, text=True)


class BenchTables(unittest.TestCase):
    def setUp(self) -> None:
        fd, self.path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(DOC, f)

    def tearDown(self) -> None:
        os.unlink(self.path)

    def test_fork_vs_size_ratios(self) -> None:
        r = run("fork_vs_size.py", self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        line = [x for x in r.stdout.splitlines() if x.startswith("1GiB")][0]
        self.assertIn("500.0x", line)      # fork p10 50000 / 100
        self.assertIn("1.0x", line)        # vfork 26 / 25
        self.assertIn("fork_grows", r.stdout)
        self.assertNotIn("2.70MB", r.stdout)   # skipped cell left out

    def test_book_ratio(self) -> None:
        r = run("proc_create_vs_book.py", self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        fork = [x for x in r.stdout.splitlines()
                if x.startswith("fork ") and "1.70MB" in x][0]
        # 100,000 creations at 0.1 s per 1000: 10 s; book 22.27 s.
        self.assertIn("10.00", fork)
        self.assertTrue(fork.rstrip().endswith("2.2x"), fork)

    def test_bad_input(self) -> None:
        for script in ("fork_vs_size.py", "proc_create_vs_book.py"):
            self.assertEqual(run(script).returncode, 2)
            self.assertEqual(run(script, "--bogus").returncode, 2)
            self.assertEqual(run(script, "/nonexistent.json").returncode, 1)
        empty = dict(DOC, rows=[])
        with open(self.path, "w") as f:
            json.dump(empty, f)
        self.assertEqual(run("fork_vs_size.py", self.path).returncode, 1)


if __name__ == "__main__":
    unittest.main()
