# SPDX-License-Identifier: GPL-2.0
"""Tests of the fork-vs-size and proc-create-vs-book tables
(kbtools.bench_tables) on a small proc_create JSON document, and their
bad-input handling."""
import json
import os
import sys
import tempfile
import unittest
from typing import Any, Dict

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import bench, bench_tables  # noqa: E402
from support import quiet  # noqa: E402


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


class BenchTables(unittest.TestCase):
    def test_fork_vs_size_ratios(self) -> None:
        lines = bench_tables.fork_table(DOC)
        line = [x for x in lines if x.startswith("1GiB")][0]
        self.assertIn("500.0x", line)      # fork p10 50000 / 100
        self.assertIn("1.0x", line)        # vfork 26 / 25
        self.assertIn("fork_grows", "\n".join(lines))
        self.assertNotIn("2.70MB", "\n".join(lines))   # skipped cell left out

    def test_book_ratio(self) -> None:
        fork = [x for x in bench_tables.book_table(DOC)
                if x.startswith("fork ") and "1.70MB" in x][0]
        # 100,000 creations at 0.1 s per 1000: 10 s; book 22.27 s.
        self.assertIn("10.00", fork)
        self.assertTrue(fork.rstrip().endswith("2.2x"), fork)

    def test_bad_input(self) -> None:
        with self.assertRaises(ValueError):
            bench_tables.fork_table(dict(DOC, rows=[]))
        with tempfile.TemporaryDirectory() as d:
            empty = os.path.join(d, "proc_create.json")
            with open(empty, "w") as f:
                json.dump(dict(DOC, rows=[]), f)
            for path in (empty, os.path.join(d, "nonexistent.json")):
                rc, out, err = quiet(bench.table, bench_tables.fork_table,
                                     path)
                self.assertEqual((1, ""), (rc, out))
                self.assertTrue(err.startswith(os.path.basename(path)), err)


if __name__ == "__main__":
    unittest.main()
