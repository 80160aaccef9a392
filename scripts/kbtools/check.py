# SPDX-License-Identifier: GPL-2.0
"""The project's own tests as a table of steps (make check, make
check-all; tests/run.sh runs this):

    kbench check [--quick] [--vm] [--arm64] [--testkernel] [STEP]...

Each step is a function of its Check (kbtools.checking): it returns (a
pass), raises Skip (a missing tool: the step says which and its Debian
package, listed again at the end) or Fail. Its output is logged and
shown behind '# ' (its failure lines first, its last 40 lines), one KTAP
result per step with the time it took; the run ends with the steps'
times, slowest first, and 'N passed, N failed, N skipped'. The steps
beyond this host are kbtools.check_guests'. See docs/project-tests.md.
"""

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence, Set, Tuple

from kbtools import cli, collection, packages, paths, proc
from kbtools.output import msg
from kbtools.check_guests import (ab_boot_retry, cross_arm64, cross_i386,
                                  i386_host_run, icount_aa, icount_ab,
                                  icount_validate, icount_where, lava_lab,
                                  lava_series,
                                  testkernel_i386, testkernel_patched,
                                  vm_arm64_6_12, vm_arm64_icount_aa,
                                  vm_debian_6_1, vm_repeat_layout)
from kbtools.checking import (Check, Fail, Skip, Step, cat, grep,
                              place_in_tree, run_steps, tail)

USAGE = """\
Usage: {prog} [--quick] [--vm] [--arm64] [--testkernel] [STEP...]
The project's own tests: lint (shellcheck, pyflakes, mypy, checkpatch),
unit tests of the shared library and the tools, the collection as root
and as an unprivileged user with its KTAP checked strictly and by the
kernel's kunit.py parser, an ASan+UBSan+LSan build and run, the in-tree
build/install/run_kselftest.sh path in a 6.12 and a 6.1 tree and a clang
(LLVM=1, O=, gen_tar) build, bad-usage handling and what is left behind
after SIGTERM.

  --quick       skip the in-tree (6.1/6.12, clang) and unprivileged steps
  --vm          also boot a Debian kernel and run the collection in it,
                run the 32-bit build on this host, and boot Debian's
                arm64 6.12 kernel under TCG with the arm64 build
  --arm64       the arm64 guest alone (without the rest of --vm)
  --testkernel  also build (or reuse) the patched test kernel and run
                taskstats and memcg_ks on it (testkernel/run.sh)
  STEP          run only these steps (see the names printed)

Prints KTAP, each step's time, and ends with "N passed, N failed, N
skipped"; exits 1 on failure, 2 on bad usage. A step whose tool is
missing is an explicit SKIP naming the tool and its Debian package
(listed again at the end).
"""


# ---- the steps --------------------------------------------------------------

def build_collection(c: Check) -> None:
    c.must(["make", "-C", c.top, "all"], "make all failed")


def config_is_union(c: Check) -> None:
    """The top-level config is the union of the fragments."""
    def options(path: str) -> Set[str]:
        with open(path, encoding="utf-8") as f:
            return {line.rstrip("\n") for line in f
                    if line.startswith("CONFIG_")}
    want: Set[str] = set()
    for name in sorted(os.listdir(c.top)):
        frag = os.path.join(c.top, name, "config")
        if os.path.isfile(frag):
            want |= options(frag)
    have = options(os.path.join(c.top, "config"))
    for line in sorted(want - have):
        print(f"> {line}")
    for line in sorted(have - want):
        print(f"< {line}")
    if want != have:
        raise Fail("top-level config is not the union of the test fragments")


def package_list(c: Check) -> None:
    """README.md and docs/*.md agree with packages.txt: their generated
    install lines and package table are the list's (packages.py readme
    --write makes them again), and every package they tell to apt-get
    install is listed."""
    texts = {}
    for path in packages.docs_files():
        with open(path, encoding="utf-8") as f:
            texts[os.path.relpath(path, c.top)] = f.read()
    problems = packages.docs_problems(texts, c.plist)
    for p in problems:
        print(f"packages.py: {p}")
    if problems:
        raise Fail("README.md or docs/ disagree with packages.txt")
    for path in texts:
        print(f"{path} agrees with packages.txt")


def shell_scripts(c: Check) -> List[str]:
    """Every bash script, by name or by the shebang of its first line (a
    Python file may hold a guest's script as text)."""
    found = set(c.project_files("*.sh"))
    for path in c.project_files("*"):
        try:
            with open(path, "rb") as f:
                first = f.readline()
        except OSError:
            continue
        if re.match(rb"^#!/bin/(ba)?sh", first):
            found.add(path)
    return sorted(found)


def shellcheck(c: Check) -> None:
    c.need("shellcheck")
    files = shell_scripts(c)
    if not files:
        raise Fail("no shell script found")
    print("".join(f"shellcheck: {os.path.relpath(f, c.top)}\n"
                  for f in files), end="")
    c.must(["shellcheck", "-x", "--source-path=SCRIPTDIR", *files],
           "shellcheck found problems")


def lint_python(c: Check) -> None:
    c.need("python3")
    files = c.project_files("*.py")
    if not files:
        raise Fail("no Python file found")
    print("".join(f"lint: {os.path.relpath(f, c.top)}\n" for f in files),
          end="")
    c.must(["python3", "-m", "py_compile", *files],
           "py_compile rejected a file",
           env=dict(os.environ, PYTHONPYCACHEPREFIX=c.path("pycache")))
    c.need("pyflakes3")
    c.must(["pyflakes3", *files], "pyflakes found problems")


def mypy(c: Check) -> None:
    """mypy over scripts/kbtools, the kbench front door, scripts/*.py,
    bench/*.py and tests/*.py (mypy.ini says which of them strictly)."""
    c.need("mypy")
    c.must(["mypy", "--config-file", "mypy.ini", "--cache-dir",
            os.path.join(paths.cache_dir(), "mypy")],
           "mypy found problems", cwd=c.top)


