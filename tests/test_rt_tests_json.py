# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the reader of rt-tests' pmqtest JSON layout that
pmqtest-vs-rttests judges both tools with (kbtools.bench_tables,
bench/rt_tests_json.py)."""

import io
import os
import sys
import unittest
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import bench_tables as rj  # noqa: E402


def rt_doc(avgs: Sequence[float], samples: Sequence[int],
           rows: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    """An rt-tests layout document, one pair per average."""
    thread: Dict[str, Any] = {}
    for i, (avg, n) in enumerate(zip(avgs, samples)):
        thread[str(i)] = {
            "sender": {"cpu": i, "priority": 0, "samples": n,
                       "interval": 100},
            "receiver": {"cpu": i, "priority": 0, "timeoutcount": 0,
                         "min": 2, "avg": avg, "max": 50},
        }
    doc: Dict[str, Any] = {"file_version": 1, "num_threads": len(avgs), "thread": thread}
    if rows is not None:
        doc["rows"] = rows
    return doc


class Reader(unittest.TestCase):
    def test_pairs_in_numeric_order(self) -> None:
        doc = rt_doc([1.0] * 11, [1] * 11)
        self.assertEqual([p["pair"] for p in rj.pairs(doc)], list(range(11)))

    def test_weighted_avg(self) -> None:
        self.assertAlmostEqual(rj.weighted_avg(rt_doc([4.0, 10.0], [3, 1])),
                               5.5)

    def test_schema_same(self) -> None:
        self.assertEqual(rj.schema_diff(rt_doc([4.0], [1]),
                                        rt_doc([5.0], [2], rows=[])), [])

    def test_schema_missing_key_found(self) -> None:
        ours = rt_doc([4.0], [1])
        del ours["thread"]["0"]["receiver"]["timeoutcount"]
        self.assertEqual(rj.schema_diff(rt_doc([4.0], [1]), ours),
                         ["$.thread.0.receiver.timeoutcount: missing"])

    def test_schema_type_change_found(self) -> None:
        ours = rt_doc([4.0], [1])
        ours["thread"]["0"]["receiver"]["min"] = 2.0
        self.assertEqual(len(rj.schema_diff(rt_doc([4.0], [1]), ours)), 1)


class Compare(unittest.TestCase):
    def run_compare(self, their_avg: float, our_avg: float,
                    rows: List[Dict[str, Any]]) -> Tuple[int, io.StringIO]:
        theirs = [rt_doc([their_avg], [100])]
        ours = [rt_doc([our_avg], [100], rows=rows)]
        out = io.StringIO()
        return rj.compare_config(theirs, ours, "-S", 1, 1.10, out), out

    def test_same_cost_ok(self) -> None:
        status, out = self.run_compare(5.0, 5.2, [{"name": "latency_pair0"}])
        self.assertEqual(status, 0, out.getvalue())
        self.assertIn("ok", out.getvalue())

    def test_ratio_above_limit_fails(self) -> None:
        status, out = self.run_compare(5.0, 6.0, [{"name": "latency_pair0"}])
        self.assertEqual(status, 1)
        self.assertIn("FAIL: above 1.1", out.getvalue())

    def test_no_kbench_rows_fails(self) -> None:
        status, _ = self.run_compare(5.0, 5.0, [])
        self.assertEqual(status, 1)


if __name__ == "__main__":
    unittest.main()
