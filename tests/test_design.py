# SPDX-License-Identifier: GPL-2.0
"""kbtools.design's table of timing rows (TIMING_ROWS) against the
collection: every test directory has its entry, and design.check(), which
make check's collection_as_root step runs on a real run's JSON
(python3 -m kbtools.design --check DIR), fails on a program the table
lacks and on a program that measured more timing rows than it counts."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import design, results  # noqa: E402

# (name, unit or None, status): a timing row has a unit and figures.
RowSpec = Tuple[str, Optional[str], str]


def collection_tests() -> List[str]:
    """The test directories, as the top Makefile finds them: a Makefile
    and a config fragment."""
    return sorted(d for d in os.listdir(TOP)
                  if os.path.isfile(os.path.join(TOP, d, "Makefile"))
                  and os.path.isfile(os.path.join(TOP, d, "config")))


def doc(test: str, rows: List[RowSpec]) -> Dict[str, Any]:
    out: List[Dict[str, Any]] = []
    for name, unit, status in rows:
        r: Dict[str, Any] = {"name": name, "status": status}
        if unit and status == "ok":
            r.update(unit=unit, n=10, mean=1.0, median=1.0, min=0.9,
                     max=1.2, stddev=0.1, rsd_pct=10.0, p99=1.1)
        if status == "skip":
            r["reason"] = "not here"
        out.append(r)
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.18"}, "machine": {},
            "date": "2026-01-01T00:00:00Z", "end_date": "2026-01-01T00:00:00Z",
            "cmdline": "./" + test, "params": {}, "rows": out}


def timed(n: int, prefix: str = "row") -> List[RowSpec]:
    return [(f"{prefix}{i}", "us", "ok") for i in range(n)]


class Table(unittest.TestCase):
    def test_every_test_directory_has_its_timing_rows(self) -> None:
        self.assertEqual(collection_tests(), sorted(design.TIMING_ROWS))


class Check(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def run_of(self, docs: Dict[str, List[RowSpec]]) -> results.Run:
        for test, rows in docs.items():
            with open(os.path.join(self.dir, f"{test}.json"), "w",
                      encoding="utf-8") as f:
                json.dump(doc(test, rows), f)
        return results.load(self.dir)

    def test_a_run_as_the_table_counts_passes(self) -> None:
        n = design.TIMING_ROWS["syscall_overhead"]
        run = self.run_of({"syscall_overhead": timed(n) + [
            ("a_check", None, "ok"), ("skipped", None, "skip")]})
        self.assertEqual([], design.check(run))

    def test_fewer_rows_pass(self) -> None:
        # A kernel without BPF iterators skips the bpf_iter rows.
        n = design.TIMING_ROWS["taskstats"]
        run = self.run_of({"taskstats": timed(n - 1) + [
            ("bpf_iter", None, "skip")]})
        self.assertEqual([], design.check(run))

    def test_a_row_more_fails(self) -> None:
        n = design.TIMING_ROWS["pmqtest"]
        problems = design.check(self.run_of({"pmqtest": timed(n + 1)}))
        self.assertEqual([f"pmqtest: {n + 1} timing rows in this run, "
                          f"design.TIMING_ROWS counts {n}"], problems)

    def test_a_program_the_table_lacks_fails(self) -> None:
        problems = design.check(self.run_of({"new_program": timed(1)}))
        self.assertEqual(["new_program: not in design.TIMING_ROWS (1 "
                          "timing rows in this run)"], problems)

    def test_the_command_exits_1_on_a_problem_2_without_results(self) -> None:
        self.run_of({"new_program": timed(1)})
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(1, design.main(["--check", self.dir]))
            self.assertEqual(2, design.main(["--check", os.path.join(
                self.dir, "none")]))
        self.assertIn("design: new_program: not in design.TIMING_ROWS",
                      err.getvalue())


if __name__ == "__main__":
    unittest.main()
