# SPDX-License-Identifier: GPL-2.0
"""The small checkers tests/run.sh and scripts/ci-vm.sh call: each must
reject a corrupted input."""

import json
import os
import pathlib
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
sys.path.insert(0, HERE)

import check_guest_json  # noqa: E402
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
        {"name": "row_skipped", "status": "skip",
         "reason": 'no "privilege"'},
    ],
}


class UnitJsonTest(unittest.TestCase):
    def test_good(self):
        self.assertEqual(check_unit_json.problems(UNIT_DOC), [])

    def test_each_corruption_found(self):
        def corrupt(change):
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
        self.assertTrue(corrupt(lambda d: d["rows"][1].update(reason="")))


class GuestJsonTest(unittest.TestCase):
    def test_marked_missing_and_unmarked(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp)
            for name, doc in (("a", {"machine": {"guest": "tcg"}}),
                              ("b", {"machine": {"guest": None}}),
                              ("c", [1])):
                (folder / f"{name}.json").write_text(json.dumps(doc))
            (folder / "d.json").write_text("{broken")
            self.assertIsNone(check_guest_json.problem(folder / "a.json"))
            for name in "bcde":
                self.assertIsNotNone(
                    check_guest_json.problem(folder / f"{name}.json"), name)
            self.assertEqual(check_guest_json.main([tmp, "a"]), 0)
            self.assertEqual(check_guest_json.main([tmp, "a b"]), 1)
            self.assertEqual(check_guest_json.main([tmp, " "]), 2)


if __name__ == "__main__":
    unittest.main()