def checkpatch(c: Check) -> None:
    """checkpatch.pl of the provisioned tree over every C file; the false
    positives of user-space code are listed in
    tests/checkpatch_false_positives ("TYPE" lines hold everywhere, "TYPE
    FILE" lines in FILE only)."""
    c.need("perl")
    everywhere: List[str] = []
    per_file: Dict[str, List[str]] = {}
    with open(os.path.join(c.top, "tests", "checkpatch_false_positives"),
              encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) == 1:
                everywhere.append(words[0])
            elif len(words) == 2:
                per_file.setdefault(words[1], []).append(words[0])
    if not everywhere:
        raise Fail("empty tests/checkpatch_false_positives")
    files = c.project_files("*.[ch]")
    if not files:
        raise Fail("no C file found")
    bad = False
    for path in files:
        rel = os.path.relpath(path, c.top)
        ignore = ",".join(everywhere + per_file.get(rel, []))
        rc, out = proc.output(["perl", os.path.join(
            c.ksrc, "scripts", "checkpatch.pl"), "--no-tree", "--terse",
            "--show-types", "--no-summary", "--ignore", ignore, "-f", path])
        bad = bad or rc != 0
        print(out.replace(c.top + "/", ""), end="")
    print(f"checkpatch: {len(files)} files, ignored types: "
          f"{','.join(everywhere)}")
    if bad:
        raise Fail("checkpatch found warnings or errors")


def unit_c(c: Check) -> None:
    c.need("python3")
    libs = sorted(os.path.join(c.top, "lib", n)
                  for n in os.listdir(os.path.join(c.top, "lib"))
                  if n.endswith(".c"))
    tests = sorted(os.path.join(c.top, "tests", n)
                   for n in os.listdir(os.path.join(c.top, "tests"))
                   if n.startswith("unit_") and n.endswith(".c"))
    doc = c.path("unit.json")
    for src in tests:
        name = os.path.basename(src)[:-2]
        binary = c.path(name)
        c.must(["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror",
                f"-I{c.ksft}", f"-I{os.path.join(c.top, 'lib')}", src,
                *libs, "-lcap", "-lm", "-lnuma", "-o", binary],
               f"cannot build {src}")
        ktap = c.path("unit.ktap")
        rc = c.run([binary, doc], out=ktap)
        cat(ktap)
        if rc != 0:
            raise Fail(f"{name} exited {rc}")
        c.ktap_clean(ktap, f"{name}.c reported failures",
                     skip_reasons=False)
    c.must(["python3", os.path.join(c.top, "tests",
                                         "check_unit_json.py"), doc],
           "the unit tests' JSON document is wrong")


def unit_modules(c: Check) -> List[str]:
    """tests/test_*.py but the property modules (test_fuzz_*.py), which
    are python_properties' to run."""
    return sorted(n[:-3] for n in os.listdir(os.path.join(c.top, "tests"))
                  if n.startswith("test_") and n.endswith(".py")
                  and not n.startswith("test_fuzz_"))


def unit_python(c: Check) -> None:
    """The unit tests; a test skipped for want of a package that dpkg has
    installed (another python3, a PATH without the tool) fails the step
    (tests/needs.py): the install did not take."""
    c.need("python3")
    tests = os.path.join(c.top, "tests")
    log = c.path("unit.log")
    rc = c.run(["python3", "-m", "unittest", "-v", *unit_modules(c)],
               cwd=tests, out=log, both=True)
    cat(log)
    if rc != 0:
        raise Fail("unit tests failed")
    c.must([os.path.join(tests, "needs.py"), log],
           "unit tests skipped for want of what is installed")


def unit_python_bare_path(c: Check) -> None:
    """The unit tests once more, with a PATH that holds a bare Debian
    root's commands alone (tests/bare_path.py: priority "required",
    nothing of packages.txt) and the interpreter: a test that runs a tool
    it does not say it needs (tests/needs.py) fails here, whatever this
    machine has."""
    c.need("python3")
    tests, bare = os.path.join(c.top, "tests"), c.path("bare-path")
    c.script([os.path.join(tests, "bare_path.py"),
              shutil.which("python3") or "python3", bare],
             "tests/bare_path.py failed")
    c.must([os.path.join(bare, "python3"), "-m", "unittest",
            *unit_modules(c)],
           "a unit test fails without the tools of packages.txt (say what "
           "it needs: tests/needs.py)",
           cwd=tests, env=dict(os.environ, PATH=bare))


def collection_as_root(c: Check) -> None:
    c.need("python3")
    out, doc = c.path("root.ktap"), c.path("json-root")
    rc = c.collection(["--no-build", "--json", doc], out)
    cat(out)
    if rc != 0:
        raise Fail(f"run_all.sh exited {rc}")
    c.ktap_clean(out, "KTAP check failed")
    parsed = c.path("kunit.txt")
    with open(out, "rb") as stream, open(parsed, "w") as f:
        if subprocess.run(["python3", os.path.join(
                c.ksrc, "tools", "testing", "kunit", "kunit.py"), "parse"],
                stdin=stream, stdout=f, stderr=subprocess.STDOUT).returncode:
            raise Fail("kunit.py parse rejected the stream")
    with open(out, encoding="utf-8", errors="replace") as f:
        rows = sum(1 for line in f
                   if re.match(r"^    (ok|not ok) [0-9]+", line))
    with open(parsed, encoding="utf-8", errors="replace") as f:
        text = f.read()
    ran = re.findall(r"Ran ([0-9]+) tests", text)
    print(f"kunit.py parse: {text.splitlines()[-1] if text else ''}")
    if rows == 0:
        raise Fail("the stream has no results")
    if ran[-1:] != [str(rows)]:
        raise Fail(f"kunit.py saw {''.join(ran[-1:])} results, the stream "
                   f"has {rows} rows")
    from kbtools import compare, design, results
    try:
        compare.comparison(compare.Request([doc, doc]))
    except results.ResultError as e:
        raise Fail(f"kbtools.compare cannot read the run's JSON results: "
                   f"{e}") from e
    # The design's table of timing rows holds for this real run.
    problems = design.check(results.load(doc))
    for p in problems:
        print(f"design: {p}")
    if problems:
        raise Fail("design.TIMING_ROWS does not hold for this run")


