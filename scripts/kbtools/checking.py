# SPDX-License-Identifier: GPL-2.0
"""What the steps of kbench check share (kbtools.check holds the table):
a step is a function of its Check (the clone, a scratch directory, the
provisioned kernel tree, the helpers every step uses); it returns (a
pass), raises Skip (a missing tool, named with its Debian package) or
Fail. run_steps() runs a table of them as KTAP, each step's output (its
own and its children's) in its log and shown behind '# ', each timed.
"""

import contextlib
import dataclasses
import os
import re
import shutil
import signal
import sys
import time
import traceback
from typing import (Any, Callable, ContextManager, Dict, Iterator, List,
                    Optional, Sequence, Set, Tuple, TypeVar)

from kbtools import cli, collection, packages, paths, proc

# Lines of a step's log shown after its result; failure lines first.
TAIL = 40
FAILURE_LINE = re.compile(r"^[\s#]*not ok|^FAIL")

T = TypeVar("T")


class Skip(Exception):
    """The step cannot run here: why (a missing tool and its package)."""


class Fail(Exception):
    """The step failed: what failed."""


@dataclasses.dataclass(frozen=True)
class Step:
    """One step: its name (the KTAP result's), its function, and the run
    that includes it ("" always; "full": not with --quick; "vm", "arm64",
    "testkernel": only with that option)."""
    name: str
    run: Callable[["Check"], None]
    when: str = ""


