# SPDX-License-Identifier: GPL-2.0
"""Tests of bench/run_to_run_cv.py's split of the spread into a machine
factor common to every row and what each row keeps of its own."""
import importlib.util
import io
import os
import sys
import types
import unittest
from contextlib import redirect_stdout

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts"))


def load_bench() -> types.ModuleType:
    path = os.path.join(TOP, "bench", "run_to_run_cv.py")
    spec = importlib.util.spec_from_file_location("run_to_run_cv", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CV = load_bench()


class MachineFactor(unittest.TestCase):
    def test_common_factor_is_recovered(self) -> None:
        factors = [0.8, 1.0, 1.25, 1.0]
        rows = [[base * f for f in factors] for base in (0.2, 5.0, 900.0)]
        got = CV.machine_factors(rows)
        for want, have in zip(factors, got):
            self.assertAlmostEqual(have / got[1], want, places=9)

    def test_split_reports_zero_left_for_pure_drift(self) -> None:
        rows = [[b * f for f in (0.9, 1.1, 1.0)] for b in (1, 2, 3, 4)]
        out = io.StringIO()
        with redirect_stdout(out):
            CV.print_factor_split(rows)
        self.assertIn("0.0% after the machine factor", out.getvalue())

    def test_row_noise_is_left(self) -> None:
        rows = [[1, 1, 1], [2, 2, 2], [3, 3.6, 3]]
        out = io.StringIO()
        with redirect_stdout(out):
            CV.print_factor_split(rows)
        self.assertIn("machine factor per repetition: 1.000 1.000 1.000",
                      out.getvalue())

    def test_too_few_rows_prints_nothing(self) -> None:
        out = io.StringIO()
        with redirect_stdout(out):
            CV.print_factor_split([[1, 2], [2, 3]])
        self.assertEqual(out.getvalue(), "")


if __name__ == "__main__":
    unittest.main()
