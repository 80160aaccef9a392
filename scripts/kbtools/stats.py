# SPDX-License-Identifier: GPL-2.0
"""Statistics of comparing repetitions, with the standard library only.

The unit of replication is one repetition (one run of a program, or one
boot): a row contributes one figure per repetition (its median), never its
thousands of within-run samples, because drift between runs is the noise
that matters.

- Mann-Whitney U (two-sided): exact distribution of the rank sum,
  conditional on ties, up to EXACT_MAX values in all; normal approximation
  with tie and continuity correction above.
- Change as a ratio: the Hodges-Lehmann interval of the log-ratio (all
  pairwise differences of logs, bounded by order statistics from the exact
  U distribution), exponentiated. It assumes the two sides differ by a
  scale factor, the usual model for timings.
- Benjamini-Hochberg adjusted p-values for the many rows tested at once.
- Power of that design: how many repetitions let one changed row among
  R reach q <= alpha at all (design_reps), the smallest shift a U test
  alone flags (detectable_shift), and the smallest change compare's
  whole rule flags (rule_mde), at an upper confidence bound of the
  spread (spread_upper).
- Randomized blocks: a rank test within blocks of boots taken together
  in a drawn order (blocked_p), and its k-sample form, whether any of k
  groups measured in the same blocks differs from the others
  (blocked_groups_p).
"""

import bisect
import functools
import itertools
import math
import random
from typing import (Dict, Iterable, List, NamedTuple, Optional, Sequence,
                    Tuple)

EXACT_MAX = 40


def mean(xs: Iterable[float]) -> float:
    xs = list(xs)
    if not xs:
        raise ValueError("mean of nothing")
    return math.fsum(xs) / len(xs)


