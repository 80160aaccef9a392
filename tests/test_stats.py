# SPDX-License-Identifier: GPL-2.0
"""kbtools.stats against values computed by hand or by enumeration."""

import itertools
import math
import os
import random
import statistics
import sys
import unittest
from typing import Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import stats  # noqa: E402


def enumerated_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided exact p by listing every split of the pooled ranks: an
    implementation independent of the one under test."""
    pooled = sorted([*x, *y])

    def rank(v: float) -> float:
        lo = pooled.index(v) + 1
        hi = len(pooled) - pooled[::-1].index(v)
        return (lo + hi) / 2

    ranks = [rank(v) for v in [*x, *y]]
    centre = len(x) * (len(pooled) + 1) / 2
    obs = abs(sum(ranks[:len(x)]) - centre)
    splits = list(itertools.combinations(ranks, len(x)))
    extreme = sum(1 for s in splits if abs(sum(s) - centre) >= obs - 1e-9)
    return extreme / len(splits)


class Basics(unittest.TestCase):
    def test_median_mean_cv(self) -> None:
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(stats.mean([1, 2, 3, 6]), 3)
        cv = stats.cv_pct([1, 2, 3])
        assert cv is not None
        self.assertAlmostEqual(cv, 50.0)
        self.assertIsNone(stats.cv_pct([5]))
        self.assertIsNone(stats.cv_pct([]))
        self.assertIsNone(stats.cv_pct([0, 0]))

    def test_empty_input_is_an_error(self) -> None:
        for fn in (stats.median, stats.mean):
            with self.assertRaises(ValueError):
                fn([])
        with self.assertRaises(ValueError):
            stats.mann_whitney([], [1])

    def test_pooled_stddev_equals_the_union(self) -> None:
        rng = random.Random(1)
        groups = [[rng.gauss(10, 2) for _ in range(n)] for n in (5, 9, 3)]
        union = [v for g in groups for v in g]
        got = stats.pooled_stddev([len(g) for g in groups],
                                  [statistics.mean(g) for g in groups],
                                  [statistics.stdev(g) for g in groups])
        self.assertAlmostEqual(got, statistics.stdev(union), places=9)

    def test_binomial_upper_bound(self) -> None:
        # None in n: about 3/n (the rule of three); the bound is a rate
        # at which k or fewer happen with probability 0.05.
        self.assertAlmostEqual(stats.binomial_upper(0, 1000), 0.003,
                               places=4)
        self.assertAlmostEqual(stats.binomial_upper(0, 10), 0.2589,
                               places=4)
        for k, n in ((1, 1000), (5, 10)):
            p = stats.binomial_upper(k, n)
            cdf = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i)
                      for i in range(k + 1))
            self.assertAlmostEqual(cdf, 0.05, places=6)
        self.assertEqual(stats.binomial_upper(3, 3), 1.0)

    def test_midranks(self) -> None:
        self.assertEqual(stats.midranks([10, 20, 20, 5]), [2, 3.5, 3.5, 1])


class MannWhitney(unittest.TestCase):
    def test_complete_separation(self) -> None:
        # The smallest two-sided p with n per side is 2 / C(2n, n).
        for n, p in ((3, 0.1), (4, 2 / 70), (5, 2 / 252), (6, 2 / 924)):
            x = list(range(n))
            y = list(range(n, 2 * n))
            u, got, how = stats.mann_whitney(x, y)
            self.assertEqual(u, 0)
            self.assertEqual(how, "exact")
            self.assertAlmostEqual(got, p, places=12)
            self.assertAlmostEqual(stats.mann_whitney(y, x)[1], p, places=12)

    def test_by_hand(self) -> None:
        # x = {1, 3}, y = {2, 4, 5}: U = 1; the null counts of U over the
        # C(5, 2) = 10 splits are 1 1 2 2 2 1 1 (U = 0..6), E(U) = 3, so
        # P(|U - 3| >= 2) = 4 / 10.
        self.assertEqual(stats.u_distribution(2, 3), [1, 1, 2, 2, 2, 1, 1])
        u, p, _ = stats.mann_whitney([1, 3], [2, 4, 5])
        self.assertEqual(u, 1)
        self.assertAlmostEqual(p, 0.4)

    def test_identical_samples(self) -> None:
        self.assertEqual(stats.mann_whitney([1, 1, 1], [1, 1, 1])[1], 1.0)
        self.assertEqual(stats.mann_whitney([1, 2, 3], [1, 2, 3])[1], 1.0)

    def test_exact_with_ties_matches_enumeration(self) -> None:
        rng = random.Random(7)
        for _ in range(40):
            n1, n2 = rng.randint(1, 6), rng.randint(1, 6)
            x = [rng.randint(0, 4) for _ in range(n1)]
            y = [rng.randint(0, 4) for _ in range(n2)]
            self.assertAlmostEqual(stats.mann_whitney(x, y)[1],
                                   enumerated_p(x, y), places=12,
                                   msg=f"{x} {y}")

    def test_normal_approximation_for_large_samples(self) -> None:
        x = list(range(30))
        y = list(range(30, 60))
        u, p, how = stats.mann_whitney(x, y)
        self.assertEqual(how, "normal")
        # z = (450 - 0.5) / sqrt(30 * 30 * 61 / 12)
        z = 449.5 / math.sqrt(30 * 30 * 61 / 12)
        self.assertAlmostEqual(p, math.erfc(z / math.sqrt(2)), places=15)
        # Interleaved samples: no evidence of a shift.
        self.assertGreater(stats.mann_whitney(x[::2] + y[::2],
                                              x[1::2] + y[1::2])[1], 0.5)

    def test_normal_close_to_exact_at_the_border(self) -> None:
        rng = random.Random(3)
        x = [rng.gauss(0, 1) for _ in range(20)]
        y = [rng.gauss(0.8, 1) for _ in range(20)]
        exact = stats.mann_whitney(x, y)[1]
        stats.EXACT_MAX, saved = 0, stats.EXACT_MAX
        try:
            approx = stats.mann_whitney(x, y)[1]
        finally:
            stats.EXACT_MAX = saved
        self.assertLess(abs(exact - approx), 0.01)


class Interval(unittest.TestCase):
    def test_ranks(self) -> None:
        # n = 5 per side: P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252.
        self.assertEqual(stats.hl_rank(5, 5), 3)
        self.assertEqual(stats.hl_rank(4, 4), 1)
        self.assertEqual(stats.hl_rank(3, 3), 0)
        self.assertEqual(stats.min_reps(0.05), 4)
        self.assertEqual(stats.min_reps(0.01), 5)

    def test_scale_change_is_covered(self) -> None:
        base = [1.0, 1.1, 0.9, 1.05, 0.95]
        cand = [2 * v for v in base]
        ci = stats.ratio_ci(base, cand)
        assert ci is not None
        lo, hi = ci
        self.assertLess(lo, 2)
        self.assertGreater(hi, 2)
        self.assertGreater(lo, 1.5)

    def test_too_few_or_not_positive(self) -> None:
        self.assertIsNone(stats.ratio_ci([1, 2, 3], [4, 5, 6]))
        self.assertIsNone(stats.ratio_ci([0, 1, 2, 3], [1, 2, 3, 4]))

    def test_coverage(self) -> None:
        # Simulated: a 95% interval must cover the true ratio about 95%
        # of the time (exact order statistics give at least that).
        rng = random.Random(11)
        covered = 0
        trials = 400
        for _ in range(trials):
            base = [math.exp(rng.gauss(0, 0.1)) for _ in range(6)]
            cand = [1.3 * math.exp(rng.gauss(0, 0.1)) for _ in range(6)]
            ci = stats.ratio_ci(base, cand)
            assert ci is not None
            covered += ci[0] <= 1.3 <= ci[1]
        self.assertGreater(covered / trials, 0.92)


class BenjaminiHochberg(unittest.TestCase):
    def test_known_values(self) -> None:
        # Sorted 0.005 0.01 0.03 0.04 (m = 4): 0.02 0.02 0.04 0.04.
        got = stats.benjamini_hochberg([0.01, 0.04, 0.03, 0.005])
        for g, want in zip(got, [0.02, 0.04, 0.04, 0.02]):
            assert g is not None
            self.assertAlmostEqual(g, want)

    def test_none_is_kept_and_not_counted(self) -> None:
        got = stats.benjamini_hochberg([0.01, None, 0.02])
        self.assertIsNone(got[1])
        self.assertEqual([0.02, 0.02], [round(p, 12) for p in got
                                        if p is not None])
        self.assertEqual(stats.benjamini_hochberg([]), [])

    def test_capped_at_one(self) -> None:
        self.assertEqual(stats.benjamini_hochberg([0.9, 0.8]), [0.9, 0.9])
        self.assertLessEqual(max(p for p in stats.benjamini_hochberg(
            [1.0] * 3) if p is not None), 1.0)



def enumerated_groups_p(blocks: Sequence[Sequence[Sequence[float]]]
                        ) -> float:
    """blocked_groups_p's p by relabelling every block's values in every
    way (the groups' sizes kept) and computing the statistic anew each
    time: independent of the convolution under test."""
    def statistic(bl: Sequence[Sequence[Sequence[float]]]) -> float:
        k = len(bl[0])
        sums, counts, expected = [0.0] * k, [0] * k, [0.0] * k
        for groups in bl:
            values = [v for g in groups for v in g]
            ranks = stats.midranks(values)
            at = 0
            for i, g in enumerate(groups):
                sums[i] += sum(ranks[at:at + len(g)])
                counts[i] += len(g)
                expected[i] += len(g) * (len(values) + 1) / 2
                at += len(g)
        return sum((s - e) ** 2 / n
                   for s, e, n in zip(sums, expected, counts) if n)

    def relabelled(groups: Sequence[Sequence[float]]
                   ) -> Sequence[Sequence[Sequence[float]]]:
        values = [v for g in groups for v in g]
        out = []
        for order in set(itertools.permutations(range(len(values)))):
            at, split = 0, []
            for g in groups:
                split.append([values[i] for i in order[at:at + len(g)]])
                at += len(g)
            out.append(split)
        return out

    observed = statistic(blocks)
    every = list(itertools.product(*(relabelled(g) for g in blocks)))
    return sum(statistic(b) >= observed - 1e-9 for b in every) / len(every)


class BlockedGroups(unittest.TestCase):
    """k groups measured in the same blocks: does one sit apart?"""

    def test_matches_enumeration_with_ties_and_uneven_groups(self) -> None:
        rng = random.Random(5)
        for _ in range(6):
            blocks = [[[round(rng.gauss(0, 1), 1)
                        for _ in range(rng.choice((1, 2)))]
                       for _ in range(3)] for _ in range(2)]
            with self.subTest(blocks=blocks):
                self.assertAlmostEqual(enumerated_groups_p(blocks),
                                       stats.blocked_groups_p(blocks))

    def test_groups_apart_in_every_block(self) -> None:
        # Three builds, two boots each, the same one highest and the
        # same one lowest in all 4 blocks: of the 90 ** 4 relabellings
        # only the 6 that keep the pairs together in every block (one
        # for each order of the groups) are as extreme.
        apart = [[[1, 2], [3, 4], [5, 6]]] * 4
        self.assertAlmostEqual(6 / 90 ** 4, stats.blocked_groups_p(apart),
                               delta=1e-15)
        # Interleaved in every block: nothing shown.
        self.assertEqual(1.0, stats.blocked_groups_p([[[1, 6], [2, 5],
                                                       [3, 4]]] * 2))

    def test_no_difference_is_rejected_at_most_at_its_level(self) -> None:
        # The test is exact: groups drawn alike (each block with its own
        # load) are shown apart at 0.05 at most 5% of the time (plus the
        # binomial's slack).
        rng = random.Random(7)
        shown = 0
        for _ in range(2000):
            blocks = [[[rng.gauss(b, 1) for _ in range(2)] for _ in range(3)]
                      for b in range(4)]
            shown += stats.blocked_groups_p(blocks) <= 0.05
        self.assertLessEqual(shown, stats.binomial_quantile(2000, 0.05,
                                                            0.999))

    def test_blocks_without_two_groups_are_left_out(self) -> None:
        self.assertEqual(1.0, stats.blocked_groups_p([]))
        self.assertEqual(1.0, stats.blocked_groups_p([[[1, 2], [], []]]))
        one = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
        self.assertEqual(stats.blocked_groups_p([one]),
                         stats.blocked_groups_p([one, [[4, 5], [], []]]))
        self.assertLess(stats.blocked_groups_p([one, one]),
                        stats.blocked_groups_p([one, [[4, 5], [], []]]))


if __name__ == "__main__":
    unittest.main()
