# SPDX-License-Identifier: GPL-2.0
"""The picture of an A/B report in docs/reports.md (docs/report-ab.png): the
null-syscall rows of syscall_overhead with and without a seccomp filter
that costs every system call (tests/seccomp_wrap.c), 5 interleaved
repetitions per side, reported by kbtools.report and photographed by
headless Chromium (kbtools.browser).

    kbench docs screenshot [-o PNG] [AB_DIR]   (scripts/make_docs_screenshot.sh)
"""

import os
import shutil
import tempfile
from typing import Sequence

from kbtools import browser, cli, paths, plots, proc, report, runner
from kbtools.output import msg

ROWS = "fork,getpid,getppid,getpgid_self,getsid,msgsnd_rcv,shmat_ctl"
TITLE = "kbench A/B: syscall_overhead under a 200-compare seccomp filter"

USAGE = """\
Usage: {prog} [-o PNG] [AB_DIR]
Run a small A/B (syscall_overhead plain vs under a seccomp filter,
--repeat 5), write its HTML report and a screenshot of the report's top
to PNG (default: docs/report-ab.png). With AB_DIR (a run_all.sh --json
directory of an A/B run), photograph the report of those results instead
of running. Needs python3-matplotlib and chromium.
"""


def run_ab(prog: str, work: str) -> str:
    """The A/B run into WORK/ab; its directory."""
    wrap = os.path.join(work, "seccomp_wrap")
    if proc.run(["cc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-o", wrap,
                 paths.script("tests/seccomp_wrap.c")]) != 0:
        raise cli.Failure("cannot build seccomp_wrap")
    ab = os.path.join(work, "ab")
    env = dict(os.environ, KSELFTEST_SYSCALL_OVERHEAD_ARGS=f"-t {ROWS}")
    if runner.run_logged(["-t", "syscall_overhead", "--repeat", "5",
                          "--vs-prefix", f"{wrap} -n 200", "--json", ab],
                         prog, os.path.join(work, "ab.ktap"),
                         environ=env) != 0:
        msg(prog, "the A/B run reported failures (see the report)")
    return ab


def screenshot(prog: str, ab: str, out: str) -> int:
    if not plots.available():
        raise cli.Failure(f"cannot draw the report: {plots.install_hint()}")
    work = tempfile.mkdtemp(prefix="kbench-docs.")
    try:
        ab = ab or run_ab(prog, work)
        html = os.path.join(work, "report.html")
        try:
            report.write(html, [ab], title=TITLE)
        except report.ReportError as e:
            raise cli.Failure(f"no report of {ab}: {e}") from e
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        page = browser.check_page(html, screenshot=out, width=1000,
                                  clip=1150, scale=0.8)
        if page.failed:
            raise cli.Failure("the browser check failed: "
                              f"{'; '.join(page.failed)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{prog}: wrote {out} ({os.path.getsize(out)} bytes)", flush=True)
    return 0


def main(argv: Sequence[str], prog: str = "kbench docs screenshot") -> int:
    """make_docs_screenshot.sh: 0 written; 1 a step failed; 2 bad
    usage."""
    ap = cli.UsageParser(prog=prog, help_text=USAGE.format(prog=prog))
    ap.add_argument("-o", dest="out",
                    default=os.path.join(paths.TOP, "docs", "report-ab.png"))
    ap.add_argument("ab", nargs="?", default="")
    a = ap.parse_args(list(argv))
    if a.ab and not (os.path.isdir(os.path.join(a.ab, "base")) and
                     os.path.isdir(os.path.join(a.ab, "candidate"))):
        ap.error(f"'{a.ab}' is not an A/B directory (no base/ and "
                 "candidate/)")
    return cli.orchestrate(prog, lambda: screenshot(prog, a.ab, a.out))