def median(xs: Iterable[float]) -> float:
    s = sorted(xs)
    if not s:
        raise ValueError("median of nothing")
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def stdev(xs: Iterable[float]) -> float:
    """Sample standard deviation (n - 1)."""
    xs = list(xs)
    if len(xs) < 2:
        raise ValueError("stdev needs two values")
    m = mean(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def cv_pct(xs: Iterable[float]) -> Optional[float]:
    """Coefficient of variation in percent; None with fewer than 2 values
    or a zero mean."""
    xs = list(xs)
    if len(xs) < 2:
        return None
    m = mean(xs)
    if m == 0:
        return None
    return stdev(xs) / abs(m) * 100


def pooled_stddev(ns: Sequence[float], means: Sequence[float],
                  sds: Sequence[float]) -> float:
    """Sample standard deviation of the union of groups given by their
    sizes, means and sample standard deviations."""
    total = sum(ns)
    grand = math.fsum(n * m for n, m in zip(ns, means)) / total
    ss = math.fsum((n - 1) * s * s + n * (m - grand) ** 2
                   for n, m, s in zip(ns, means, sds))
    return math.sqrt(ss / (total - 1)) if total > 1 else 0.0


def midranks(values: Sequence[float]) -> List[float]:
    """Ranks 1..N of values, ties sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _subset_sum_counts(items: Iterable[int], size: int) -> Dict[int, int]:
    """Number of size-element subsets of items (integers) by their sum."""
    dp: List[Dict[int, int]] = [{} for _ in range(size + 1)]
    dp[0][0] = 1
    for count, item in enumerate(items):
        for j in range(min(size, count + 1), 0, -1):
            prev = dp[j - 1]
            cur = dp[j]
            for s, c in prev.items():
                cur[s + item] = cur.get(s + item, 0) + c
    return dp[size]


def u_distribution(n1: int, n2: int) -> List[int]:
    """Exact null counts of U (no ties) for sizes n1, n2: list by U."""
    sums = _subset_sum_counts(range(1, n1 + n2 + 1), n1)
    base = n1 * (n1 + 1) // 2
    out = [0] * (n1 * n2 + 1)
    for s, c in sums.items():
        out[s - base] += c
    return out


class UTest(NamedTuple):
    """A Mann-Whitney U test's outcome: U of the first side, the two-sided
    p-value, and how p was found ('exact' or 'normal')."""
    u: float
    p: float
    method: str


def mann_whitney(x: Sequence[float], y: Sequence[float]) -> UTest:
    """Two-sided Mann-Whitney U test of x against y."""
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("Mann-Whitney U needs values on both sides")
    ranks = midranks(list(x) + list(y))
    r1 = sum(ranks[:n1])
    u = r1 - n1 * (n1 + 1) / 2
    if n1 + n2 <= EXACT_MAX:
        return UTest(u, _exact_p(ranks, n1, r1), "exact")
    return UTest(u, _normal_p(ranks, n1, n2, u), "normal")


def _exact_p(ranks: Sequence[float], n1: int, r1: float) -> float:
    """P(|S - E| >= |r1 - E|) over all n1-subsets of the (mid)ranks."""
    doubled = [round(2 * r) for r in ranks]
    counts = _subset_sum_counts(doubled, n1)
    total = math.comb(len(ranks), n1)
    centre = n1 * (len(ranks) + 1)      # twice the expected rank sum
    dev = abs(round(2 * r1) - centre)
    extreme = sum(c for s, c in counts.items() if abs(s - centre) >= dev)
    return min(1.0, extreme / total)


def _normal_p(ranks: Sequence[float], n1: int, n2: int, u: float) -> float:
    n = n1 + n2
    ties: Dict[float, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    tie_term = sum(t ** 3 - t for t in ties.values()) / (n * (n - 1))
    var = n1 * n2 / 12 * ((n + 1) - tie_term)
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def _normal_quantile(p: float) -> float:
    """Inverse of the standard normal distribution (bisection on erfc)."""
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def hl_rank(n1: int, n2: int, alpha: float = 0.05) -> int:
    """How many of the n1*n2 sorted pairwise differences to cut from each
    end for a 1 - alpha interval (the largest c with P(U < c) <= alpha/2);
    0 when no interval reaches that confidence."""
    if n1 + n2 <= EXACT_MAX:
        dist = u_distribution(n1, n2)
        total = sum(dist)
        c, cum = 0, 0
        while c < len(dist) and (cum + dist[c]) / total <= alpha / 2:
            cum += dist[c]
            c += 1
        return c
    z = _normal_quantile(1 - alpha / 2)
    c = math.floor(n1 * n2 / 2 - z * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12))
    return max(0, c)


def ratio_ci(base: Sequence[float], cand: Sequence[float],
             alpha: float = 0.05) -> Optional[Tuple[float, float]]:
    """Hodges-Lehmann 1 - alpha interval of cand / base (a scale change),
    as (low, high); None when the sizes are too small for that
    confidence or a value is not positive."""
    if min(list(base) + list(cand), default=0) <= 0:
        return None
    c = hl_rank(len(base), len(cand), alpha)
    if c == 0:
        return None
    diffs = sorted(math.log(y) - math.log(x) for x in base for y in cand)
    return math.exp(diffs[c - 1]), math.exp(diffs[len(diffs) - c])


def min_reps(alpha: float = 0.05) -> int:
    """The fewest repetitions per side (equal sides) with which a two-sided
    exact U test can reach alpha at all: 2 / C(2n, n) <= alpha."""
    n = 1
    while 2 / math.comb(2 * n, n) > alpha:
        n += 1
    return n


def benjamini_hochberg(pvalues: Sequence[Optional[float]]
                       ) -> List[Optional[float]]:
    """Benjamini-Hochberg adjusted p-values (same order; None stays None).
    A row is a discovery at false discovery rate q when its adjusted
    p-value is <= q."""
    known = {i: p for i, p in enumerate(pvalues) if p is not None}
    m = len(known)
    out: List[Optional[float]] = [None] * len(pvalues)
    running = 1.0
    for rank, i in reversed(list(enumerate(sorted(known, key=lambda i:
                                                  known[i]), 1))):
        running = min(running, known[i] * m / rank)
        out[i] = running
    return out


def min_p(n1: int, n2: int) -> float:
    """The smallest two-sided p an exact U test of n1 against n2 values
    (no ties) can give: every value of one side beyond the other's."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def design_reps(rows: int, alpha: float = 0.05) -> int:
    """The fewest repetitions per side (equal sides) with which one
    changed row among `rows` can pass Benjamini-Hochberg at alpha: its p
    must reach alpha / rows."""
    n = 1
    while min_p(n, n) > alpha / max(1, rows):
        n += 1
    return n


@functools.lru_cache(maxsize=None)
def u_critical(n1: int, n2: int, alpha: float) -> Optional[int]:
    """The largest k such that U <= k (one way or the other) has
    two-sided probability <= alpha under no change (exact, no ties);
    None when not even U = 0 does."""
    dist = u_distribution(n1, n2)
    total = sum(dist)
    k, cum = -1, 0
    while k + 1 < len(dist) and 2 * (cum + dist[k + 1]) / total <= alpha:
        cum += dist[k + 1]
        k += 1
    return k if k >= 0 else None


@functools.lru_cache(maxsize=None)
def detectable_shift(n1: int, n2: int, alpha: float, power: float = 0.8,
                     trials: int = 2000, seed: int = 2026) -> Optional[float]:
    """The shift, in standard deviations, that an exact U test of n1
    against n2 normal values flags at two-sided alpha with the given
    power; None when no shift can be flagged (min_p > alpha).

    Simulated with a fixed seed: in each trial the test rejects once the
    shift exceeds the (k+1)-th largest difference base - candidate (k
    from u_critical), so the answer is that threshold's power-quantile
    over the trials, with no search over shifts."""
    k = u_critical(n1, n2, alpha)
    if k is None:
        return None
    rng = random.Random(seed)
    needed: List[float] = []
    for _ in range(trials):
        base = [rng.gauss(0, 1) for _ in range(n1)]
        cand = [rng.gauss(0, 1) for _ in range(n2)]
        diffs = sorted((b - c for b in base for c in cand), reverse=True)
        needed.append(diffs[k])
    needed.sort()
    return max(0.0, needed[min(trials - 1, math.ceil(power * trials) - 1)])


def log_spread(base: Sequence[float], cand: Sequence[float]
               ) -> Optional[float]:
    """The within-side standard deviation of the logs of two sides'
    values, pooled (a timing's spread as a fraction of it); None without
    two values on each side or with a value not above 0."""
    if min(len(base), len(cand)) < 2 or min(list(base) + list(cand)) <= 0:
        return None
    squares = 0.0
    for side in (base, cand):
        logs = [math.log(v) for v in side]
        m = mean(logs)
        squares += math.fsum((x - m) ** 2 for x in logs)
    return math.sqrt(squares / (len(base) + len(cand) - 2))


def _block_sums(xs: Sequence[float], ys: Sequence[float]
                ) -> Tuple[Dict[int, int], int]:
    """(counts of twice the rank sum of a len(ys)-subset of the block's
    midranks, twice the observed rank sum of ys) of one block."""
    ranks = midranks(list(xs) + list(ys))
    doubled = [round(2 * r) for r in ranks]
    return (_subset_sum_counts(doubled, len(ys)),
            sum(doubled[len(xs):]))


def _convolve(a: Dict[int, int], b: Dict[int, int]) -> Dict[int, int]:
    out: Dict[int, int] = {}
    for sa, ca in a.items():
        for sb, cb in b.items():
            out[sa + sb] = out.get(sa + sb, 0) + ca * cb
    return out


Block = Tuple[Sequence[float], Sequence[float]]


def blocked_p(blocks: Iterable[Block]) -> float:
    """One-sided p that the ys sit above the xs, with blocks of their own
    time: blocks is a list of (xs, ys), the two sides' values measured
    together. Under no difference the values of a block are exchangeable
    (whatever the load was then), so the statistic, the sum over blocks
    of the ys' rank sum within their block, has an exact distribution:
    the convolution of every block's. Blocks missing a side are left
    out; 1.0 when none is left."""
    total: Dict[int, int] = {0: 1}
    observed = 0
    for xs, ys in blocks:
        if not xs or not ys:
            continue
        counts, obs = _block_sums(xs, ys)
        total = _convolve(total, counts)
        observed += obs
    n = sum(total.values())
    return sum(c for s, c in total.items() if s >= observed) / n


@functools.lru_cache(maxsize=None)
def _split_sums(ranks: Tuple[int, ...], sizes: Tuple[int, ...]
                ) -> Dict[Tuple[int, ...], int]:
    """Counts of the rank sums of the groups but the last over every
    split of a block's (doubled mid)ranks into groups of these sizes."""
    out: Dict[Tuple[int, ...], int] = {}

    def walk(left: Tuple[int, ...], group: int,
             sums: Tuple[int, ...]) -> None:
        if group == len(sizes) - 1:
            out[sums] = out.get(sums, 0) + 1
            return
        for pick in itertools.combinations(range(len(left)), sizes[group]):
            rest = tuple(v for i, v in enumerate(left) if i not in pick)
            walk(rest, group + 1, sums + (sum(left[i] for i in pick),))
    walk(ranks, 0, ())
    return out


def _convolve_sums(a: Dict[Tuple[int, ...], int],
                   b: Dict[Tuple[int, ...], int]
                   ) -> Dict[Tuple[int, ...], int]:
    out: Dict[Tuple[int, ...], int] = {}
    for sa, ca in a.items():
        for sb, cb in b.items():
            s = tuple(x + y for x, y in zip(sa, sb))
            out[s] = out.get(s, 0) + ca * cb
    return out


GroupBlock = Tuple[Tuple[int, ...], Tuple[int, ...]]


def _spread_of(sums: Sequence[int], expected: Sequence[float],
               counts: Sequence[int]) -> float:
    """The statistic of blocked_groups_p: the groups' squared rank-sum
    deviations, each over the group's size."""
    return math.fsum((s - e) ** 2 / n
                     for s, e, n in zip(sums, expected, counts) if n)


@functools.lru_cache(maxsize=None)
def _groups_null(blocks: Tuple[GroupBlock, ...]
                 ) -> Tuple[Tuple[float, ...], Tuple[int, ...]]:
    """The statistic's values under no difference (ascending) and how
    many splits reach at least each, for blocks given as (sorted doubled
    ranks, group sizes)."""
    total: Dict[Tuple[int, ...], int] = {}
    for i, (ranks, sizes) in enumerate(blocks):
        one = _split_sums(ranks, sizes)
        total = one if i == 0 else _convolve_sums(total, one)
    counts = [sum(sz[g] for _, sz in blocks)
              for g in range(len(blocks[0][1]))]
    expected = [math.fsum(sz[g] * sum(r) / len(r) for r, sz in blocks)
                for g in range(len(counts))]
    whole = sum(sum(r) for r, _ in blocks)
    by: Dict[float, int] = {}
    for sums, c in total.items():
        t = round(_spread_of(sums + (whole - sum(sums),), expected, counts),
                  9)
        by[t] = by.get(t, 0) + c
    values = tuple(sorted(by))
    at_least, running = [], 0
    for v in reversed(values):
        running += by[v]
        at_least.append(running)
    return values, tuple(reversed(at_least))


def blocked_groups_p(blocks: Iterable[Sequence[Sequence[float]]]) -> float:
    """p that k groups measured together in blocks do not all sit alike
    (any one of them apart from the others), with blocks of their own
    time: blocks is a list of [group 1's values, ..., group k's], the
    groups in the same order in every block. Under no difference the
    values of a block are exchangeable among its groups (their order
    drawn at random), so the statistic, the sum over groups of the
    squared deviation of the group's rank sum within its blocks from its
    expectation, over the group's size (Kruskal-Wallis stratified by
    block), has an exact distribution: every block's splits, convolved.
    Blocks with fewer than two groups measured are left out; 1.0 when
    none is left."""
    kept: List[GroupBlock] = []
    observed: List[int] = []
    for groups in blocks:
        if sum(1 for g in groups if g) < 2:
            continue
        values = [v for g in groups for v in g]
        doubled = [round(2 * r) for r in midranks(values)]
        sizes = tuple(len(g) for g in groups)
        at, sums = 0, []
        for n in sizes:
            sums.append(sum(doubled[at:at + n]))
            at += n
        observed = sums if not observed else \
            [a + b for a, b in zip(observed, sums)]
        kept.append((tuple(sorted(doubled)), sizes))
    if not kept:
        return 1.0
    # The null depends on the blocks only as a set: sorted, one cache
    # entry serves every bisection whose boots did not tie.
    key = tuple(sorted(kept))
    null, at_least = _groups_null(key)
    counts = [sum(sz[g] for _, sz in key) for g in range(len(observed))]
    expected = [math.fsum(sz[g] * sum(r) / len(r) for r, sz in key)
                for g in range(len(counts))]
    t = round(_spread_of(observed, expected, counts), 9)
    i = bisect.bisect_left(null, t - 1e-9)
    return at_least[i] / at_least[0] if i < len(null) else 0.0


def binomial_upper(k: int, n: int, alpha: float = 0.05) -> float:
    """The one-sided 1-alpha upper bound of a rate seen k times in n
    trials (Clopper-Pearson: the rate at which k or fewer happen with
    probability alpha; 3/n or so for k = 0)."""
    if n <= 0:
        return 1.0
    if k >= n:
        return 1.0

    def cdf(p: float) -> float:
        return sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1)
                            - math.lgamma(n - i + 1) + i * math.log(p)
                            + (n - i) * math.log1p(-p))
                   for i in range(k + 1))
    lo, hi = k / n, 1.0 - 1e-12
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def binomial_quantile(n: int, p: float, confidence: float) -> int:
    """The smallest k with P(X <= k) >= confidence for X ~ Binomial(n,
    p): how many of n events of probability p one may see at most,
    short of a 1 - confidence surprise."""
    k, cum = 0, 0.0
    while k < n:
        cum += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if cum >= confidence:
            return k
        k += 1
    return n