def names_unchanged(c: Check) -> None:
    """The KTAP test names and JSON row names of every program are the
    committed lists of tests/names/ (tests/check_names.py): a rename is
    an API change, made on purpose with --write. The check must be able
    to fail: the same output against a list with one name renamed."""
    c.need("python3")
    c.must(["make", "-s", "-C", c.top, "all"], "cannot build the collection",
           out=os.devnull)
    check = os.path.join(c.top, "tests", "check_names.py")
    kept, lists = c.path("names-out"), c.path("names-renamed")
    c.must(["python3", check, "--keep", kept, c.top],
           "a KTAP test name or JSON row name changed")
    shutil.copytree(os.path.join(c.top, "tests", "names"), lists)
    renamed = os.path.join(lists, "syscall_overhead.names")
    with open(renamed, encoding="utf-8") as f:
        text = f.read()
    with open(renamed, "w", encoding="utf-8") as f:
        f.write(re.sub(r"(?m)^ktap getsid$", "ktap getsid_renamed", text))
    out = c.path("names-renamed.out")
    rc = c.run(["python3", check, "--lists", lists, "--from", kept, c.top],
               out=out)
    with open(out, encoding="utf-8") as f:
        said = f.read()
    if rc != 1 or not re.search(r"(?m)^\+ktap getsid$", said):
        raise Fail(f"the check passed a renamed row (exit {rc}): "
                   f"{' '.join(said.splitlines()[-3:])}")
    print("a renamed row fails the check, as it must")


class UsageErrors:
    """bad_usage's tally: each command line must exit 2 with a message
    on stderr."""

    def __init__(self, c: Check):
        self.c = c
        self.checked = 0
        self.errors = 0

    def expect(self, *cmd: str, env: Optional[Dict[str, str]] = None
               ) -> None:
        self.checked += 1
        err = self.c.path("err")
        try:
            rc = proc.run(cmd, env=None if env is None else
                          dict(os.environ, **env), stdout=None,
                          log=os.devnull, err_log=err, timeout=60)
        except proc.TimedOut:
            rc = 124
        with open(err, encoding="utf-8", errors="replace") as f:
            said = f.read()
        words = " ".join(cmd)
        if rc != 2 or not said:
            print(f"FAIL: '{words}' exited {rc} (want 2), stderr: "
                  f"{said[:200]}")
            self.errors += 1
        else:
            print(f"usage error: '{words}' -> {rc}: "
                  f"{said.splitlines()[0]}")


def bad_usage(c: Check) -> None:
    """Every program, script and tool: an unknown option and its own bad
    values (tests/bad_args.txt) give exit 2 with a message on stderr."""
    u = UsageErrors(c)
    top = c.top
    for d, p in c.programs():
        u.expect(os.path.join(top, d, p), "--no-such-option")
        u.expect(os.path.join(top, d, p), "extra-argument")
    with open(os.path.join(top, "tests", "bad_args.txt"),
              encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            assign = {}
            while "=" in words[0]:
                k, _, v = words.pop(0).partition("=")
                assign[k] = v
            u.expect(os.path.join(top, words[0]), *words[1:], env=assign)
    for d, pattern in (("bench", ".sh"), ("scripts", ".sh"),
                       ("testkernel", ".sh"), ("scripts", ".py"),
                       ("tests", ".py")):
        for name in sorted(os.listdir(os.path.join(top, d))):
            path = os.path.join(top, d, name)
            if name.endswith(pattern) and os.access(path, os.X_OK) and \
                    os.path.isfile(path):
                u.expect(path, "--no-such-option")
    kbench, run_all = os.path.join(top, "kbench"), paths.script("run_all.sh")
    for cmd in ([kbench, "--no-such-option"],
                [kbench, "kernel", "no-such-task"],
                [kbench, "kernel", "build", "--no-such-option"],
                [kbench, "check", "--bogus"],
                [run_all, "--bogus"], [run_all, "-t", "no_such_test"],
                [paths.script("scripts/compare.py"), "/nonexistent.json",
                 "/nonexistent.json"],
                [paths.script("scripts/report.py"), "/nonexistent"]):
        u.expect(*cmd)
    # A collection it cannot list is a failure, never an empty plan.
    out = c.path("nolist.out")
    rc = proc.run([run_all, "--no-build", "-t", "syscall_overhead"],
                  env=dict(os.environ, KSRC="/nonexistent"), log=out,
                  err_log=os.devnull)
    with open(out, encoding="utf-8", errors="replace") as f:
        said = f.read()
    if rc != 1 or re.search(r"(?m)^1\.\.", said):
        print(f"FAIL: run_all.sh without a kselftest tree exited {rc}: "
              f"{said[:200]}")
        u.errors += 1
    print(f"{u.checked} bad invocations checked")
    if u.errors:
        raise Fail(f"{u.errors} usage errors were not handled")


def sigterm_check(c: Check, *args: str) -> None:
    """SIGTERM each program while it runs, or run_all.sh: nothing may
    survive it or be left behind (tests/sigterm.sh), in a private IPC and
    mount namespace when possible, so that other users of SysV IPC and
    POSIX queues on the machine do not show up and /dev/mqueue is mounted
    there only."""
    c.need("pgrep:procps", "pkill:procps", "ipcs:util-linux",
           "setsid:util-linux", "mountpoint:util-linux", "unshare:util-linux")
    ns: List[str] = []
    # In a chroot / is no mount point: its propagation cannot change.
    for prop in ("private", "unchanged"):
        if proc.succeeds(["unshare", "--ipc", "--mount", "--propagation",
                          prop, "true"]):
            ns = ["unshare", "--ipc", "--mount", "--propagation", prop]
            break
    else:
        print("note: no private IPC namespace here: other IPC users may "
              "show up")
    c.script([*ns, os.path.join(c.top, "tests", "sigterm.sh"), *args],
             "tests/sigterm.sh found something left behind")


def sigterm_leftovers(c: Check) -> None:
    sigterm_check(c)


def run_all_sigterm(c: Check) -> None:
    sigterm_check(c, "--run-all")


SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:"
                              r"|SUMMARY: [A-Za-z]*Sanitizer")


