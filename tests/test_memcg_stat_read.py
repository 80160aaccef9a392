# SPDX-License-Identifier: GPL-2.0
"""Unit tests of memcg-stat-read's table (kbtools.bench_tables.memcg_table):
the memcg_ks side-by-side table."""

import os
import sys
import unittest
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import bench_tables  # noqa: E402


def doc(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"kernel": {"release": "6.12"}, "clock": "CLOCK_MONOTONIC",
            "params": {"cgroup_version": 2, "cgroup": "/sys/fs/cgroup/x",
                       "cgroup_origin": "created", "count": 100,
                       "batch": 10, "cat_count": 5},
            "rows": rows}


def row(name: str, median: Optional[float], status: str = "ok"
        ) -> Dict[str, Any]:
    return {"name": name, "status": status, "median": median}


class TableTest(unittest.TestCase):
    def test_ratios(self) -> None:
        lines = bench_tables.memcg_table(doc([
            row("stat_legacy_per_read", 5.0),
            row("stat_legacy_per_cat", 10.0),
            row("stat_legacy_cat_process", 1000.0),
            row("stat_ks3_per_read", 1.0),
            row("cat_devnull_process", 900.0),
        ]))
        text = "\n".join(lines)
        self.assertIn("200.0", text)           # cat / read
        self.assertIn("100.0", text)           # cat / per_cat
        self.assertRegex(text, r"memory\.stat\.ks +ks3 +x0\.20")
        self.assertIn("cat /dev/null", text)

    def test_failed_rows_left_out(self) -> None:
        lines = bench_tables.memcg_table(doc([
            row("stat_legacy_per_read", 5.0),
            row("stat_ks3_per_read", 1.0, status="fail"),
        ]))
        self.assertIn("no .ks rows", "\n".join(lines))

    def test_bpf_rows(self) -> None:
        bpf = row("bpf_iter3", 2.5)
        bpf["extra"] = {"load_ms": 950.0}
        bpf["note"] = ("create + read + close of a cgroup iterator fd: "
                       "cgroup_rstat_flush, then 3 counters")
        lines = bench_tables.memcg_table(doc([
            row("stat_legacy_per_read", 5.0),
            row("stat_ks3_per_read", 1.0),
            bpf,
            row("bpf_iter16", 1.0, status="skip"),
        ]))
        text = "\n".join(lines)
        self.assertRegex(text, r"bpf_iter3 +2\.500 +0\.50 +2\.50")
        self.assertNotIn("bpf_iter16", text)
        self.assertIn("program load 950.0 ms, once for every row; flush: "
                      "cgroup_rstat_flush", text)

    def test_bpf_skip_reason(self) -> None:
        skip = row("bpf_iter3", 0, status="skip")
        skip["reason"] = "kernel has no BTF"
        lines = bench_tables.memcg_table(doc([row("stat_legacy_per_read", 5.0),
                                           skip]))
        self.assertIn("no bpf_iter rows ran: kernel has no BTF",
                      "\n".join(lines))


if __name__ == "__main__":
    unittest.main()