class Check:
    """One run of the steps: the clone, a scratch directory, the kernel
    tree with the kselftest harness, the packages missing tools named."""

    def __init__(self, top: str, work: str):
        self.top = top
        self.work = work
        self.missing: List[str] = []
        self.plist = packages.load(os.path.join(top, "packages.txt"))
        self._ksrc = ""
        # The steps of the run not started yet (run_steps keeps it), and
        # what steps share: {name: (its exit stack, its value)}.
        self.pending: Set[str] = set()
        self._held: Dict[str, Tuple[contextlib.ExitStack, Any]] = {}

    # ---- what every step may use ------------------------------------

    @property
    def ksrc(self) -> str:
        """The provisioned 6.12 tree (kbtools.ksrc), once."""
        if not self._ksrc:
            self._ksrc = self.tree("6.12")
        return self._ksrc

    @property
    def ksft(self) -> str:
        return os.path.join(self.ksrc, "tools", "testing", "selftests")

    def tree(self, version: str) -> str:
        from kbtools import ksrc
        try:
            return ksrc.provision(paths.cache_dir(), version, "check")
        except ksrc.SourceMissing as e:
            raise Fail(f"cannot provision the {version} tree: {e}") from e

    def path(self, *parts: str) -> str:
        return os.path.join(self.work, *parts)

    @contextlib.contextmanager
    def shared(self, name: str, users: Sequence[str],
               make: Callable[[], ContextManager[T]]) -> Iterator[T]:
        """make()'s context (a LAVA lab), one for the steps USERS: entered
        by the first of them that runs, left at the end of the block of
        the last one the run holds (a failure to leave it is that step's),
        or by release_held when the run ends before it."""
        if name not in self._held:
            stack = contextlib.ExitStack()
            self._held[name] = (stack, stack.enter_context(make()))
        stack, value = self._held[name]
        try:
            yield value
        finally:
            if self.pending.isdisjoint(users):
                del self._held[name]
                stack.close()

    def has_held(self) -> bool:
        return bool(self._held)

    def release_held(self) -> List[str]:
        """Leave what the steps still share (a run interrupted, or whose
        last user of it did not reach its block): the failures."""
        failed = []
        while self._held:
            name, (stack, _) = self._held.popitem()
            try:
                stack.close()
            except (Fail, cli.Failure, proc.Failed, OSError) as e:
                failed.append(f"{name}: {e}")
        return failed

    def need(self, *commands: str) -> None:
        """Skip the step naming each missing COMMAND[:PACKAGE] and the
        package of packages.txt that has it (a PACKAGE given must be that
        one: the list decides)."""
        missing = []
        for c in commands:
            cmd, _, pkg = c.partition(":")
            p = self.plist.package_of(cmd)
            if p is None:
                raise Fail(f"need {c}: no package of packages.txt has {cmd}")
            if pkg and pkg != p.name:
                raise Fail(f"need {c}: packages.txt has {cmd} in {p.name}")
            if shutil.which(cmd) is None:
                missing.append(f"{cmd} ({p.name})")
                self.missing.append(p.name)
        if missing:
            raise Skip(f"missing {' '.join(missing)}")

    def note_missing(self, package: str) -> str:
        """PACKAGE (of packages.txt) for the install line at the end."""
        if self.plist.get(package) is None:
            raise Fail(f"{package} is not in packages.txt")
        self.missing.append(package)
        return package

    def run(self, cmd: Sequence[str], *, cwd: Optional[str] = None,
            env: Optional[Dict[str, str]] = None,
            out: Optional[str] = None, both: bool = False,
            timeout: Optional[float] = None) -> int:
        """cmd's exit status; its output in the step's log, or its stdout
        in the file out (its stderr too with both, else in the log after
        it ended)."""
        sys.stdout.flush()
        if out is None or both or out == os.devnull:
            return proc.run(cmd, cwd=cwd, env=env, log=out, timeout=timeout)
        err = out + ".err"
        try:
            return proc.run(cmd, cwd=cwd, env=env, log=out, err_log=err,
                            timeout=timeout)
        finally:
            cat(err)

    @staticmethod
    def task(main: Callable[[Sequence[str], str], int], argv: Sequence[str],
             prog: str) -> int:
        """A task's exit status (kbtools' main(argv, prog)) run in this
        process, as its script would end: a SystemExit's code
        included."""
        try:
            rc = main(argv, prog)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        # A task stops on a signal itself (its own stop_on_signals) and
        # says so: the run of the steps stops with it.
        if rc == cli.EXIT_INTERRUPTED:
            stop = proc.Interrupted(signal.SIGTERM)
            stop.said = True
            raise stop
        return rc

    def must(self, cmd: Sequence[str], failure: str, **kw: object) -> None:
        """Run cmd; Fail(failure) unless it exits 0."""
        if self.run(cmd, **kw) != 0:  # type: ignore[arg-type]
            raise Fail(failure)

    def collection(self, argv: Sequence[str], out: str,
                   env: Optional[Dict[str, str]] = None) -> int:
        """run_all.sh ARGV (kbtools.collection): its KTAP into out, its
        messages into the step's log."""
        sys.stdout.flush()
        err = self.path("collection.err")
        try:
            return collection.run(argv, log=out, err_log=err, env=env)
        finally:
            cat(err)

    def script(self, cmd: Sequence[str], failure: str,
               env: Optional[Dict[str, str]] = None) -> None:
        """A test script's verdict as the step's: 0 passes, 4 skips (its
        last line says why), anything else fails."""
        out = self.path("script.out")
        rc = self.run(cmd, out=out, both=True, env=env)
        cat(out)
        if rc == 4:
            with open(out, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            raise Skip(lines[-1] if lines else "skipped")
        if rc != 0:
            raise Fail(f"{failure} (exit {rc})")

    def output(self, cmd: Sequence[str], failure: str,
               cwd: Optional[str] = None) -> str:
        """cmd's stdout; Fail(failure) unless it exits 0."""
        rc, out = proc.output(cmd, cwd=cwd)
        if rc != 0:
            raise Fail(failure)
        return out

    def programs(self) -> List[Tuple[str, str]]:
        """(DIR, PROGRAM) of every program of the collection; never
        empty."""
        try:
            listed = collection.programs(collection.tests())
        except cli.Failure as e:
            raise Fail(str(e)) from e
        if not listed:
            raise Fail("the collection lists no program")
        return [(p.split(":", 1)[0], p.split(":", 1)[1]) for p in listed]

    def project_files(self, pattern: str) -> List[str]:
        """The project's files named PATTERN (tracked and new, not
        ignored: not .cache/, out/, build/ or .git/), links left out (an
        old name's link is its file again, README.md: Layout)."""
        return [f for f in (os.path.join(self.top, n)
                            for n in self.project_ls(pattern))
                if not os.path.islink(f) and os.path.isfile(f)]

    def project_ls(self, *patterns: str) -> List[str]:
        """git ls-files of the project, relative to the clone. A copy
        without .git (an unpacked tarball) gets git's ignore rules from a
        scratch repository of its own."""
        repo: List[str] = []
        if not proc.succeeds(["git", "-C", self.top, "rev-parse",
                              "--is-inside-work-tree"]):
            bare = self.path("no-clone.git")
            if not os.path.isdir(bare):
                proc.capture(["git", "init", "-q", "--bare", bare])
            repo = [f"--git-dir={bare}", f"--work-tree={self.top}"]
        out = proc.capture(["git", "-C", self.top, *repo, "ls-files", "-z",
                            "--cached", "--others", "--exclude-standard",
                            "--", *patterns])
        return sorted(n for n in out.split("\0") if n)

    def copy_project(self, dest: str) -> None:
        """The project's files into dest (as git knows them)."""
        os.makedirs(dest, exist_ok=True)
        for name in self.project_ls():
            src = os.path.join(self.top, name)
            to = os.path.join(dest, name)
            os.makedirs(os.path.dirname(to), exist_ok=True)
            if os.path.islink(src):
                os.symlink(os.readlink(src), to)
            elif os.path.isfile(src):
                shutil.copy2(src, to)

    def ktap_clean(self, path: str, what: str,
                   skip_reasons: bool = True) -> None:
        """The strict KTAP check of path (kbtools.ktap, as
        ktap_check.py --no-fail [--skip-reasons]); Fail(what) when it
        finds problems (listed)."""
        from kbtools import ktap
        errors = ktap.check(ktap.read(path), no_fail=True,
                            skip_reasons=skip_reasons)
        for e in errors:
            print(f"ktap_check.py: {e}")
        if errors:
            raise Fail(what)

    def every_program_ran(self, rc: int, out: str, what: str) -> None:
        """A run of the collection (WHAT, its exit status RC, its output
        in the file OUT, shown): Fail unless it exited 0 and every
        program has its plain 'ok' there."""
        cat(out)
        if rc != 0:
            raise Fail(f"{what} exited {rc}")
        if not self.every_program_ok(out):
            raise Fail(f"{what} did not run every program")

    def every_program_ok(self, path: str) -> bool:
        """Each program has a plain 'ok' (no SKIP, no directive) in
        path, as run_tests and run_kselftest.sh print it."""
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        bad = False
        for d, p in self.programs():
            if re.search(rf"^ok [0-9]+ selftests: kbench/{re.escape(d)}: "
                         rf"{re.escape(p)}$", text, re.M):
                print(f"ran: kbench/{d}: {p}")
            else:
                print(f"FAIL: no plain 'ok' for kbench/{d}: {p} in "
                      f"{os.path.basename(path)}")
                bad = True
        return not bad


def cat(path: str) -> None:
    """A file's text on the step's output."""
    with open(path, encoding="utf-8", errors="replace") as f:
        sys.stdout.write(f.read())
    sys.stdout.flush()


def grep(path: str, pattern: str) -> bool:
    """A line of the file at path matches pattern (a regular expression
    searched line by line)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return any(re.search(pattern, line) for line in f)


def tail(path: str, lines: int) -> str:
    """A file's last lines, on one line."""
    return " ".join(proc.tail(path, lines).split("\n")).strip()


def place_in_tree(c: Check, version: str) -> str:
    """A private copy of the provisioned tree (another run may use the
    cached one at the same time) with the clone at
    tools/testing/selftests/kbench; that selftests directory."""
    tree = c.tree(version)
    copy = c.path(f"tree-{version}")
    shutil.rmtree(copy, ignore_errors=True)
    os.makedirs(copy)
    shutil.copy2(os.path.join(tree, "Makefile"), copy)
    for d in ("scripts", "tools"):
        shutil.copytree(os.path.join(tree, d), os.path.join(copy, d),
                        symlinks=True)
    sel = os.path.join(copy, "tools", "testing", "selftests")
    c.copy_project(os.path.join(sel, "kbench"))
    return sel


@contextlib.contextmanager
def output_to(path: str) -> Iterator[None]:
    """Standard output and error, this process's and its children's,
    into path while in the block."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (fd, *saved):
            os.close(f)


@dataclasses.dataclass
class Outcome:
    """One step's end: 'ok', 'skip' (with why) or 'fail', and its
    seconds."""
    kind: str
    why: str
    seconds: float


def run_step(c: Check, step: Step) -> Outcome:
    """The step with its output in WORK/NAME.log."""
    log = c.path(f"{step.name}.log")
    start = time.monotonic()
    kind, why = "ok", ""
    with output_to(log):
        try:
            step.run(c)
        except Skip as e:
            kind, why = "skip", str(e)
            print(why)
        except Fail as e:
            kind = "fail"
            print(f"FAIL: {e}")
        except (cli.Failure, proc.Failed, proc.TimedOut, OSError) as e:
            kind = "fail"
            print(f"FAIL: {e}")
        except proc.Interrupted:
            raise
        except (Exception, SystemExit) as e:  # a step's own bug
            kind = "fail"
            traceback.print_exc(file=sys.stdout)
            print(f"FAIL: {step.name} raised {type(e).__name__}")
    return Outcome(kind, why, time.monotonic() - start)


def show(c: Check, step: Step, outcome: Outcome) -> None:
    """The step's log behind '# ': its failure lines first (the tail may
    not reach them), then its last lines."""
    with open(c.path(f"{step.name}.log"), encoding="utf-8",
              errors="replace") as f:
        lines = f.read().splitlines()
    if outcome.kind == "fail":
        for line in [ln for ln in lines if FAILURE_LINE.search(ln)][:20]:
            print(f"# failure: {line}")
    for line in lines[-TAIL:]:
        print(f"# {line}".rstrip())


def run_steps(c: Check, steps: Sequence[Step], only: Sequence[str]) -> int:
    """The steps as KTAP, each timed; 0 when none failed."""
    print("TAP version 13")
    print(f"1..{len(steps)}", flush=True)
    counts = {"ok": 0, "fail": 0, "skip": 0}
    times: List[Tuple[float, str]] = []
    c.pending = {s.name for s in steps if not only or s.name in only}
    try:
        for n, step in enumerate(steps, 1):
            if only and step.name not in only:
                print(f"ok {n} {step.name} # SKIP not selected")
                counts["skip"] += 1
                continue
            print(f"# --- {step.name}", flush=True)
            c.pending.discard(step.name)
            outcome = run_step(c, step)
            show(c, step, outcome)
            times.append((outcome.seconds, step.name))
            print(f"# {step.name}: {outcome.seconds:.1f} s")
            counts[outcome.kind] += 1
            if outcome.kind == "ok":
                print(f"ok {n} {step.name}", flush=True)
            elif outcome.kind == "skip":
                print(f"ok {n} {step.name} # SKIP {outcome.why}", flush=True)
            else:
                print(f"not ok {n} {step.name}", flush=True)
    finally:
        left = release_held(c)
    print(f"# Totals: pass:{counts['ok']} fail:{counts['fail']} xfail:0 "
          f"xpass:0 skip:{counts['skip']} error:0")
    if times:
        print("# steps by time: " + ", ".join(
            f"{name} {s:.0f} s" for s, name in sorted(times, reverse=True)))
    if c.missing:
        print("# steps skipped for missing tools; to run them: apt-get "
              f"install {' '.join(sorted(set(c.missing)))}")
    print(f"{counts['ok']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped", flush=True)
    return 1 if counts["fail"] or left else 0


def release_held(c: Check) -> List[str]:
    """c.release_held() with its output behind '# ' (not in the KTAP
    stream): its failures, each also said as one."""
    if not c.has_held():
        return []
    log = c.path("release-held.log")
    with output_to(log):
        failed = c.release_held()
        for failure in failed:
            print(f"FAIL: {failure}")
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            print(f"# {line}".rstrip())
    sys.stdout.flush()
    return failed
