#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare kbench runs: a base and one or more candidates, each a results
file, a run_all.sh --json directory or a directory of repeated runs.

Per row: the ratio of the medians over repetitions with its 95%
Hodges-Lehmann interval, a Mann-Whitney U p-value (exact for small n),
Benjamini-Hochberg over the rows, and a verdict (slower, faster, same,
no-verdict, missing, skipped). See kbtools/compare.py.

Exit status: 0 compared; 1 a row is significantly slower with its
interval's lower bound above --fail-above PCT; 2 unreadable or mismatched
input, or bad usage.
"""

import argparse
import os
import sys
from typing import Dict, List, Optional, Sequence

from kbtools import cli, compare, output, results

STATS = ("median", "mean", "min", "max", "p90", "p99")


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="compare.py",
        description="Compare candidate kbench runs with a base run, row by "
                    "row, over repetitions: ratio, 95% interval, p-value, "
                    "verdict.")
    ap.add_argument("base", help="results file or directory of the base")
    ap.add_argument("candidates", nargs="+", metavar="candidate",
                    help="results file or directory of a candidate")
    ap.add_argument("-l", "--label", action="append", default=[],
                    help="names of base and candidates, in order "
                         "(repeatable or comma list; default: file or "
                         "directory names)")
    ap.add_argument("-f", "--format", choices=sorted(compare.FORMATS),
                    default="text", help="text (default), email (<= 72 "
                                         "columns) or json")
    ap.add_argument("-t", "--test", action="append", default=[],
                    metavar="NAME",
                    help="compare only these test programs (repeatable or "
                         "comma list; default: all)")
    ap.add_argument("-s", "--stat", choices=STATS, default="median",
                    help="per-repetition figure compared (default: median)")
    ap.add_argument("--threshold", type=float, metavar="PCT",
                    default=compare.DEFAULT_THRESHOLD_PCT,
                    help="smallest change called slower/faster (default: "
                         "%(default)g%%)")
    ap.add_argument("--alpha", type=float, default=0.05,
                    help="false discovery rate (default: %(default)g)")
    ap.add_argument("--family", choices=compare.FAMILIES, default="run",
                    help="the rows Benjamini-Hochberg corrects over: every "
                         "row of a candidate (run, the default) or each "
                         "program's (program)")
    ap.add_argument("--fail-above", type=float, metavar="PCT",
                    help="exit 1 when a row is significantly slower with "
                         "its 95%% interval's lower bound above PCT %%")
    args = ap.parse_args(argv)
    if not 0 < args.alpha < 1:
        ap.error(f"--alpha {args.alpha:g} is not between 0 and 1")
    if args.threshold < 0 or (args.fail_above is not None
                              and args.fail_above < 0):
        ap.error("percentages must not be negative")
    labels = [x for arg in args.label for x in arg.split(",")]
    paths = [args.base] + args.candidates
    if labels and len(labels) != len(paths):
        ap.error(f"{len(labels)} labels for {len(paths)} runs")
    if len(set(labels)) != len(labels) or "" in labels:
        ap.error("labels must be distinct and not empty")
    args.labels = labels or [None] * len(paths)
    args.tests = [x for arg in args.test for x in arg.split(",")]
    if "" in args.tests:
        ap.error("test names must not be empty")
    return args


def unique_labels(runs: Sequence[results.Run]) -> None:
    """Default labels made distinct (r1/base and r2/base)."""
    seen: Dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    for run in runs:
        if seen[run.label] > 1:
            run.label = os.path.normpath(run.path or run.label)
    labels = [r.label for r in runs]
    for i, run in enumerate(runs):
        if labels.count(run.label) > 1:
            run.label = f"{run.label}#{i}"


@cli.command("compare.py", errors=(results.ResultError,))
def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    runs = [results.load(p, lbl) for p, lbl in
            zip([args.base] + args.candidates, args.labels)]
    unique_labels(runs)
    if args.tests:
        results.select_tests(runs, args.tests)
    base, cands = runs[0], runs[1:]
    entries = compare.compare(base, cands, args.threshold, args.stat,
                              args.alpha, args.family)
    fmt = compare.FORMATS[args.format]
    # A reader that went away (| head) still gets --fail-above's verdict.
    output.write_stdout(fmt(base, cands, entries, args.stat, args.threshold,
                         args.alpha, args.family))
    if args.fail_above is None:
        return 0
    over = compare.fail_rows(entries, args.fail_above)
    for e in over:
        print(f"compare.py: {e.candidate}: {e.test}:{e.name} is "
              f"slower by more than {args.fail_above:g}% (95% interval "
              f"x{e.ci_low:.3f}-x{e.ci_high:.3f})", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