def sanitizers(c: Check) -> None:
    """Every program built with ASan+UBSan (LSan included) into its own
    output directory; each program's default run must report nothing."""
    o, flags = c.path("asan"), "-fsanitize=address,undefined"
    progs = c.programs()
    bad = 0
    # One test at a time, so that one failing build hides no other.
    for test in collection.tests():
        if c.run(["make", "-C", c.top, f"TESTS={test}", f"OUTPUT={o}",
                  f"CFLAGS={flags}", f"LDFLAGS={flags}", "all"]) != 0:
            print(f"FAIL: the sanitizer build of {test} failed")
    for d, p in progs:
        binary = os.path.join(o, d, p)
        if not os.access(binary, os.X_OK):
            print(f"FAIL: {d}/{p}: not built with sanitizers")
            bad += 1
            continue
        out = c.path("san.out")
        try:
            rc = c.run([f"./{p}"], cwd=os.path.join(o, d), out=out, both=True,
                       timeout=600, env=dict(
                           os.environ,
                           ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
                           UBSAN_OPTIONS="print_stacktrace=1"))
        except proc.TimedOut:
            rc = 124
        with open(out, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        if rc not in (0, 4) or any(SANITIZER_REPORT.search(ln)
                                   for ln in lines):
            shown = [i for i, ln in enumerate(lines)
                     if re.search(r"Sanitizer|runtime error:", ln)]
            for i in shown[:5]:
                print("\n".join(lines[i:i + 13]))
            print(f"FAIL: {d}/{p} under ASan+UBSan+LSan: exit {rc}")
            bad += 1
        else:
            print(f"clean: {d}/{p} (exit {rc})")
    if bad:
        raise Fail(f"{bad} sanitizer build or run failures")


def pmqtest_faults(c: Check) -> None:
    """pmqtest's checks fail on the bugs they name (strace fault
    injection); an explicit SKIP when strace cannot trace here."""
    c.need("strace")
    c.script([os.path.join(c.top, "pmqtest", "inject_faults.sh")],
             "a pmqtest check missed its injected fault")


def ab_runner(c: Check) -> None:
    """run_all.sh --repeat / --vs-prefix and the seccomp wrapper: layout
    of the repeated JSON, the A/B stream and its comparison, bad
    usage."""
    wrap = c.path("seccomp_wrap")
    for cc in ("gcc", "clang"):
        c.must([cc, "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                f"{wrap}.{cc}", os.path.join(c.top, "tests",
                                             "seccomp_wrap.c")],
               f"seccomp_wrap: {cc} build")
    shutil.copy(f"{wrap}.gcc", wrap)
    c.must([wrap, "-n", "5", "true"], "seccomp_wrap -n 5 true")
    if "ratio=" not in c.output([wrap, "-n", "5", "--measure"],
                                "seccomp_wrap --measure"):
        raise Fail("seccomp_wrap --measure")
    for bad in ("-n x true", "-n 99999 true", "", "--bogus"):
        rc = c.run([wrap, *bad.split()], out=os.devnull)
        if rc != 2:
            raise Fail(f"seccomp_wrap {bad}: exit {rc}, want 2")
    for bad in ("--repeat 0", "-r x", "--vs-prefix=",
                "--vs-prefix no-such-cmd", "--fail-above 5",
                "--vs-kernel debian-6.1", "--vs-prefix env --fail-above x",
                "--kernel debian-6.1 --vs-kernel debian-6.12 --vs-kernel=",
                "--base-prefix env",
                "--vs-prefix env --base-prefix no-such-cmd"):
        rc = collection.run(["--no-build", *bad.split()], log=os.devnull)
        if rc != 2:
            raise Fail(f"run_all.sh {bad}: exit {rc}, want 2")
    out, d = c.path("ab.ktap"), c.path("ab")
    rc = c.collection(["--no-build", "-t", "syscall_overhead", "--repeat",
                       "2", "--vs-prefix", f"{wrap} -n 5", "--json", d], out,
                      env=dict(os.environ, KSELFTEST_SYSCALL_OVERHEAD_ARGS=(
                          "-i 50 -t getpid,getppid")))
    cat(out)
    if rc != 0:
        raise Fail("run_all.sh --vs-prefix exited non-zero")
    c.ktap_clean(out, "KTAP check of the A/B stream failed")
    for pattern, failure in (
            (r"^1\.\.4$", "plan is not 2 sides x 2 repetitions"),
            (r"^ok 2 .*\(candidate, repetition 1 of 2\)$",
             "no candidate result in second place"),
            (r"^ok 3 .*\(candidate, repetition 2 of 2\)$",
             "repetition 2 does not start with the candidate (ABBA)"),
            (r"^#   getppid .* no-verdict",
             "no comparison table (or a verdict from 2 repetitions)")):
        if not grep(out, pattern):
            raise Fail(failure)
    from kbtools import compare
    entries = compare.comparison(compare.Request(
        [os.path.join(d, "base"), os.path.join(d, "candidate")])).entries
    if not entries or any(e.n_base != 2 for e in entries
                          if e.n_base is not None):
        raise Fail("repetitions not kept")
    if not grep(os.path.join(d, "candidate", "syscall_overhead.json"),
                r'"repeat": 2'):
        raise Fail("no repeat key in the merged JSON")
    # In a guest no python3 runs: it runs the host's plan
    # (runner.guest_plan) with scripts/guest/run_plan.sh and leaves the
    # repetitions for the host (kbtools.vm), which merges them as above.
    nopython, calls = c.path("nopython"), c.path("python3-calls")
    os.makedirs(nopython, exist_ok=True)
    with open(os.path.join(nopython, "python3"), "w") as f:
        f.write(f'#!/bin/sh\necho "python3 $*" >>"{calls}"\nexit 99\n')
    os.chmod(os.path.join(nopython, "python3"), 0o755)
    guest, plan_file = c.path("guest"), c.path("guest.plan")
    os.makedirs(guest, exist_ok=True)
    from kbtools import runner
    with open(plan_file, "w", encoding="utf-8") as f:
        f.write(runner.guest_plan(
            ["-t", "syscall_overhead", "--repeat", "2", "--vs-prefix",
             f"{wrap} -n 5"], {"KSELFTEST_SYSCALL_OVERHEAD_ARGS":
                               "-i 50 -t getpid,getppid"},
            collection.programs(["syscall_overhead"]), guest, "run_all.sh"))
    rc = c.run([os.path.join(c.top, "scripts", "guest", "run_plan.sh"),
                c.top, plan_file], out=c.path("guest.ktap"), env=dict(
                    os.environ, PATH=f"{nopython}:{os.environ['PATH']}"))
    if rc != 0:
        raise Fail("the guest's plan (run_plan.sh) exited non-zero")
    if os.path.exists(calls):
        raise Fail(f"python3 ran: {tail(calls, 5)}")
    if not os.path.isfile(os.path.join(guest, "repetitions", "candidate",
                                       "2", "syscall_overhead.json")):
        raise Fail("no repetitions left for the host")
    from kbtools import results
    try:
        results.merge_repetitions(guest, True)
    except (results.ResultError, OSError) as e:
        raise Fail(f"the host could not merge the guest's repetitions: "
                   f"{e}") from e
    if not grep(os.path.join(guest, "candidate", "syscall_overhead.json"),
                r'"repeat": 2'):
        raise Fail("no repeat key in the JSON merged on the host")