def chi2_quantile(p: float, df: int) -> float:
    """The p-quantile of a chi-square with df degrees of freedom
    (Wilson-Hilferty: within 1% for df >= 3 between 0.05 and 0.95)."""
    z = _normal_quantile(p)
    h = 2 / (9 * df)
    return max(0.0, df * (1 - h + z * math.sqrt(h)) ** 3)


def spread_upper(sd: float, df: int, confidence: float) -> float:
    """An upper confidence bound of a normal spread estimated as sd with
    df degrees of freedom: sd * sqrt(df / chi2(1 - confidence, df));
    the estimate itself at confidence 0."""
    if df < 1 or sd <= 0 or confidence <= 0:
        return max(sd, 0.0)
    return sd * math.sqrt(df / chi2_quantile(1 - confidence, df))


@functools.lru_cache(maxsize=None)
def _null_p_values(n1: int, n2: int) -> Tuple[Tuple[float, ...],
                                             Tuple[int, ...]]:
    """The two-sided p-values an exact U test of n1 against n2 values can
    give under no change, and how many orderings give each."""
    dist = u_distribution(n1, n2)
    total = sum(dist)
    centre = n1 * n2 / 2
    ps: Dict[float, int] = {}
    for u, count in enumerate(dist):
        dev = abs(u - centre)
        p = min(1.0, sum(c for v, c in enumerate(dist)
                         if abs(v - centre) >= dev) / total)
        ps[p] = ps.get(p, 0) + count
    return tuple(ps), tuple(ps.values())


