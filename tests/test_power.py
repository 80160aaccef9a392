# SPDX-License-Identifier: GPL-2.0
"""The power of compare's verdicts at the default design, simulated with
its own functions and a fixed seed (kbtools.power): one changed row among
the whole collection's 64 is found, an A/A stays quiet, and the design
says how many repetitions that takes. bench/power.py prints the table."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import compare, design, power, stats  # noqa: E402

COLLECTION_ROWS = sum(design.TIMING_ROWS.values())


class Design(unittest.TestCase):
    def test_repetitions_from_the_design(self) -> None:
        self.assertEqual(COLLECTION_ROWS, 64)
        self.assertEqual(stats.design_reps(COLLECTION_ROWS), 7)
        self.assertEqual(design.reps(["syscall_overhead"]), (6, 12))
        self.assertEqual(design.reps(list(design.TIMING_ROWS),
                                     family="program"), (7, 32))

    def test_five_repetitions_cannot_flag_one_row_of_64(self) -> None:
        # The reason for the design: 2/C(10,5) = 0.0079 > 0.05/64.
        self.assertGreater(stats.min_p(5, 5), 0.05 / 64)
        self.assertIsNone(stats.detectable_shift(5, 5, 0.05 / 64))

    def test_detectable_shift_grows_with_the_rows(self) -> None:
        few = stats.detectable_shift(7, 7, 0.05 / 12)
        many = stats.detectable_shift(7, 7, 0.05 / 64)
        assert few is not None and many is not None
        self.assertLess(few, many)
        self.assertAlmostEqual(many, 3.4, delta=0.2)


class Power(unittest.TestCase):
    def test_one_changed_row_among_the_collection_is_found(self) -> None:
        n = stats.design_reps(COLLECTION_ROWS)
        r = power.rates(COLLECTION_ROWS, n, cv_pct=1.5, change_pct=10,
                        trials=100, seed=1)
        found = r["found"]
        assert found is not None
        self.assertGreaterEqual(found, 0.9)

    def test_the_check_fails_below_the_design(self) -> None:
        # The same change at --repeat 5: never found. The assertion above
        # can fail.
        r = power.rates(COLLECTION_ROWS, 5, cv_pct=1.5, change_pct=10,
                        trials=20, seed=1)
        self.assertEqual(r["found"], 0.0)

    def test_an_aa_stays_quiet(self) -> None:
        r = power.rates(COLLECTION_ROWS, stats.design_reps(COLLECTION_ROWS),
                        cv_pct=3.0, change_pct=0, changed=0, trials=200,
                        seed=2)
        false = r["false"]
        assert false is not None
        self.assertLessEqual(false, 0.05)

    def test_rows_say_what_they_cannot_see(self) -> None:
        import random
        verdicts = power.trial(random.Random(3), COLLECTION_ROWS, 5, 1.5, 10)
        self.assertEqual(set(verdicts), {"no-verdict"})
        base = power._run("b", [[1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0]])
        cand = power._run("c", [[1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.01]])
        e = compare.compare_one(base, cand)[0]
        self.assertEqual(e.verdict, "same")
        assert e.mde_pct is not None
        self.assertGreater(e.mde_pct, compare.DEFAULT_THRESHOLD_PCT)


class Mde(unittest.TestCase):
    """A change of the mde a row states is flagged as often as stated
    (kbtools.power.mde_check: bench/power.py --mde prints the table)."""

    def test_a_change_of_the_stated_size_is_flagged_as_stated(self) -> None:
        for n, cv in ((5, 3.0), (7, 0.3), (10, 10.0)):
            with self.subTest(n=n, cv=cv):
                r = power.mde_check(4, n, cv, trials=300, seed=3)
                assert r is not None
                self.assertAlmostEqual(r["observed"], r["stated"],
                                       delta=0.06)

    def test_the_spread_as_shown_overstates_power(self) -> None:
        # The mde before issue 42 (the repetitions' own spread): the
        # check above fails on it.
        r = power.mde_check(4, 7, 3.0, trials=300, seed=3,
                            spread_confidence=0)
        assert r is not None
        self.assertLess(r["observed"], r["stated"] - 0.06)

    def test_no_mde_where_the_design_cannot_flag(self) -> None:
        self.assertIsNone(power.mde_check(64, 5, 3.0, trials=2))
        self.assertIsNone(stats.rule_mde(5, 5, 0.03, 2.0, 0.05, 0.05,
                                         rows=64))
        # A quiet row: the threshold and the medians' noise, not the
        # threshold alone.
        quiet = stats.rule_mde(7, 7, 0.003, 2.0, 0.05, 0.05, rows=64)
        assert quiet is not None
        self.assertGreater(quiet, 2.05)


if __name__ == "__main__":
    unittest.main()