def bisect_tool(c: Check) -> None:
    """kbench bisect without kernel builds: usage, state and --resume,
    the tree left on its branch, the decisions on recorded boots; the
    demo's usage. The end-to-end check is scripts/bisect_demo.sh (not
    here: it builds and boots kernels for ~30 min)."""
    c.need("python3", "git")
    tests = os.path.join(c.top, "tests")
    c.must(["python3", "-m", "unittest", "discover", "-s", tests, "-p",
            "test_bisect.py", "-t", tests, "-v"], "tests/test_bisect.py failed")
    from kbtools import bisect_demo
    rc = c.task(bisect_demo.main, ["--only", "nothing"], "bisect_demo.sh")
    if rc != 2:
        raise Fail(f"bisect_demo.sh --only nothing: exit {rc}, want 2")
    with contextlib.redirect_stdout(io.StringIO()) as said:
        rc = c.task(bisect_demo.main, ["--help"], "bisect_demo.sh")
    if rc != 0 or "no-change" not in said.getvalue():
        raise Fail("bisect_demo.sh --help")


def fuzz_short(c: Check) -> None:
    """The libFuzzer harnesses of fuzz/, each in its two builds (clang,
    ASan+UBSan and MSan), replay every committed seed once and nothing
    else (fuzz/run.sh --replay): the same inputs on every machine,
    whatever the compiler makes of the coverage; make fuzz explores. A
    seed that fails fails the step, named with the command that
    reproduces it. A clang without the libFuzzer or MSan runtime fails
    the step: it is not a pass."""
    out = os.path.join(c.top, "fuzz", "build")
    c.need("clang", "make")
    probe = c.path("probe.c")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("int LLVMFuzzerTestOneInput(const char *d, long n) "
                "{ return 0; }\n")
    for san in ("address,undefined", "memory"):
        if c.run(["clang", f"-fsanitize=fuzzer,{san}", "-o",
                  c.path("probe"), probe]) != 0:
            raise Fail(f"clang cannot link libFuzzer with -fsanitize={san} "
                       "(apt-get install "
                       f"{c.note_missing('libclang-rt-14-dev')})")
    c.must(["make", "-s", "-C", os.path.join(c.top, "fuzz"), f"OUT={out}",
            "all"], "cannot build the fuzz harnesses")
    c.must([os.path.join(c.top, "fuzz", "run.sh"), "-o", out, "--replay",
            "options", "proc_stat", "cgroup", "netlink"],
           "a committed seed fails a harness (reproducer above)")


