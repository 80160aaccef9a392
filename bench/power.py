#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The power of compare's verdicts on a real clock, as a table.

    bench/power.py [--trials N] [--seed S]

For rows compared together (12: syscall_overhead alone; 64: the whole
collection), repetitions per side n, a change of one row and the spread
of a row's repetitions (CV), prints the fraction of simulated comparisons
in which compare flags the changed row, and the A/A family-wise
false-verdict rate (any verdict with nothing changed). The simulation is
kbtools.power: compare's own functions on log-normal repetitions, a fixed
seed, so the table is reproducible. A speed goal lives here, not in a
test: tests/test_power.py checks the one cell the default design
promises (64 rows, n=7, +10% at CV 1.5%: >= 90%).

    bench/power.py --mde [--trials N] [--seed S]

checks the mde compare states: for rows, n and CV, the fraction of
comparisons that flag a change of the mde an A/A comparison stated,
against the 80% compare says (and against the mde computed from the
spread as the repetitions showed it, as before issue 42).
"""

import argparse
import os
import sys
from typing import List, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import cli, power, stats  # noqa: E402
from kbtools.output import write_stdout  # noqa: E402

ROWS = (12, 64)
REPS = (5, 6, 7, 8, 10)
CHANGES = (2, 5, 10)
CVS = (1.5, 5.0)
DESCRIPTION = ("Fraction of simulated comparisons in which compare flags "
               "one changed row, and the A/A false-verdict rate, by rows, "
               "repetitions, change and spread.")


def cell(rows: int, n: int, cv: float, change: float, trials: int,
         seed: int) -> str:
    r = power.rates(rows, n, cv, change, trials=trials, seed=seed)
    return f"{r['found']:.2f}"


def table(trials: int, seed: int) -> List[str]:
    """The lines of the Markdown table."""
    head = "| rows | n | " + " | ".join(
        f"+{c}% at CV {cv:g}%" for cv in CVS for c in CHANGES) + \
        " | A/A false (CV 3%) |"
    out = [head, "|" + "---|" * (3 + len(CVS) * len(CHANGES))]
    for rows in ROWS:
        for n in REPS:
            cells = [cell(rows, n, cv, c, trials, seed)
                     for cv in CVS for c in CHANGES]
            aa = power.rates(rows, n, 3.0, 0, changed=0, trials=trials,
                             seed=seed)["false"]
            mark = " (design)" if n == stats.design_reps(rows) else ""
            out.append(f"| {rows} | {n}{mark} | " + " | ".join(cells) +
                       f" | {aa:.3f} |")
    return out


# The mde check: rows compared together, repetitions, quiet and noisy
# rows (CV %).
MDE_DESIGNS = ((4, 5), (4, 7), (4, 10), (64, 7), (64, 10))
MDE_CVS = (0.3, 3.0, 10.0)


def mde_table(trials: int, seed: int) -> List[str]:
    """Stated against observed power of compare's mde: a change of the
    mde an A/A states, flagged how often (kbtools.power.mde_check), with
    the spread's upper bound and with the spread the repetitions showed
    (the mde before issue 42)."""
    out = ["| rows | n | CV | mde (median) | stated | observed | observed, "
           "the spread as shown |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for rows, n in MDE_DESIGNS:
        for cv in MDE_CVS:
            r = power.mde_check(rows, n, cv, trials, seed)
            old = power.mde_check(rows, n, cv, trials, seed,
                                  spread_confidence=0)
            if r is None or old is None:
                out.append(f"| {rows} | {n} | {cv:g}% | no-verdict | - | - "
                           f"| - |")
                continue
            out.append(f"| {rows} | {n} | {cv:g}% | {r['mde']:.1f}% | "
                       f"{r['stated']:.0%} | {r['observed']:.0%} | "
                       f"{old['observed']:.0%} |")
    return out


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    ap.add_argument("--trials", type=int, default=100,
                    help="comparisons per cell (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mde", action="store_true",
                    help="the mde check: stated against observed power")
    args = ap.parse_args(list(argv))
    if args.trials < 1:
        ap.error("--trials must be at least 1")
    for line in (mde_table if args.mde else table)(args.trials, args.seed):
        write_stdout(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "power.py"))
