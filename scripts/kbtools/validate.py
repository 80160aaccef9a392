# SPDX-License-Identifier: GPL-2.0
"""Did my patch make it slower? Build two revisions of a kernel tree
with the test kernel's configuration (testkernel/build.sh --tree
--commit: incremental, cached by hash, as the bisection builds them),
boot each under QEMU's instruction counter (run_all.sh --kernel BASE
--vs-kernel CANDIDATE --icount) and print compare's exact verdicts:
one boot per kernel, every program run twice in it.

    scripts/validate.py --tree DIR --base REV --candidate REV
                        [-t TEST[:ROW]]... [--real] [--json DIR] [-j N]

--real boots on a real clock instead (TCG or KVM), with the design's
boots per kernel and the statistical verdicts. Exit status: run_all.sh's
(0 compared, 1 a boot failed or --fail-above), 2 bad usage, 3 a revision
that does not build or a failed setup.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import shutil
from typing import List, NoReturn, Optional

from kbtools import bisect_run, output

PROG = "validate.py"


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise bisect_run.Usage(message)


def parse_args(argv: List[str]) -> argparse.Namespace:
    ap = Parser(prog=PROG, description=(
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
    ap.add_argument("--json", metavar="DIR",
                    help="keep DIR/base and DIR/candidate")
    ap.add_argument("--fail-above", metavar="PCT",
                    help="exit 1 when a row is slower by more than PCT %%")
    ap.add_argument("-j", "--jobs", help="parallel make jobs")
    ap.add_argument("--accel", help="passed to scripts/vm-run.sh")
    return ap.parse_args(argv)


def command(args: argparse.Namespace, base: str, cand: str) -> List[str]:
    tests, _ = bisect_run.guest_env(args.test) if args.test else ("", {})
    cmd = [os.path.join(bisect_run.TOP, "run_all.sh"), "--kernel", base,
           "--vs-kernel", cand]
    if not args.real:
        cmd.append("--icount")
    if tests:
        cmd += ["-t", tests]
    for opt in ("json", "fail_above", "accel"):
        value = getattr(args, opt)
        if value is not None:
            cmd += ["--" + opt.replace("_", "-"), value]
    return cmd


def run(args: argparse.Namespace) -> int:
    tree = bisect_run.checked_tree(args.tree)
    revs = [tree.rev(args.base, "--base"),
            tree.rev(args.candidate, "--candidate")]
    if revs[0] == revs[1]:
        raise bisect_run.Usage("--base and --candidate are the same commit")
    work = tempfile.mkdtemp(prefix="kbench-validate.")
    try:
        runner = bisect_run.Runner(work, work, args.jobs, [])
        images = []
        for name, rev in zip(("base", "candidate"), revs):
            image = runner.build(tree.path, rev)
            if image is None:
                raise bisect_run.Setup(f"the {name} {rev[:12]} "
                                       f"({tree.subject(rev)}) does not "
                                       f"build")
            images.append(image)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _, env = bisect_run.guest_env(args.test)
    bisect_run.msg(f"base {revs[0][:12]} {tree.subject(revs[0])}")
    bisect_run.msg(f"candidate {revs[1][:12]} {tree.subject(revs[1])}")
    return subprocess.call(command(args, *images), env=env)


def main(argv: Optional[List[str]] = None) -> int:
    bisect_run.PROG = PROG
    try:
        return run(parse_args(sys.argv[1:] if argv is None else argv))
    except bisect_run.Usage as e:
        bisect_run.msg(str(e))
        print(f"Try '{PROG} --help' for more information.", file=sys.stderr)
        return 2
    except bisect_run.Setup as e:
        bisect_run.msg(str(e))
        return 3
    except BrokenPipeError:
        output.stdout_gone()
        return 0


if __name__ == "__main__":
    sys.exit(main())