def _bh_level(rng: random.Random, n1: int, n2: int, rows: int,
              alpha: float) -> float:
    """The level a changed row's p must reach to pass Benjamini-Hochberg
    at alpha among rows - 1 unchanged rows, whose p-values are drawn from
    the exact U test's null: the largest j * alpha / rows such that at
    least j - 1 of theirs are at or below it."""
    if rows <= 1:
        return alpha
    values, weights = _null_p_values(n1, n2)
    nulls = sorted(rng.choices(values, weights, k=rows - 1))
    level = alpha / rows
    for j in range(2, rows + 1):
        if nulls[j - 2] <= j * alpha / rows:
            level = j * alpha / rows
    return level


@functools.lru_cache(maxsize=None)
def _rule_draws(n1: int, n2: int, alpha: float, ci_alpha: float,
                rows: int = 1, trials: int = 2000, seed: int = 2026
                ) -> Optional[Tuple[Tuple[float, ...], Tuple[float, ...]]]:
    """For simulated standard normal samples of n1 and n2 values: the
    smallest shift (in standard deviations) that makes the candidate pass
    both the U test (at the level Benjamini-Hochberg at alpha gives it
    among rows - 1 unchanged rows) and the Hodges-Lehmann interval at
    1 - ci_alpha (the larger of the two), and its median minus the
    base's; None when the U test cannot reach alpha / rows."""
    if u_critical(n1, n2, alpha / max(1, rows)) is None:
        return None
    c = hl_rank(n1, n2, ci_alpha)
    if c == 0:
        return None
    rng = random.Random(seed)
    tests, medians = [], []
    for _ in range(trials):
        base = [rng.gauss(0, 1) for _ in range(n1)]
        cand = [rng.gauss(0, 1) for _ in range(n2)]
        diffs = sorted(y - x for x in base for y in cand)
        k = u_critical(n1, n2, _bh_level(rng, n1, n2, rows, alpha))
        assert k is not None
        # U: the candidate above in all but k pairs; the interval: its
        # c-th smallest difference above 0.
        tests.append(max(-diffs[k], -diffs[c - 1]))
        medians.append(median(cand) - median(base))
    return tuple(tests), tuple(medians)


def rule_mde(n1: int, n2: int, sigma: float, threshold_pct: float,
             alpha: float, ci_alpha: float, power: float = 0.8,
             rows: int = 1) -> Optional[float]:
    """The smallest change, in percent, that a rule flags with the given
    power in one row among `rows` (the others unchanged): an exact U test
    whose p passes Benjamini-Hochberg at alpha over the rows, a
    Hodges-Lehmann interval at 1 - ci_alpha that excludes 1, and a ratio
    of medians beyond threshold_pct, on log-normal values of log-spread
    sigma. Simulated with a fixed seed: per draw the shift that passes
    all three is known in closed form, so the answer is a quantile of
    those shifts. None when the test cannot reach alpha / rows with
    these sizes."""
    draws = _rule_draws(n1, n2, alpha, ci_alpha, rows)
    if draws is None:
        return None
    up = math.log(1 + threshold_pct / 100)
    if sigma <= 0:
        return threshold_pct
    need = sorted(max(t, up / sigma - m) for t, m in zip(*draws))
    q = need[min(len(need) - 1, math.ceil(power * len(need)) - 1)]
    return (math.exp(max(0.0, q) * sigma) - 1) * 100