def python_properties(c: Check) -> None:
    """Property-based tests (hypothesis) of every Python reader with
    Debian's python3: any input gives a result or a one-line error. A
    missing hypothesis fails the step; a skipped test fails it too.
    Derandomized (KBENCH_FUZZ_MODE=check): the committed @example()s,
    then examples that follow from each property's source, with one hash
    seed (a reader that depends on the order of a set fails every time or
    never), so one commit always gets one verdict; make fuzz explores
    (fuzz/properties.sh)."""
    py = "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        raise Fail(f"no {py} (Debian's python3)")
    if not proc.succeeds([py, "-c", "import hypothesis"]):
        raise Fail("hypothesis is missing (apt-get install "
                   f"{c.note_missing('python3-hypothesis')})")
    log = c.path("properties.log")
    c.run([py, "-m", "unittest", "discover", "-v", "-s", ".", "-p",
           "test_fuzz_*.py"], cwd=os.path.join(c.top, "tests"), out=log,
          both=True,
          env=dict(os.environ, KBENCH_FUZZ_MODE="check", PYTHONHASHSEED="0"))
    cat(log)
    if not grep(log, r"^OK"):
        raise Fail("a property does not hold (falsifying example above)")
    if grep(log, "skipped"):
        raise Fail("a property test was skipped")


def kcidb_export(c: Check) -> None:
    """The KCIDB exporter: its tests with kcidb-io itself (from PyPI into
    a venv of the collection's cache), then a short real run exported
    and validated. A missing kcidb-io fails the step rather than
    skipping it."""
    c.need("python3")
    venv = os.path.join(paths.cache_dir(), "venv-kcidb")
    python = os.path.join(venv, "bin", "python")
    if not proc.succeeds([python, "-c", "import kcidb_io"]):
        c.must(["python3", "-m", "venv", venv],
               f"cannot create {venv} (python3-venv)")
        c.must([os.path.join(venv, "bin", "pip"), "install", "-q",
                "kcidb-io"], f"cannot install kcidb-io from PyPI into {venv}")
    c.must([python, "-m", "unittest", "-v", "test_kcidb"], "test_kcidb failed",
           cwd=os.path.join(c.top, "tests"),
           env=dict(os.environ, KBENCH_REQUIRE_KCIDB_IO="1"))
    out, doc = c.path("kcidb"), c.path("kcidb.json")
    if c.collection(["--no-build", "-t", "syscall_overhead,taskstats",
                     "--json", out], os.devnull, env=dict(
                         os.environ,
                         KSELFTEST_SYSCALL_OVERHEAD_ARGS="-i 50")) != 0:
        raise Fail("run_all.sh --json failed")
    ktap = os.path.join(out, "run_all.ktap")
    if not (os.path.isfile(ktap) and os.path.getsize(ktap)):
        raise Fail("run_all.sh --json kept no run_all.ktap")
    c.must([python, paths.script("scripts/kcidb.py"), "--validate", "-o",
            doc, out], "kcidb.py could not export a real run")
    for path, what in (("kbench.syscall_overhead.getsid",
                        "syscall_overhead's getsid"),
                       ("kbench.taskstats.family_resolves",
                        "taskstats' checks from the KTAP stream")):
        if not grep(doc, f'"path": "{re.escape(path)}"'):
            raise Fail(f"the export lacks {what}")
    with open(doc, encoding="utf-8") as f:
        count = f.read().count('"build_id"')
    print(f"kcidb.py: {count} tests exported and valid")


def report_in_browser(c: Check) -> None:
    """The HTML report of a small run and of an A/B run, opened in
    headless Chromium: no console error, every plot drawn, a known row on
    the page. Screenshots stay in $KBENCH_ARTIFACTS (default: the step's
    work dir)."""
    from kbtools import browser, plots
    d = c.path("report")
    shots = os.environ.get("KBENCH_ARTIFACTS") or d
    os.makedirs(d, exist_ok=True)
    os.makedirs(shots, exist_ok=True)
    if not plots.available():
        raise Skip("missing matplotlib "
                   f"({c.note_missing('python3-matplotlib')})")
    c.need("chromium")

    def page(path: str, **checks: object) -> browser.Page:
        try:
            return browser.check_page(path, **checks)  # type: ignore
        except cli.Failure as e:
            raise Fail(str(e)) from e
    # The check itself must be able to fail: a missing resource, a
    # console error, an empty plot, a plot too many and a missing text.
    bad = os.path.join(d, "bad.html")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('<!DOCTYPE html><html><body><img src="missing.png">\n'
                '<script>console.error("broken")</script>\n'
                '<svg width="90" height="90"></svg></body></html>\n')
    failed = page(bad, plots=2, texts=["getppid"]).failed
    if len(failed) != 5:
        raise Fail(f"the browser check missed a problem: {failed}")
    env = dict(os.environ, KSELFTEST_PMQTEST_ARGS="--histogram=100")
    run, html = os.path.join(d, "run"), os.path.join(d, "run.html")
    ktap = os.path.join(d, "run.ktap")
    if c.collection(["--no-build", "-t", "syscall_overhead,pmqtest",
                     "--json", run, "--report", html], ktap, env=env) != 0:
        raise Fail(f"run_all.sh --report failed: {tail(ktap, 3)}")
    if not grep(ktap, f"^# report: {re.escape(html)}"):
        raise Fail("no report line in the KTAP")
    # syscall_overhead's rows; pmqtest's histogram and percentiles.
    shown = page(html, plots=3, texts=["getppid", "latency_pair0"],
                 screenshot=os.path.join(shots, "report-run.png"))
    print("\n".join(shown.failed))
    if shown.failed:
        raise Fail("the report of a run is not right in the browser")
    ab, ab_html = os.path.join(d, "ab"), os.path.join(d, "ab.html")
    ab_ktap = os.path.join(d, "ab.ktap")
    if c.collection(["--no-build", "-t", "pmqtest", "--vs-prefix", "env",
                     "-r", "2", "--json", ab, "--report", ab_html], ab_ktap,
                    env=env) != 0:
        raise Fail("run_all.sh --vs-prefix --report failed: "
                   f"{tail(ab_ktap, 3)}")
    # The forest plot, each side's histogram, the percentiles of both.
    shown = page(ab_html, plots=4,
                 texts=["latency_pair1", "Every compared row"],
                 screenshot=os.path.join(shots, "report-ab.png"))
    print("\n".join(shown.failed))
    if shown.failed:
        raise Fail("the A/B report is not right in the browser")
    # kbench series' page of a recorded run (tests/data/series/steps):
    # the rows that moved, exact wording, no sideways scroll at 1,300 px.
    from kbtools import series
    state, series_html = os.path.join(d, "series"), os.path.join(
        d, "series.html")
    shutil.copytree(os.path.join(c.top, "tests", "data", "series", "steps"),
                    state)
    rc = c.task(series.main, ["--resume", "--state", state, "--report",
                              series_html], "kbench series")
    if rc != 0:
        raise Fail(f"kbench series on a recorded run failed (exit {rc})")
    shown = page(series_html, plots=0, fits=True, width=1300,
                 texts=["instructions per operation", "msgsnd_rcv"],
                 screenshot=os.path.join(shots, "series.png"))
    print("\n".join(shown.failed))
    if shown.failed:
        raise Fail("the series page is not right in the browser")
    # Its cells' A/B pages: ksys_msgsnd's two nops read slower (exact).
    step_page = "series-ab/3-6aa810902329.html"
    if not grep(series_html, re.escape(f'href="{step_page}"')):
        raise Fail("the series page does not link its commits' A/B pages")
    shown = page(os.path.join(d, step_page), plots=2, fits=True, width=1300,
                 texts=["slower (exact)"],
                 screenshot=os.path.join(shots, "series-ab.png"))
    print("\n".join(shown.failed))
    if shown.failed:
        raise Fail("a series' A/B page is not right in the browser")
    from kbtools import report
    # The one-instruction A/B of that run (its base against the getppid
    # nop): the exact rule's words and plot, no sideways scroll.
    boots = os.path.join(c.top, "tests", "data", "series", "steps", "boots")
    exact_html = os.path.join(d, "exact-ab.html")
    try:
        report.write(exact_html, [
            os.path.join(boots, "37f4b1112799ed725be5a06850037c76c8ee4901"),
            os.path.join(boots, "1d1d872998e704078ac4525322edc6a1a21ee0c0")])
    except (report.ReportError, cli.Failure) as e:
        raise Fail(f"the exact A/B page failed: {e}") from e
    shown = page(exact_html, plots=2, fits=True, width=1300,
                 texts=["guest instructions per operation",
                        "one boot per side"],
                 screenshot=os.path.join(shots, "exact-ab.png"))
    print("\n".join(shown.failed))
    if shown.failed:
        raise Fail("the exact A/B page is not right in the browser")
    try:
        report.write(bad, [os.path.join(run, "syscall_overhead.json"),
                           os.path.join(ab, "base", "pmqtest.json")])
    except report.ReportError as e:
        if "different tests" not in str(e):
            raise Fail(f"unclear message: {e}") from e
    else:
        raise Fail("the report compared runs of different tests")
    print(f"reports checked in chromium; screenshots in {shots}")


def lava_parser(c: Check) -> None:
    """The LAVA translation (KTAP + JSON -> lava-test-case) and job
    generator."""
    c.need("python3")
    tests = os.path.join(c.top, "tests")
    c.must(["python3", "-m", "unittest", "discover", "-s", tests, "-p",
            "test_lava.py", "-t", tests, "-v"], "tests/test_lava.py failed")


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
          "--inh-caps=-all"]


