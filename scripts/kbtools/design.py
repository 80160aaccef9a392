# SPDX-License-Identifier: GPL-2.0
"""How many repetitions per side an A/B needs: the design of a
comparison (run_all.sh --vs-prefix, --vs-kernel, or --repeat without a
number).

A patch usually changes one or two rows. For one changed row among R
rows to pass Benjamini-Hochberg at alpha, its p must reach alpha / R,
and an exact Mann-Whitney U test of n against n repetitions cannot go
below 2 / C(2n, n): so n is the smallest with 2 / C(2n, n) <= alpha / R
(kbtools.stats.design_reps). R is the number of timing rows compared
together: every row of the run (family "run", compare.py's default) or
the largest program's (family "program").

    python3 -m kbtools.design [--family F] [--alpha A] [--given N] TEST...
    python3 -m kbtools.design --check DIR

prints the repetitions on its first line, then one line saying why, and
a warning line when --given N is fewer; --check holds a real run's
results against the table of timing rows below.
"""

import argparse
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from kbtools import collection, results, stats

# Timing rows of each program's default run on a mainline kernel that
# runs BPF iterators (the patched test kernel's ioctl and .ks rows are
# not counted). make check holds a real run against them (check(): a
# program missing here, or a run with more timing rows, fails), so that
# a new program or row cannot leave them behind.
TIMING_ROWS: Dict[str, int] = {
    "memcg_ks": 12,
    "pmqtest": 3,
    "proc_create": 32,
    "syscall_overhead": 12,
    "taskstats": 5,
}
FAMILIES = ("run", "program")


def family_rows(tests: Sequence[str], family: str = "run") -> int:
    """The rows Benjamini-Hochberg corrects over for these programs."""
    counts = [TIMING_ROWS.get(t, 1) for t in tests] or [1]
    return sum(counts) if family == "run" else max(counts)


def reps(tests: Sequence[str], alpha: float = 0.05,
         family: str = "run") -> Tuple[int, int]:
    """(repetitions per side, rows in the family)."""
    rows = family_rows(tests, family)
    return stats.design_reps(rows, alpha), rows


def why(n: int, rows: int, alpha: float = 0.05) -> str:
    """The design in one line."""
    return (f"design: {n} repetitions per side: one changed row among the "
            f"{rows} compared reaches q <= {alpha:g} only from {n} (exact "
            f"U: 2/C({2 * n},{n}) = {stats.min_p(n, n):.2g} <= "
            f"{alpha:g}/{rows})")


def shortfall(given: int, n: int, rows: int) -> Optional[str]:
    """The warning for an explicit --repeat below the design, or None."""
    if given >= n:
        return None
    return (f"warning: --repeat {given} is below the design's {n}: a row "
            f"that changes alone among the {rows} compared cannot be "
            f"flagged (it reads no-verdict, not same)")


def plan(tests: Sequence[str], given: Optional[int],
         unit: str = "repetitions") -> Tuple[int, List[str]]:
    """(the design's repetitions per side for the programs of these
    tests, all when none; the lines that say why, and warn when given is
    fewer), each repetition called a UNIT (an A/A of kernels: a boot)."""
    n, rows = reps(tests or collection.tests())
    lines = [why(n, rows).replace(" repetitions per side", f" {unit} per "
                                  "side", 1)]
    warning = shortfall(given, n, rows) if given else None
    if warning:
        lines.append(warning)
    return n, lines


def check(run: results.Run) -> List[str]:
    """What a real run of the collection shows TIMING_ROWS to lack: a
    program it does not name, or one that measured more timing rows (a
    row with a unit) than it counts. Empty when the table holds."""
    problems = []
    for name, test in sorted(run.tests.items()):
        timed = sum(1 for row in test.rows.values()
                    if row.unit and row.values())
        if name not in TIMING_ROWS:
            problems.append(f"{name}: not in design.TIMING_ROWS ({timed} "
                            "timing rows in this run)")
        elif timed > TIMING_ROWS[name]:
            problems.append(f"{name}: {timed} timing rows in this run, "
                            f"design.TIMING_ROWS counts "
                            f"{TIMING_ROWS[name]}")
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m kbtools.design",
        description="Repetitions per side that let one changed row among "
                    "the programs' rows be flagged.")
    ap.add_argument("tests", nargs="*", metavar="TEST")
    ap.add_argument("--check", metavar="DIR",
                    help="hold the --json DIR of a real run against the "
                         "table of timing rows: exit 1 when it lacks a "
                         "program or counts too few rows")
    ap.add_argument("--family", choices=FAMILIES, default="run")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--given", type=int, metavar="N",
                    help="repetitions asked for: warn when below")
    args = ap.parse_args(argv)
    if not 0 < args.alpha < 1:
        ap.error(f"--alpha {args.alpha:g} is not between 0 and 1")
    if args.check:
        return check_main(args.check)
    if not args.tests:
        ap.error("no TEST given")
    n, rows = reps(args.tests, args.alpha, args.family)
    print(n)
    print(why(n, rows, args.alpha))
    warning = shortfall(args.given, n, rows) if args.given else None
    if warning:
        print(warning)
    return 0


def check_main(path: str) -> int:
    """--check DIR: 0 the table holds, 1 it does not, 2 no results."""
    try:
        run = results.load(path)
    except results.ResultError as e:
        print(f"design: {e}", file=sys.stderr)
        return 2
    problems = check(run)
    for p in problems:
        print(f"design: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"design: the timing rows of {len(run.tests)} programs are "
          "within design.TIMING_ROWS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
