# SPDX-License-Identifier: GPL-2.0
"""The collection on this host: its test directories and programs as the
kselftest layout lists them (make list, make emit_tests), its build and
packages. kbench run runs it here (kbtools.runner); run() starts its
top-level runner, run_all.sh, for the checks of that script as users
call it. Guests run the host's plan of their run (kbtools.vm,
runner.guest_plan).
"""

import hashlib
import os
import sys
from typing import List, Mapping, Optional, Sequence

from kbtools import cli, kernel, packages, paths, proc

RUNNER = paths.script("run_all.sh")


def run(argv: Sequence[str], *, log: Optional[str] = None,
        err_log: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None) -> int:
    """run_all.sh ARGV here (its KTAP into log, its messages into
    err_log when given); its exit status."""
    return proc.run([RUNNER, *argv], log=log, err_log=err_log, env=env)


def make(*args: str, top: str = "") -> List[str]:
    """The words make -s prints in top (the collection's, or a test
    directory of it); cli.Failure when it fails."""
    d = top or paths.TOP
    rc, out = proc.output(["make", "-s", "--no-print-directory", "-C", d,
                           *args])
    if rc != 0:
        raise cli.Failure(f"make {' '.join(args)} failed in {d}")
    return out.split()


def tests() -> List[str]:
    """Every test directory, as run_all.sh lists them (make list)."""
    return make("list")


def check_tests(names: Sequence[str]) -> None:
    """cli.Error on a name that is no test directory (as run_all.sh -t
    says it)."""
    known = tests()
    for name in names:
        if name not in known:
            raise cli.Error(f"unknown test '{name}' (known: "
                            f"{' '.join(known)})")


def program_tests(name: str) -> Optional[List[str]]:
    """The tests the program of test directory name runs one by one with
    -t (the first word of each line of its --list), built first when
    missing; None when it lists none: pmqtest's -t is rt-tests' thread
    count. A row that names no test of its program (a proc_create cell,
    a memcg_ks reading) is one figure of a test: the whole program runs
    for it."""
    make_all([name], f"the build of {name} failed (see above)")
    try:
        listed = proc.capture([os.path.join(paths.TOP, name, name),
                               "--list"])
    except proc.Failed:
        return None
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def programs(names: Sequence[str]) -> List[str]:
    """"DIR:PROG" of every program of these test directories, as
    run_all.sh runs them (lib.mk's emit_tests); cli.Failure on a
    directory it cannot list or that lists nothing (never an empty
    plan)."""
    out: List[str] = []
    for t in names:
        try:
            listed = make("COLLECTION=" + t, "emit_tests",
                          top=os.path.join(paths.TOP, t))
        except cli.Failure as e:
            raise cli.Failure(f"cannot list the programs of {t} (make "
                              "emit_tests failed; is KSRC set?)") from e
        if not listed:
            raise cli.Failure(f"{t} lists no test program")
        out += listed
    return out


def programs_sha(top: str, progs: Sequence[str]) -> str:
    """One digest of the build a guest runs: every executable file of
    the test directories of progs ("DIR:PROG") under top, the helpers a
    program starts (proc_create's exec targets) with it. A calibration
    holds for one build of them: another compiler or a changed program
    counts other instructions in the same rows."""
    h = hashlib.sha256()
    for d in sorted({p.split(":")[0] for p in progs}):
        path = os.path.join(top, d)
        for name in sorted(os.listdir(path)):
            f = os.path.join(path, name)
            if os.path.isfile(f) and os.access(f, os.X_OK):
                h.update(f"{d}/{name} {kernel.file_sha(f)}\n".encode())
    return h.hexdigest()[:16]


def build(names: Sequence[str], prog: str, no_install: bool = False) -> None:
    """As run_all.sh does before a run: the packages set up (or said:
    cli.Failure 3), then what is missing built (cli.Failure 1)."""
    if packages.set_up("run_all.sh", no_install) != 0:
        raise cli.Failure("the collection's packages are missing (see "
                          "above)", cli.EXIT_SETUP)
    make_all(names, "the collection's build failed (see above)")


def make_all(names: Sequence[str], failure: str = "build failed") -> None:
    """What is missing of these tests built (make's output on stderr);
    cli.Failure(failure) when the build fails."""
    if proc.run(["make", "-s", "--no-print-directory", "-C", paths.TOP,
                 f"TESTS={' '.join(names)}", "all"],
                stdout=sys.stderr) != 0:
        raise cli.Failure(failure)