def collection_as_nobody(c: Check) -> None:
    """nobody cannot be assumed to read the clone: a copy in the step's
    directory, built and run as nobody, its KTAP as strict as root's."""
    c.need("git", "setpriv:util-linux", "python3")
    copy = c.path("nobody")
    out = c.path("nobody.ktap")
    # The harness and nolibc only, at their places in a tree (lib.mk
    # finds the tree's top from its own real path).
    sel = os.path.join(copy, "ksrc", "tools", "testing", "selftests")
    os.makedirs(sel)
    for name in ("lib.mk", "kselftest.h", "kselftest_harness.h",
                 "kselftest"):
        src = os.path.join(c.ksft, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(sel, name), symlinks=True)
        else:
            shutil.copy2(src, sel)
    # proc_create's exec helper is built on the tree's nolibc.
    shutil.copytree(os.path.join(c.ksrc, "tools", "include", "nolibc"),
                    os.path.join(copy, "ksrc", "tools", "include", "nolibc"),
                    symlinks=True)
    kbench = os.path.join(copy, "kbench")
    c.copy_project(kbench)
    ksrc = os.path.join(copy, "ksrc")
    c.must(["make", "-s", "-C", kbench, f"KSRC={ksrc}", "all"],
           "cannot build the collection's copy")
    c.must(["chmod", "-R", "a+rX", copy], "cannot open the copy to nobody")
    json_dir, tmp = os.path.join(copy, "json"), os.path.join(copy, "tmp")
    os.mkdir(json_dir)
    os.chmod(json_dir, 0o777)
    # A temporary directory of its own: the caller's TMPDIR may be root's.
    os.mkdir(tmp)
    os.chmod(tmp, 0o1777)
    rc = c.run([*NOBODY, os.path.join(kbench, "run_all.sh"), "--no-build",
                "--json", json_dir], cwd=copy, out=out,
               env=dict(os.environ, TMPDIR=tmp, KSRC=ksrc))
    cat(out)
    if rc != 0:
        raise Fail(f"run_all.sh as nobody exited {rc}")
    c.ktap_clean(out, "KTAP check failed")


def in_tree(c: Check, version: str) -> None:
    """The collection inside a kernel tree's selftests: every program
    must run (plain ok) under run_tests and the installed
    run_kselftest.sh."""
    c.need("git", "rsync")
    sel = place_in_tree(c, version)
    out = c.path(f"intree-{version}.txt")
    rc = c.run(["make", "-C", sel, "TARGETS=kbench", "run_tests"], out=out,
               both=True)
    c.every_program_ran(rc, out, "in-tree run_tests")
    inst = c.path(f"install-{version}")
    c.must(["make", "-C", sel, "TARGETS=kbench", "install",
            f"INSTALL_PATH={inst}"],
           "in-tree install of every kbench test failed", out=os.devnull)
    listing = c.output([os.path.join(inst, "run_kselftest.sh"), "-l"],
                       "run_kselftest.sh -l failed")
    print(listing, end="")
    # As result lines, so that the one matcher checks the list too.
    with open(out + ".list", "w", encoding="utf-8") as f:
        f.write("".join(re.sub(r"^(.*):(.*)$", r"ok 1 selftests: \1: \2",
                               line) + "\n"
                        for line in listing.splitlines()))
    if not c.every_program_ok(out + ".list"):
        raise Fail("run_kselftest.sh -l does not list every program")
    rc = c.run([os.path.join(inst, "run_kselftest.sh")], out=out,
               both=True)
    c.every_program_ran(rc, out, "run_kselftest.sh")


def in_tree_6_12(c: Check) -> None:
    in_tree(c, "6.12")


def in_tree_6_1(c: Check) -> None:
    in_tree(c, "6.1")


