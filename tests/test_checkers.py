# SPDX-License-Identifier: GPL-2.0
"""The small checkers tests/run.sh calls: each must reject a corrupted
input. (The guests' JSON check of scripts/ci_vm.sh: tests/test_vm.py.)"""

import json
import os
import sys
import unittest
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_unit_json  # noqa: E402

UNIT_DOC = {
    "schema": "kbench-results/1", "test": "unit", "kernel": {},
    "machine": {"clock_mode": "real"},
    "boot_id": "0b6c3a4e-6f1d-4c2b-9a57-3c1f2d8e9b10",
    "date": "", "cmdline": "", "clock": "CLOCK_MONOTONIC",
    "params": {"quote\"and\\slash": "tab\there\nnewline", "nan_param": None},
    "rows": [
        {"name": "row_one", "unit": "us", "n": 2, "mean": 2.0, "min": 1,
         "max": 3, "median": 2, "stddev": 1, "rsd_pct": 50,
         "extra": {"batch": 1000}},
        {"name": "row_mode", "unit": "us", "n": 2, "mean": 2.0, "min": 1.5,
         "max": 2.5, "median": 2.0, "stddev": 0.7, "rsd_pct": 35,
         "mode": 1.5, "mode_share": 0.5},
        {"name": "row_skipped", "status": "skip",
         "reason": 'no "privilege"'},
    ],
}


class UnitJsonTest(unittest.TestCase):
    def test_good(self) -> None:
        self.assertEqual(check_unit_json.problems(UNIT_DOC), [])

    def test_each_corruption_found(self) -> None:
        def corrupt(change: Callable[[Dict[str, Any]], object]
                    ) -> List[str]:
            doc = json.loads(json.dumps(UNIT_DOC))
            change(doc)
            return check_unit_json.problems(doc)

        self.assertTrue(corrupt(lambda d: d.pop("clock")))
        self.assertTrue(corrupt(lambda d: d["machine"].update(
            clock_mode="icount")))
        self.assertTrue(corrupt(lambda d: d.pop("boot_id")))
        self.assertTrue(corrupt(lambda d: d["params"].update(
            {"quote\"and\\slash": "tab here"})))
        self.assertTrue(corrupt(lambda d: d["params"].update(nan_param=0)))
        self.assertTrue(corrupt(lambda d: d["rows"][0].update(n=3)))
        self.assertTrue(corrupt(lambda d: d["rows"][0].pop("rsd_pct")))
        self.assertTrue(corrupt(lambda d: d["rows"][2].update(reason="")))
        self.assertTrue(corrupt(lambda d: d["rows"][1].pop("mode_share")))
        self.assertTrue(corrupt(lambda d: d["rows"][0].update(mode=1.0)))


if __name__ == "__main__":
    unittest.main()
