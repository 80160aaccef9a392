# SPDX-License-Identifier: GPL-2.0
"""CI step: boot Debian kernels other than the host's (kbtools.vm) and
run every test directory inside each. Fails when a guest does not boot,
anything is "not ok", a SKIP names no reason, the KTAP is malformed, or a
program leaves no JSON marked with the guest's accelerator. Prints the
time each kernel took.

    kbench ci-vm [KERNEL]...        (scripts/ci_vm.sh)
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
from typing import List, Optional, Sequence, Tuple

from kbtools import cli, ktap, vm
from kbtools.output import Tee

HELP = """\
Usage: {prog} [KERNEL]...
Boot each KERNEL (as vm_run.sh --kernel takes it; default
$KBENCH_CI_KERNELS, else debian-6.1: the most different from a 6.12+
host: cgroup v2 memory controller, taskstats version 13, no
/proc/config.gz) under virtme-ng/QEMU and run every test directory
inside it. A kernel fails when its guest does not boot, anything is
"not ok", a SKIP names no reason, the KTAP is malformed, or a program
that ran left no JSON marked with the guest's accelerator.
Exit status: 0 every kernel passed, 1 otherwise, 2 bad usage.
"""
PASSED = re.compile(r"^ok [0-9]+ selftests: kbench/[^:]*: (\S+)$")


def json_problem(path: str) -> Optional[str]:
    """What is wrong with one program's JSON file in a guest's --json
    directory (missing, not JSON, not marked machine.guest tcg or kvm),
    or None."""
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as err:
        return f"{name}: {err}"
    except RecursionError:
        return f"{name}: JSON nested too deeply"
    machine = doc.get("machine") if isinstance(doc, dict) else None
    guest = machine.get("guest") if isinstance(machine, dict) else None
    if guest not in ("tcg", "kvm"):
        return f"{name}: machine.guest is {guest!r}, not tcg/kvm"
    return None


def ran(stream: str) -> List[str]:
    """The programs that ran (a skipped one may leave no JSON)."""
    return [m.group(1) for m in map(PASSED.match, stream.splitlines())
            if m and "# SKIP" not in m.group(0)]


def read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def run_kernel(kernel: str, out: str) -> Tuple[str, bool]:
    """One guest run and its checks: its summary line, whether it
    passed."""
    os.makedirs(out)
    start = time.monotonic()
    print(f"ci-vm: === {kernel} (host: {os.uname().release})", flush=True)
    rc, times = boot(kernel, out)
    verdict = "PASS"
    if rc != 0:
        print(f"ci-vm: {kernel}: vm_run.sh exit status {rc}")
        verdict = "FAIL"
    stream = read(os.path.join(out, "ktap"))
    errors = ktap.check(ktap.read(os.path.join(out, "ktap")), no_fail=True,
                        skip_reasons=True)
    for e in errors:
        print(f"ktap_check.py: {e}", file=sys.stderr)
    if errors:
        print(f"ci-vm: {kernel}: the KTAP check failed")
        verdict = "FAIL"
    programs = ran(stream)
    problems = [p for p in (json_problem(os.path.join(out, "json",
                                                      f"{name}.json"))
                            for name in programs) if p]
    for p in problems:
        print(f"ci-vm: {p}")
    if not programs or problems:
        print(f"ci-vm: {kernel}: JSON results missing or unmarked")
        verdict = "FAIL"
    said = f"boot {times[0]:.1f} s, run {times[1]:.1f} s" if times else ""
    return (f"{kernel:<16} {verdict:<4} {int(time.monotonic() - start):4d} "
            f"s  {said}", verdict == "PASS")


def boot(kernel: str, out: str) -> Tuple[int, Optional[Tuple[float, float]]]:
    """One guest run of kernel (kbtools.vm, as vm_run.sh runs it), its
    KTAP on stdout and in OUT/ktap, its results in OUT/json/, its
    console in OUT/console.log: (vm_run.sh's exit status, the boot's
    and the run's seconds)."""
    prog = "vm_run.sh"
    sys.stdout.flush()
    times: List[Tuple[float, float]] = []

    def run() -> int:
        opts = vm.parse(["--kernel", kernel, "--json",
                         os.path.join(out, "json"), "--console",
                         os.path.join(out, "console.log")], prog)
        with open(os.path.join(out, "ktap"), "wb") as copy:
            r = vm.run_guest(opts, prog, Tee(copy, sys.stdout.buffer))
        times.extend([r.times] if r.times else [])
        return r.status
    rc = cli.step(prog, run)
    return rc, times[0] if times else None


def main(argv: Sequence[str], prog: str = "kbench ci-vm") -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(HELP.format(prog=prog), end="")
        return 0
    if argv and argv[0].startswith("-"):
        cli.UsageParser(prog=prog).error(f"unknown option '{argv[0]}'")
    kernels = list(argv) or (os.environ.get("KBENCH_CI_KERNELS")
                             or "debian-6.1").split()

    def body() -> int:
        work = tempfile.mkdtemp(prefix="kbench-ci-vm.",
                                dir=os.environ.get("TMPDIR") or "/tmp")
        try:
            summary = [run_kernel(k, os.path.join(work, k.replace("/", "_")))
                       for k in kernels]
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print("ci-vm: kernel           result  time   (in the guest)")
        print("".join(f"ci-vm: {line}\n" for line, _ in summary), end="",
              flush=True)
        return 0 if all(ok for _, ok in summary) else 1
    return cli.orchestrate(prog, body)
