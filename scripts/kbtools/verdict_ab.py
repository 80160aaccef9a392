# SPDX-License-Identifier: GPL-2.0
"""Validate run_all.sh's A/B verdicts on this kernel:

- A/A: --vs-prefix env, K trials: no row may come out slower or faster;
- A/B with a known cost: --vs-prefix "seccomp_wrap -n C" for each C of a
  list: the null-syscall rows must come out slower, their ratio beside
  the filter's cost measured directly (seccomp_wrap --measure).

    kbench bench verdict-ab [OPTION]...     (bench/verdict_ab.sh)

Prints one line per trial and a verdict; exits 1 when an expectation
fails. Takes minutes: every trial is 2 x REPEAT runs of the tests.
"""

import argparse
import os
import re
import sys
from typing import List, Sequence

from kbtools import bench, cli, compare, paths, proc, results, runner

HELP = """\
Usage: {prog} [-t TEST]... [-r N] [--trials K] [--compares LIST] [--out DIR]
             [--no-aa] [--no-seccomp]
  -t TEST         tests to run (default: syscall_overhead)
  -r N            repetitions per side (default 5)
  --trials K      A/A trials (default 3)
  --compares LIST seccomp filter lengths, comma list (default 0,50,200)
  --out DIR       keep every run's KTAP and JSON in DIR (default: a
                  temporary directory, removed)
"""
NULL_ROW = re.compile(r"  (getpid|getppid|getsid|getpgid_self|getpgid_0) ")
CHANGED = re.compile(r"  (slower|faster)( |$)")
SLOWER = re.compile(r"  slower( |$)")
COMPARED = re.compile(r"  (same|slower|faster|no-verdict)( |$)")


def indented(lines: Sequence[str], head: str = "    ") -> List[str]:
    return [head + line for line in lines]


class Runs:
    """The A/B runs of one validation, their files in out."""

    def __init__(self, out: str, tests: Sequence[str], repeat: int):
        self.out = out
        self.tests = list(tests)
        self.repeat = repeat

    def ab(self, name: str, prefix: str) -> List[str]:
        """One A/B run (KTAP and messages kept in NAME.ktap, NAME.err);
        its comparison's lines, kept in NAME.txt. A run that fails says
        so in its comparison."""
        d = os.path.join(self.out, name)
        tests = [w for t in self.tests for w in ("-t", t)]
        runner.run_logged(["--no-build", *tests, "--vs-prefix", prefix,
                           "--repeat", str(self.repeat), "--json", d],
                          "kbench run", f"{d}.ktap", f"{d}.err")
        try:
            text = compare.comparison(compare.Request(
                [os.path.join(d, "base"), os.path.join(d, "candidate")],
                ["base", name])).text
        except results.ResultError as e:
            text = f"no comparison: {e}\n"
        with open(f"{d}.txt", "w", encoding="utf-8") as f:
            f.write(text)
        return text.splitlines()


def changed(lines: Sequence[str]) -> List[str]:
    """The compare lines of rows with a verdict of slower or faster."""
    return [line for line in lines if CHANGED.search(line)]


def aa_trials(runs: Runs, trials: int) -> bool:
    """K A/A runs: whether no row came out slower or faster."""
    clean = True
    for i in range(1, trials + 1):
        lines = runs.ab(f"aa{i}", "env")
        moved = changed(lines)
        total = sum(1 for line in lines if COMPARED.search(line))
        print("\n".join([f"A/A trial {i}: {len(moved)} of {total} rows "
                         "slower/faster", *indented(moved)]), flush=True)
        clean = clean and not moved
    return clean


def seccomp_wrap(out: str) -> str:
    wrap = os.path.join(out, "seccomp_wrap")
    sys.stdout.flush()
    if proc.run([os.environ.get("CC") or "cc", "-O2", "-Wall", "-Wextra",
                 "-o", wrap, paths.script("tests/seccomp_wrap.c")]) != 0:
        raise cli.Failure("cannot build tests/seccomp_wrap.c")
    return wrap


def seccomp_trial(runs: Runs, wrap: str, c: str) -> bool:
    """One A/B of a filter of c compares: whether every null-syscall row
    came out slower."""
    def direct() -> str:
        return proc.capture([wrap, "-n", c, "--measure"]).rstrip("\n")
    print(f"seccomp filter, {c} compares: direct {direct()}", flush=True)
    lines = runs.ab(f"seccomp{c}", f"{wrap} -n {c}")
    null = [line for line in lines if NULL_ROW.match(line)]
    report = indented(direct().splitlines(), "    direct after the run: ")
    report += indented(null)
    slower = all(SLOWER.search(line) for line in null)
    if not slower:
        report.append("    FAIL: a null-syscall row is not 'slower'")
    report += indented([line for line in changed(lines)
                        if not NULL_ROW.match(line)],
                       "    other changed row: ")
    print("\n".join(report), flush=True)
    return slower


def parse(prog: str, argv: Sequence[str]) -> argparse.Namespace:
    ap = bench.parser(prog, HELP)
    ap.add_argument("-t", dest="tests", action="append", default=[])
    ap.add_argument("-r", dest="repeat", default="5")
    ap.add_argument("--trials", default="3")
    ap.add_argument("--compares", default="0,50,200")
    ap.add_argument("--out")
    ap.add_argument("--no-aa", dest="aa", action="store_false")
    ap.add_argument("--no-seccomp", dest="seccomp", action="store_false")
    a = ap.parse_args(list(argv))
    for option, value, form in (("-r", a.repeat, r"[1-9][0-9]*"),
                                ("--trials", a.trials, r"[0-9]+"),
                                ("--compares", a.compares,
                                 r"[0-9]+(,[0-9]+)*")):
        if not re.fullmatch(form, value):
            ap.error(f"invalid {option} '{value}'")
    a.tests = a.tests or ["syscall_overhead"]
    return a


def main(argv: Sequence[str], prog: str = "kbench bench verdict-ab") -> int:
    a = parse(prog, argv)

    def body() -> int:
        with bench.scratch("kbench-verdict.", a.out) as out:
            runs = Runs(out, a.tests, int(a.repeat))
            bench.build("--no-print-directory", "-C", paths.TOP,
                        f"TESTS={' '.join(a.tests)}", "all", progress=True)
            met = not a.aa or aa_trials(runs, int(a.trials))
            if a.seccomp:
                wrap = seccomp_wrap(out)
                for c in a.compares.split(","):
                    met = seccomp_trial(runs, wrap, c) and met
        if not met:
            print(f"{prog}: an expectation failed (figures above)")
            return 1
        print(f"{prog}: all expectations met")
        return 0
    return cli.orchestrate(prog, body)
