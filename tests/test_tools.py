# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the collection's Python tools (ktap_check.py: test_ktap.py)."""

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.path.insert(0, SCRIPTS)

from kbtools import compare  # noqa: E402


def doc(test: str = "t", rows: Optional[List[Dict[str, Any]]] = None,
        guest: Optional[str] = None) -> Dict[str, Any]:
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.18"}, "machine": {"guest": guest},
            "date": "2026-01-01T00:00:00Z", "rows": rows or []}


def row(name: str, mean: float, unit: str = "us", status: str = "ok",
        note: Optional[str] = None) -> Dict[str, Any]:
    r = {"name": name, "status": status, "unit": unit, "n": 10,
         "mean": mean, "median": mean, "min": mean, "max": mean,
         "stddev": 0, "rsd_pct": 0}
    if note:
        r["note"] = note
    return r


class CompareTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def write(self, name: str, content: object) -> str:
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def run_compare(self, *args: str) -> Tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            rc = compare.main(list(args), "compare.py")
        finally:
            sys.stdout, sys.stderr = old
        return rc, out.getvalue(), err.getvalue()

    def test_ratio_of_single_runs_without_verdict(self) -> None:
        b = self.write("b.json", doc(rows=[row("fork", 239.651, note="x")]))
        c = self.write("c.json", doc(rows=[row("fork", 437.887)]))
        rc, out, _ = self.run_compare(b, c)
        self.assertEqual(rc, 0)
        line = [l for l in out.splitlines() if l.startswith("  fork")][0]
        self.assertIn("x1.827", line)
        self.assertIn("240 us", line)
        self.assertIn("no-verdict", line)
        self.assertIn("run_all.sh --vs-prefix", out)

    def test_rows_in_one_file_only_and_skipped(self) -> None:
        b = self.write("b.json", doc(rows=[row("a", 1), row("b", 1),
                                           row("s", 1, status="skip")]))
        c = self.write("c.json", doc(rows=[row("a", 2), row("c", 1), row("s", 1)]))
        rc, out, _ = self.run_compare(b, c)
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"b .*missing\s+only in the baseline")
        self.assertRegex(out, r"c .*missing\s+only in the candidate")
        self.assertRegex(out, r"s .*skipped\s+baseline skip")

    def test_mismatched_tests_and_units(self) -> None:
        b = self.write("b.json", doc(test="one", rows=[row("a", 1)]))
        c = self.write("c.json", doc(test="two", rows=[row("a", 1)]))
        rc, _, err = self.run_compare(b, c)
        self.assertEqual(rc, 2)
        self.assertIn("no test is in both", err)
        c = self.write("c.json", doc(test="one", rows=[row("a", 1, unit="ns")]))
        rc, _, err = self.run_compare(b, c)
        self.assertEqual(rc, 2)
        self.assertIn("unit", err)

    def test_unreadable_input(self) -> None:
        bad = self.write("bad.json", "{not json")
        good = self.write("g.json", doc())
        empty = os.path.join(self.tmp.name, "empty")
        os.mkdir(empty)
        for args in ((bad, good), ("/nonexistent", good),
                     (self.write("x.json", {"rows": 1}), good),
                     (empty, good)):
            rc, _, err = self.run_compare(*args)
            self.assertEqual(rc, 2, args)
            self.assertTrue(err.startswith("compare.py: "), err)

    def test_fail_above_needs_a_verdict(self) -> None:
        # One run per side can never fail the check: drift is unknown.
        b = self.write("b.json", doc(rows=[row("a", 100)]))
        c = self.write("c.json", doc(rows=[row("a", 200)]))
        self.assertEqual(self.run_compare("--fail-above", "10", b, c)[0], 0)

    def test_directories_and_guest_warning(self) -> None:
        bd = os.path.join(self.tmp.name, "base")
        cd = os.path.join(self.tmp.name, "cand")
        os.mkdir(bd)
        os.mkdir(cd)
        for d, g in ((bd, None), (cd, "tcg")):
            with open(os.path.join(d, "t.json"), "w", encoding="utf-8") as f:
                json.dump(doc(rows=[row("a", 1)], guest=g), f)
        rc, out, _ = self.run_compare(bd, cd)
        self.assertEqual(rc, 0)
        self.assertIn("warning: t: 'base' ran on the host, 'cand' in a tcg "
                      "guest", out)


class ScriptsRunTest(unittest.TestCase):
    def test_compare_help(self) -> None:
        r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "compare.py"),
                            "--help"], capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0)
        self.assertIn("verdict", r.stdout)


if __name__ == "__main__":
    unittest.main()
