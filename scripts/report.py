#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One self-contained HTML report of a kbench run, or of an A/B comparison.

    report.py [-o FILE] DIR          a run_all.sh --json DIR (repeated or not)
    report.py [-o FILE] ABDIR        an A/B directory (base/ and candidate/)
    report.py [-o FILE] BASE CAND    two runs: verdicts and forest plot
    report.py --check                can a report be drawn here?

Exit status: 0 written; 2 bad usage or input that is not kbench results
(missing directory, not kbench JSON, base and candidate of different
tests); 4 matplotlib is missing (the message says how to install it).
"""

import argparse
import sys
from typing import List, Optional

from kbtools import cli
from kbtools import compare as kbcompare
from kbtools import plots
from kbtools import report
from kbtools import results

PROG = "report.py"


def parse_args(argv: List[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog=PROG,
        description="Write one self-contained HTML page (inline SVG, no "
                    "network, no JavaScript) of a kbench run: per program a "
                    "table and plots; for two runs (BASE CAND, or an A/B "
                    "directory holding base/ and candidate/) the verdict of "
                    "every row and a forest plot of the ratios with their "
                    "95%% confidence intervals.")
    ap.add_argument("--check", action="store_true",
                    help="only check that the report can be drawn "
                         "(matplotlib is installed): exit 0, or 4 with how "
                         "to install it")
    ap.add_argument("runs", nargs="*", metavar="DIR",
                    help="run_all.sh --json directory or results file; "
                         "two of them: base and candidate")
    ap.add_argument("-o", "--output", default="kbench-report.html",
                    metavar="FILE",
                    help="where to write the page (default: "
                         "kbench-report.html; '-' for stdout)")
    ap.add_argument("--threshold", type=float, metavar="PCT",
                    default=kbcompare.DEFAULT_THRESHOLD_PCT,
                    help="smallest change that counts as slower/faster "
                         "(default %(default)s%%)")
    ap.add_argument("-s", "--stat", default="median",
                    choices=("median", "mean", "min", "max", "p90", "p99"),
                    help="figure compared per repetition (default median)")
    ap.add_argument("--title", help="title of the page")
    args = ap.parse_args(argv)
    if not args.check and not args.runs:
        ap.error("give a run_all.sh --json directory (or two to compare)")
    if len(args.runs) > 2:
        ap.error("give one run (or A/B directory) or two runs to compare")
    if not 0 <= args.threshold < 100:
        ap.error(f"invalid --threshold {args.threshold}: a percentage "
                 f"between 0 and 100")
    return args


@cli.command(PROG)
def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.check:
        if plots.available():
            return 0
        print(f"{PROG}: {plots.INSTALL_HINT} ({plots.MATPLOTLIB_ERROR})",
              file=sys.stderr)
        return 4
    try:
        runs = report.load_runs(args.runs)
        if not plots.available():
            print(f"{PROG}: {plots.INSTALL_HINT} ({plots.MATPLOTLIB_ERROR})",
                  file=sys.stderr)
            return 4
        page = report.render(runs, args.threshold, args.stat, args.title)
    except report.ReportError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        print(f"Try '{PROG} -h' for more information.", file=sys.stderr)
        return 2
    with cli.writing(args.output):
        results.write_text(args.output, page)
    if args.output != "-":
        print(f"{PROG}: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