def llvm_gen_tar(c: Check) -> None:
    """What KernelCI builds: clang (LLVM=1), an out-of-tree O= directory
    and the gen_tar tarball, whose run_kselftest.sh must run every
    program."""
    c.need("git", "clang", "llvm-ar:llvm", "ld.lld:lld", "readelf:binutils")
    sel = place_in_tree(c, "6.12")
    o, log = c.path("llvm-out"), c.path("llvm.log")
    if c.run(["make", "-C", sel, "LLVM=1", f"O={o}", "TARGETS=kbench",
              "gen_tar"], out=log, both=True) != 0:
        print(proc.tail(log, 40), end="")
        raise Fail("LLVM=1 O= gen_tar failed")
    with open(log, encoding="utf-8", errors="replace") as f:
        made = re.findall(r"(?m)^Created (.*)$", f.read())
    tarball = made[-1] if made else ""
    if not os.path.isfile(tarball):
        raise Fail(f"gen_tar named no tarball: {tail(log, 3)}")
    print(f"tarball: {os.path.relpath(tarball, o)}")
    unpacked = c.path("llvm-tar")
    os.makedirs(unpacked)
    c.must(["tar", "-xf", tarball, "-C", unpacked], "cannot unpack it")
    comment = c.output(["readelf", "-p", ".comment", os.path.join(
        unpacked, "kbench", "syscall_overhead", "syscall_overhead")],
        "readelf failed")
    if "clang version" not in comment:
        raise Fail("syscall_overhead was not built by clang")
    out = c.path("llvm-run.txt")
    rc = c.run(["./run_kselftest.sh"], cwd=unpacked, out=out, both=True)
    c.every_program_ran(rc, out, "the tarball's run_kselftest.sh")


# ---- the table and its run --------------------------------------------------

STEPS: Tuple[Step, ...] = (
    Step("build_collection", build_collection),
    Step("config_is_union", config_is_union),
    Step("package_list", package_list),
    Step("shellcheck", shellcheck),
    Step("lint_python", lint_python),
    Step("mypy", mypy),
    Step("checkpatch", checkpatch),
    Step("unit_c", unit_c),
    Step("unit_python", unit_python),
    Step("unit_python_bare_path", unit_python_bare_path),
    Step("collection_as_root", collection_as_root),
    Step("names_unchanged", names_unchanged),
    Step("bad_usage", bad_usage),
    Step("sigterm_leftovers", sigterm_leftovers),
    Step("run_all_sigterm", run_all_sigterm),
    Step("sanitizers", sanitizers),
    Step("pmqtest_faults", pmqtest_faults),
    Step("ab_runner", ab_runner),
    Step("bisect_tool", bisect_tool),
    Step("fuzz_short", fuzz_short),
    Step("python_properties", python_properties),
    Step("kcidb_export", kcidb_export),
    Step("report_in_browser", report_in_browser),
    Step("lava_parser", lava_parser),
    Step("cross_arm64", cross_arm64, "full"),
    Step("cross_i386", cross_i386, "full"),
    Step("collection_as_nobody", collection_as_nobody, "full"),
    Step("in_tree_6_12", in_tree_6_12, "full"),
    Step("in_tree_6_1", in_tree_6_1, "full"),
    Step("llvm_gen_tar", llvm_gen_tar, "full"),
    Step("vm_debian_6_1", vm_debian_6_1, "vm"),
    Step("ab_boot_retry", ab_boot_retry, "vm"),
    Step("i386_host_run", i386_host_run, "vm"),
    Step("lava_lab", lava_lab, "vm"),
    Step("lava_series", lava_series, "testkernel"),
    Step("vm_arm64_6_12", vm_arm64_6_12, "arm64"),
    Step("vm_arm64_icount_aa", vm_arm64_icount_aa, "arm64"),
    Step("vm_repeat_layout", vm_repeat_layout, "vm"),
    Step("icount_aa", icount_aa, "testkernel"),
    Step("icount_ab", icount_ab, "testkernel"),
    Step("icount_validate", icount_validate, "testkernel"),
    Step("icount_where", icount_where, "testkernel"),
    Step("testkernel_patched", testkernel_patched, "testkernel"),
    Step("testkernel_i386", testkernel_i386, "testkernel"),
)


def steps_of(runs: Set[str]) -> List[Step]:
    """The table's steps of a run with these options ("full" unless
    --quick; "vm" with --vm, "arm64" with --vm or --arm64, "testkernel"
    with --testkernel)."""
    return [s for s in STEPS if s.when in runs]


def main(argv: Sequence[str], prog: str = "kbench check") -> int:
    """make check, make check-all (--vm --testkernel): 0 every step
    passed or skipped, 1 one failed, 2 bad usage."""
    ap = cli.UsageParser(prog=prog, help_text=USAGE.format(prog=prog))
    for option in ("--quick", "--vm", "--arm64", "--testkernel"):
        ap.add_argument(option, action="store_true")
    ap.add_argument("only", nargs="*", metavar="STEP")
    a = ap.parse_args(list(argv))
    runs = {""} | ({""} if a.quick else {"full"})
    runs |= {"vm", "arm64"} if a.vm else set()
    runs |= {"arm64"} if a.arm64 else set()
    runs |= {"testkernel"} if a.testkernel else set()
    steps = steps_of(runs)
    names = [s.name for s in steps]
    for want in a.only:
        if want not in names:
            ap.error(f"no step '{want}' (steps: {' '.join(names)})")
    if packages.other_python(sys.executable) and packages.debian_python():
        # The steps that run in this process (plots, reports, LAVA's
        # YAML) want Debian's python3-* packages too.
        msg(prog, f"running with Debian's {packages.DEBIAN_PYTHON}, not "
            f"{sys.executable}")
        sys.stdout.flush()
        os.execve(packages.DEBIAN_PYTHON, [
            packages.DEBIAN_PYTHON, os.path.join(paths.TOP, "kbench"),
            "check", *argv], dict(os.environ, KBENCH_PROG=prog))
    work = tempfile.mkdtemp(prefix="kbench-check.",
                            dir=os.environ.get("TMPDIR") or "/tmp")
    os.chmod(work, 0o755)
    # Every step's python3 is the one setup.sh installed packages for.
    path = os.environ.get("PATH", "")
    said = packages.debian_python_first(os.path.join(work, "python"))
    if said:
        msg(prog, said)
    try:
        with proc.stop_on_signals():
            return run_steps(Check(paths.TOP, work), steps, a.only)
    except proc.Interrupted:
        msg(prog, "interrupted")
        return cli.EXIT_INTERRUPTED
    finally:
        os.environ["PATH"] = path
        shutil.rmtree(work, ignore_errors=True)
