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


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    ap.add_argument("--trials", type=int, default=100,
                    help="comparisons per cell (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(list(argv))
    if args.trials < 1:
        ap.error("--trials must be at least 1")
    for line in table(args.trials, args.seed):
        write_stdout(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "power.py"))
