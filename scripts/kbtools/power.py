# SPDX-License-Identifier: GPL-2.0
"""Power of compare's verdicts, simulated with its own functions: how
often a changed row is flagged, and how often an A/A comparison flags
anything, for a number of rows, repetitions, change and spread.

Each trial builds two runs of `rows` rows whose per-repetition figures
are log-normal with the given coefficient of variation (the drift
between repetitions), changes `changed` of them in the candidate by
`change_pct`, and runs kbtools.compare.compare_one on them, exactly as
compare.py does. A fixed seed makes every figure reproducible; the
make check test (tests/test_power.py) and the table of bench/power.py
use it.
"""

import math
import random
from typing import Dict, List, Optional

from kbtools import compare, results

TIME_UNIT = "us"


def _run(label: str, values: List[List[float]]) -> results.Run:
    """A run of one program whose row i has the figures values[i]."""
    run = results.Run(label)
    test = results.Test("sim")
    test.headers = [results.RepHeader() for _ in values[0]] if values else []
    for i, figures in enumerate(values):
        row = results.Row(f"r{i}", TIME_UNIT)
        for v in figures:
            row.add_rep(results.Repetition.of(median=v))
        test.rows[row.name] = row
    run.tests["sim"] = test
    return run


def _side(rng: random.Random, rows: int, reps: int, cv_pct: float,
          factors: Dict[int, float]) -> List[List[float]]:
    sigma = math.sqrt(math.log(1 + (cv_pct / 100) ** 2))
    return [[factors.get(i, 1.0) * math.exp(rng.gauss(0, sigma))
             for _ in range(reps)] for i in range(rows)]


def trial(rng: random.Random, rows: int, reps: int, cv_pct: float,
          change_pct: float, changed: int = 1,
          threshold_pct: float = compare.DEFAULT_THRESHOLD_PCT,
          alpha: float = 0.05) -> List[str]:
    """The verdicts of one simulated comparison, row by row (the changed
    rows first)."""
    factors = {i: 1 + change_pct / 100 for i in range(changed)}
    base = _run("base", _side(rng, rows, reps, cv_pct, {}))
    cand = _run("cand", _side(rng, rows, reps, cv_pct, factors))
    entries = compare.compare_one(base, cand, threshold_pct, "median", alpha)
    return [e.verdict for e in entries]


def rates(rows: int, reps: int, cv_pct: float, change_pct: float,
          changed: int = 1, trials: int = 100, seed: int = 1,
          threshold_pct: float = compare.DEFAULT_THRESHOLD_PCT,
          alpha: float = 0.05) -> Dict[str, Optional[float]]:
    """Over `trials` simulated comparisons: 'found', the fraction of the
    changed rows flagged in the changed direction (None without a change),
    and 'false', the fraction of trials with any verdict on an unchanged
    row (the family-wise false-verdict rate)."""
    rng = random.Random(seed)
    want = "slower" if change_pct > 0 else "faster"
    found = false = 0
    for _ in range(trials):
        verdicts = trial(rng, rows, reps, cv_pct, change_pct, changed,
                         threshold_pct, alpha)
        found += sum(v == want for v in verdicts[:changed])
        false += any(v in ("slower", "faster") for v in verdicts[changed:])
    return {"found": found / (trials * changed) if changed else None,
            "false": false / trials}


def mde_check(rows: int, reps: int, cv_pct: float, trials: int = 200,
              seed: int = 1, threshold_pct: float = compare.DEFAULT_THRESHOLD_PCT,
              alpha: float = 0.05, spread_confidence: Optional[float] = None
              ) -> Optional[Dict[str, float]]:
    """Whether a row's stated mde holds: in each trial an A/A comparison
    states row 0's mde (compare_one, as compare.py does), then a fresh
    comparison changes row 0 by exactly that much; 'observed' is the
    fraction of trials that flag it slower, 'stated' the power compare
    states (compare.MDE_POWER), 'mde' the median stated mde. None when
    the design cannot flag the row (no mde stated). spread_confidence
    replaces compare's (0: the spread the repetitions showed)."""
    rng = random.Random(seed)
    saved = compare.MDE_SPREAD_CONFIDENCE
    if spread_confidence is not None:
        compare.MDE_SPREAD_CONFIDENCE = spread_confidence
    try:
        hits, mdes = 0, []
        for _ in range(trials):
            base = _run("base", _side(rng, rows, reps, cv_pct, {}))
            cand = _run("cand", _side(rng, rows, reps, cv_pct, {}))
            mde = compare.compare_one(base, cand, threshold_pct, "median",
                                      alpha)[0].mde_pct
            if mde is None:
                return None
            mdes.append(mde)
            factors = {0: 1 + mde / 100}
            base = _run("base", _side(rng, rows, reps, cv_pct, {}))
            cand = _run("cand", _side(rng, rows, reps, cv_pct, factors))
            hits += compare.compare_one(base, cand, threshold_pct, "median",
                                        alpha)[0].verdict == "slower"
    finally:
        compare.MDE_SPREAD_CONFIDENCE = saved
    mdes.sort()
    return {"observed": hits / trials, "stated": compare.MDE_POWER,
            "mde": mdes[len(mdes) // 2]}
