# SPDX-License-Identifier: GPL-2.0
"""Did my patch make it slower? Build two revisions of a kernel tree
with the test kernel's configuration (kbtools.kernel: incremental,
cached by hash, as the bisection builds them), boot each under QEMU's
instruction counter (kbtools.ab, as run_all.sh --kernel BASE
--vs-kernel CANDIDATE --icount boots them) and print compare's exact verdicts: one boot per kernel, every
program run twice in it.

    kbench validate --tree DIR --base REV --candidate REV
                    [-t TEST[:ROW]]... [--real] [--where] [--json DIR]
                    [-j N]                          (scripts/validate.py)

--real boots on a real clock instead (TCG or KVM), with the design's
boots per kernel and the statistical verdicts. --where (exact mode
only) names the functions each exact or near row of syscall_overhead
that moved went through, as the A/B's --where does (kbench where: each
kernel with such a row boots once more; --where-with plugin or ftrace,
the A/B's default). Exit status: the A/B's
(0 compared, 1 a boot failed or --fail-above), 2 bad usage, 3 a revision
that does not build or a failed setup.
"""

import argparse
from typing import Any, Dict, List, Sequence

from kbtools import (ab, bisect, bisect_run, cli, kernel, options, output,
                     where)

# The A/B's options (kbtools.options) handed on as they came.
PASSED_ON = ("--json", "--fail-above", "--accel", "--where",
             "--where-with")
HELP: Dict[str, Dict[str, Any]] = {
    "--json": {"help": "keep DIR/base and DIR/candidate"},
    "--fail-above": {"help": "exit 1 when a row is slower by more than "
                             "PCT %%"},
    "--where": {"help": "the functions whose own instructions per "
                        "operation changed, for each exact or near row of "
                        "syscall_overhead or proc_create that moved (kbench "
                        "where; not with --real)"},
    "--where-with": {"choices": (where.PLUGIN, where.FTRACE)}}


def parse_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    ap = cli.UsageParser(prog=prog, description=(
        "Build two revisions of a kernel tree with the test kernel's "
        "configuration, boot each under QEMU's instruction counter and "
        "print exact verdicts: did the candidate make a row slower?"))
    ap.add_argument("--tree", required=True, help="a kernel git tree")
    ap.add_argument("--base", required=True, help="the revision before")
    ap.add_argument("--candidate", required=True, help="the revision after")
    ap.add_argument("-t", "--test", action="append", default=[],
                    metavar="TEST[:ROW]",
                    help="only these programs or rows (repeatable; "
                         "default: every program)")
    ap.add_argument("--real", action="store_true",
                    help="a real clock: the design's boots per kernel, "
                         "statistical verdicts")
    ap.add_argument("-j", "--jobs", help="parallel make jobs")
    options.add_arguments(ap, PASSED_ON, HELP)
    args = ap.parse_args(list(argv))
    if args.jobs is not None and not args.jobs.isdigit():
        ap.error(f"invalid --jobs '{args.jobs}'")
    if args.where_with and not args.where:
        ap.error("--where-with needs --where")
    bisect_run.check_targets(args.test)
    if args.where:
        check_where(args, prog)
    return args


def check_where(args: argparse.Namespace, prog: str) -> None:
    """--where as the A/B checks it (kbtools.ab), before anything is
    built: exact mode, an x86_64 guest, syscall_overhead among the
    tests."""
    if args.real:
        raise cli.Error("--where attributes an exact change in "
                        "instructions: not with --real")
    try:
        tests, _ = bisect_run.guest_env(args.test)
    except bisect.BisectError as e:
        raise cli.Error(f"-t: {e}") from None
    ab.check_where(True, tests.split(",") if tests else [], [args.tree],
                   options.passed_on(args, ("--accel",)), prog)


def command(args: argparse.Namespace, base: str, cand: str) -> List[str]:
    """The A/B's options (kbtools.ab, run_all.sh --vs-kernel's)."""
    tests, _ = bisect_run.guest_env(args.test) if args.test else ("", {})
    cmd = ["--kernel", base, "--vs-kernel", cand]
    if not args.real:
        cmd.append("--icount")
    if tests:
        cmd += ["-t", tests]
    return cmd + options.passed_on(args, PASSED_ON)


def validate(args: argparse.Namespace, prog: str) -> int:
    tree = bisect_run.checked_tree(args.tree)
    revs = [tree.rev(args.base, "--base"),
            tree.rev(args.candidate, "--candidate")]
    if revs[0] == revs[1]:
        raise cli.Error("--base and --candidate are the same commit")
    images = []
    for name, rev in zip(("base", "candidate"), revs):
        try:
            images.append(kernel.build_commit(kernel.CommitBuild(
                tree.path, rev, int(args.jobs or 0)), prog).image)
        except kernel.BuildFailed as e:
            raise cli.Failure(f"the {name} {rev[:12]} ({tree.subject(rev)}) "
                              f"does not build", cli.EXIT_SETUP) from e
    _, env = bisect_run.guest_env(args.test)
    output.msg(prog, f"base {revs[0][:12]} {tree.subject(revs[0])}")
    output.msg(prog, f"candidate {revs[1][:12]} {tree.subject(revs[1])}")
    opts = ab.parse(command(args, *images), prog)
    opts.program_args = env
    return ab.run_ab(opts, prog)


def main(argv: Sequence[str], prog: str = "kbench validate") -> int:
    """kbench validate, scripts/validate.py: the A/B's status; 2 bad
    usage; 3 a revision that does not build or a failed setup."""
    return cli.orchestrate(prog, lambda: validate(parse_args(argv, prog),
                                                  prog))
