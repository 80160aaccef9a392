#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run-to-run coefficient of variation of every timing row.

    bench/run_to_run_cv.py [--above PCT] RUN...

RUN is a run_all.sh --json directory (or a file); give several, or one
directory written with run_all.sh --repeat N, or a directory whose
subdirectories are the runs. Prints, per timing row, the row's median in
each repetition and the CV of those medians in percent, rows above PCT
(default 5) marked; exits 0 (the figures are the result, not a check).

It then splits the spread into what moves every row at once and what is
left: the machine factor of a repetition is the median, over the rows
measured in every repetition, of the row's log-deviation from its own
mean; dividing it out gives each row's CV "after the machine factor".
A large factor is the host getting faster or slower between runs (a VM
on a shared host, frequency changes): nothing in the programs can remove
it, and interleaving base and candidate is the defence.
"""

import argparse
import math
import os
import statistics
import sys
from typing import List, Sequence, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import cli, results, stats  # noqa: E402
from kbtools.compare import TIME_UNITS  # noqa: E402


def merged(paths: Sequence[str]) -> results.Run:
    """One Run holding every run given as further repetitions."""
    run = results.Run("runs")
    for p in paths:
        for test in results.load(p).tests.values():
            dest = run.tests.setdefault(test.name,
                                        results.Test(test.name, test.header))
            for name, row in test.rows.items():
                have = dest.rows.setdefault(name, results.Row(
                    name, row.unit, results.Status.SKIP, row.reason,
                    row.note))
                for rep in row.reps:
                    have.add_rep(rep)
    return run


def machine_factors(series: Sequence[Sequence[float]]) -> List[float]:
    """Per-repetition factor common to every row (geometric), from rows
    given as lists of positive figures of equal length."""
    logs = [[math.log(v) for v in vals] for vals in series]
    devs = [[x - statistics.fmean(lv) for x in lv] for lv in logs]
    return [math.exp(statistics.median(d[i] for d in devs))
            for i in range(len(series[0]))]


def print_factor_split(series: Sequence[Sequence[float]]) -> None:
    """The machine factors and the median CV with and without them."""
    reps = max((len(v) for v in series), default=0)
    full = [v for v in series if len(v) == reps and min(v) > 0]
    if reps < 2 or len(full) < 3:
        return
    factors = machine_factors(full)
    raw = [c for c in map(stats.cv_pct, full) if c is not None]
    left = [c for c in (stats.cv_pct([x / f for x, f in zip(v, factors)])
                        for v in full) if c is not None]
    print("machine factor per repetition: "
          + " ".join(f"{f:.3f}" for f in factors))
    print(f"median CV over {len(full)} rows: {statistics.median(raw):.1f}%, "
          f"{statistics.median(left):.1f}% after the machine factor; "
          f"rows at or below 5%: {sum(c <= 5 for c in raw)}, then "
          f"{sum(c <= 5 for c in left)}")


@cli.task(errors=(results.ResultError,))
def main(argv: Sequence[str], prog: str) -> int:
    ap = argparse.ArgumentParser(
        prog=prog, description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--above", type=float, default=5.0, metavar="PCT")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args(list(argv))
    run = merged(args.runs)
    lines: List[Tuple[str, str, str]] = []
    series: List[List[float]] = []
    over = total = 0
    for test in run.tests.values():
        for row in test.rows.values():
            vals = row.values("median")
            if row.unit not in TIME_UNITS or len(vals) < 2:
                continue
            cv = stats.cv_pct(vals)
            series.append(vals)
            total += 1
            mark = "*" if cv is not None and cv > args.above else " "
            over += mark == "*"
            figs = " ".join(f"{v:.4g}" for v in vals)
            lines.append((f"{mark} {test.name}:{row.name}",
                          f"{cv:6.1f}%", f"{row.unit}: {figs}"))
    width = max((len(a) for a, _, _ in lines), default=0)
    for a, b, c in lines:
        print(f"{a:<{width}}  {b}  {c}")
    print(f"{over} of {total} timing rows above {args.above:g}% "
          f"run-to-run CV (*)")
    print_factor_split(series)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "run_to_run_cv.py"))
