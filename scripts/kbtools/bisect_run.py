# SPDX-License-Identifier: GPL-2.0
"""kbench bisect (scripts/bisect.sh): which kernel commit made a figure
slower (or a check fail)? git bisect over a kernel tree, each commit
built with the test kernel's configuration (kbtools.kernel, cached by
hash), booted under virtme-ng/QEMU, measured in blocks of its own time
against fresh boots of the two endpoints and judged by kbtools.bisect.
See USAGE.
"""

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kbtools import bisect as kb
from kbtools import (cli, collection, guest, kernel, options, output, paths,
                     policy, proc, results, stats, vm)

EXIT_CULPRIT, EXIT_NO_CULPRIT = 0, 1
EXIT_UNDECIDED = 125
VM_OPTIONS = ("--accel", "--boot-timeout", "--vm-timeout")

USAGE = """\
Usage: {prog} --tree DIR --good REV --bad REV -t TEST[:ROW]... [OPTION]...
       {prog} --tree DIR --good REV --bad REV --check TEST:CHECK [OPTION]...
       {prog} --resume --state DIR
Find the first commit between REV good and REV bad of the kernel git
tree DIR that made ROW of TEST slower (e.g. -t syscall_overhead:getsid;
a TEST alone means all its timing rows), or with --check the first one
on which the KTAP check CHECK of TEST (e.g. taskstats:ioctl_errors) is
'not ok' instead of 'ok'.

Each kernel is built from DIR with the test kernel's configuration
(testkernel/build.sh --tree DIR --commit HASH: images cached by commit
hash) and booted under virtme-ng/QEMU (scripts/vm_run.sh; only the named
tests and rows run). On a real clock a boot's figure drifts with the
host's load and boots close in time are alike, so every comparison is
made in blocks of boots of their own time, each block in an order drawn
from the bisection's seed (printed; kept in the state): the endpoints in
blocks of 4 boots each, at most 3 blocks, until bad is shown to differ
from good in the bisected direction on a named row (an exact rank test
within the blocks at --alpha, shared among the looks and rows) or
'no culprit'; then each step in blocks of 4 boots of good, the step and
bad: bad when it ranks beyond good and not short of bad, good the other
way round, 'between' or undecided after --max-repeat boots: 'git bisect
skip'. A decided step whose evidence contradicts it does not narrow the
answer. The answer is then confirmed: its first bad commit and the good
commit before it, built 3 times each, boot head to head in blocks;
unless every build of the one is beyond every build of the other, by
more than the builds of one commit differ where a rank test of them
within their blocks shows them apart, it is 'could not decide'.
The last lines say how likely the answer is to be wrong ('error: ...';
the sum of the decisions' alphas, and what that assumes).

With --icount (QEMU's instruction counter, TCG): figures are exact guest
instructions; one boot per kernel and per step (each running the
programs twice), judged by the exact rule of compare.py.

DIR stays on its branch: the bisect runs with --no-checkout, and a
commit is checked out only while it is built (under testkernel's build
lock). One line per step on stdout: commit, subject, ratio to good,
verdict, boots, the two p-values.

  --tree DIR          a kernel git tree (clean: it is built out of tree,
                      or a tree testkernel/build.sh built in place)
  --good REV          a commit without the change
  --bad REV           a later commit with it
  -t, --test TEST[:ROW]
                      a row to follow (repeatable)
      --check TEST:CHECK
                      functional bisection: one boot per step, good when
                      CHECK is ok, bad when it is not ok
      --faster        look for the commit that made it faster
      --icount        exact mode (scripts/vm_run.sh --icount)
      --max-repeat N  boots of a step's kernel at most (default 12: three
                      blocks; at least 8, the fewest that can decide)
      --alpha A       the error of one decision (default 0.001)
      --threshold PCT smallest change of the endpoints followed
                      (default 2)
      --state DIR     the bisection's state (default: under
                      ~/.cache/kbench/bisect/, one per tree, range, rows)
      --resume        continue the bisection kept in the state directory
  -j, --jobs N        parallel make jobs
      --accel MODE, --boot-timeout SECS, --vm-timeout SECS
                      passed to scripts/vm_run.sh
  -h, --help          this help

Exit status: 0 first bad commit found; 1 no culprit (good and bad were
not shown to differ, or the check is not ok on good and not ok on bad);
2 bad usage; 3 missing host tools or a failed setup; 125 could not
decide (only skipped commits left, an endpoint does not build or boot,
or the steps contradict each other); 130 interrupted.
"""


class Done(Exception):
    """The bisection's end: the last line and the exit status."""

    def __init__(self, line: str, status: int):
        super().__init__(line)
        self.line = line
        self.status = status


def setup_failed(message: str) -> cli.Failure:
    """A failed setup, not the kernel's fault: exit 3."""
    return cli.Failure(message, cli.EXIT_SETUP)


# ---- options ------------------------------------------------------------------

def parse_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    """The options of a bisection; cli.Error on bad usage, SystemExit (0)
    after -h."""
    ap = cli.UsageParser(prog=prog, help_text=USAGE.format(prog=prog))
    ap.add_argument("--tree")
    ap.add_argument("--good")
    ap.add_argument("--bad")
    ap.add_argument("-t", "--test", action="append", default=[])
    ap.add_argument("--check")
    ap.add_argument("--faster", action="store_true")
    ap.add_argument("--icount", action="store_true")
    ap.add_argument("--max-repeat", default="12")
    ap.add_argument("--alpha", default=str(kb.DEFAULT_ALPHA))
    ap.add_argument("--threshold", default="2")
    ap.add_argument("--state")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("-j", "--jobs")
    options.add_arguments(ap, VM_OPTIONS)
    args = ap.parse_args(list(argv))
    if args.resume and args.state and not (args.tree or args.good or
                                           args.bad or args.check or
                                           args.test):
        return args
    check_new(args)
    return args


def _number(text: str, what: str, kind: Callable[[str], Any] = float
            ) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise cli.Error(f"invalid {what} '{text}'") from None


def check_targets(targets: Sequence[str]) -> None:
    """cli.Error on a -t that is not TEST or TEST:ROW of a test
    directory (kbench bisect, series and validate), before anything is
    built or written."""
    try:
        named = [kb.parse_target(t)[0] for t in targets]
    except kb.BisectError as e:
        raise cli.Error(f"-t: {e}") from None
    collection.check_tests(named)


def check_new(args: argparse.Namespace) -> None:
    """The options of a new bisection, before anything is touched."""
    if not args.tree:
        raise cli.Error("no kernel tree: give --tree DIR")
    if not args.good or not args.bad:
        raise cli.Error("give both --good REV and --bad REV")
    if args.check:
        if not re.fullmatch(r"[^:]+:[^:]+", args.check):
            raise cli.Error(f"--check '{args.check}' is not TEST:CHECK")
        args.test.append(args.check.split(":")[0])
    if not args.test:
        raise cli.Error("nothing to measure: give -t TEST[:ROW] or --check "
                    "TEST:CHECK")
    check_targets(args.test)
    args.max_repeat = _number(args.max_repeat, "--max-repeat", int)
    args.alpha = _number(args.alpha, "--alpha")
    args.threshold = _number(args.threshold, "--threshold")
    if not 0 < args.alpha < 1:
        raise cli.Error(f"invalid --alpha '{args.alpha:g}': not between 0 and 1")
    if args.threshold < 0:
        raise cli.Error("invalid --threshold: negative")
    need = least_step_boots(args.alpha)
    if args.max_repeat < 1 or (not args.icount and not args.check and
                               args.max_repeat < need):
        raise cli.Error(f"--max-repeat {args.max_repeat}: a step decided at "
                    f"alpha {args.alpha:g} needs at least {need} boots "
                    f"({need // 4} blocks)")
    if args.jobs is not None and not re.fullmatch(r"[1-9][0-9]*", args.jobs):
        raise cli.Error(f"invalid --jobs '{args.jobs}'")


def least_step_boots(alpha: float) -> int:
    """The fewest step boots (whole blocks of 4) whose most extreme
    ranks can reach alpha shared among their looks."""
    per_block = stats.min_p(4, 4) / 2      # one-sided: 1/70
    blocks = 1
    while per_block ** blocks > alpha / blocks:
        blocks += 1
    return 4 * blocks


# ---- git ----------------------------------------------------------------------

class Tree:
    """The kernel git tree, and its git bisect."""

    def __init__(self, path: str):
        self.path = path

    def git(self, *args: str, check: bool = True) -> str:
        p = subprocess.run(["git", "-C", self.path, "-c", "user.name=kbench",
                            "-c", "user.email=kbench@localhost"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if check and p.returncode:
            raise setup_failed(f"git {args[0]} failed: "
                        f"{p.stdout.strip().splitlines()[-1:] or ''}")
        return p.stdout

    def rev(self, rev: str, option: str) -> str:
        p = subprocess.run(["git", "-C", self.path, "rev-parse", "-q",
                            "--verify", rev + "^{commit}"],
                           capture_output=True, text=True)
        if p.returncode:
            raise cli.Error(f"{option} '{rev}': no such commit in {self.path}")
        return p.stdout.strip()

    def subject(self, commit: str) -> str:
        return self.git("log", "-1", "--format=%s", commit).strip()

    def bisecting(self) -> bool:
        path = self.git("rev-parse", "--git-path", "BISECT_START").strip()
        return os.path.exists(os.path.join(self.path, path))

    def log(self) -> str:
        return self.git("bisect", "log", check=False)


def checked_tree(path: str) -> Tree:
    if not os.path.isdir(path):
        raise cli.Error(f"--tree '{path}': no such directory")
    path = os.path.abspath(path)
    p = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"],
                       capture_output=True, text=True)
    if p.returncode:
        first = (p.stderr.strip().splitlines() or ["not a git tree"])[0]
        raise cli.Error(f"--tree '{path}': {first}")
    if os.path.realpath(p.stdout.strip()) != os.path.realpath(path):
        raise cli.Error(f"--tree '{path}' is not the top of a git work tree "
                    f"({p.stdout.strip()} is)")
    if subprocess.run(["git", "-C", path, "diff", "--quiet", "HEAD", "--"]
                      ).returncode:
        raise cli.Error(f"--tree '{path}' has uncommitted changes: commit or "
                    f"stash them")
    return Tree(path)


# ---- builds and boots ----------------------------------------------------------

@dataclass
class Runner:
    """The builds (kbtools.kernel) and the boots of a bisection: its
    messages' name, its state and scratch directories, make's jobs (0:
    the CPUs), the VM options of every boot."""
    prog: str
    state: str
    work: str
    jobs: int
    vm_args: List[str]
    build_log: str = ""   # the last build that failed
    why: str = ""         # why the last boot was unusable
    stream: str = ""      # the last boot's KTAP

    def say(self, text: str) -> None:
        output.msg(self.prog, text)

    def build(self, tree: str, commit: str, build: int = 1
              ) -> Optional[str]:
        """The image of COMMIT (built or cached; build 2: its second
        image); None when it does not build (its log in self.build_log).
        A tree it cannot build from at all, or missing host tools: a
        failed setup (3)."""
        start = time.time()
        try:
            built = kernel.build_commit(kernel.CommitBuild(
                tree, commit, self.jobs, build=build), self.prog)
        except kernel.BuildFailed as e:
            self.build_log = e.log
            self.say(f"{commit[:12]} does not build (log: {e.log})")
            return None
        except cli.Error as e:
            raise setup_failed(f"cannot build from {tree}: {e}") from e
        self.say(f"built {commit[:12]} in {time.time() - start:.0f} s "
                 f"(or cached)")
        return built.image

    def boot_once(self, commit: str, image: str, tests: str,
                  env: Dict[str, str]) -> Optional[int]:
        """One boot: the number of the commit's new usable boot, or None
        (the reason in self.why, the try kept in STATE/failed/)."""
        try_dir = os.path.join(self.work, "boot")
        shutil.rmtree(try_dir, ignore_errors=True)
        os.makedirs(os.path.join(try_dir, "json"))
        self.why = ""
        try:
            rc = self.run_guest(image, tests, env, try_dir)
        except guest.Ended as e:
            rc, self.why = e.status, str(e)
        except (cli.Error, cli.Failure, proc.Failed) as e:
            with open(os.path.join(try_dir, "log"), errors="replace") as f:
                sys.stderr.write(f.read())
            raise setup_failed(f"the boot of {image} failed to start "
                               f"({e}): not the kernel's fault") from e
        if rc in (0, 1):
            with open(os.path.join(try_dir, "ktap"), errors="replace") as f:
                self.stream = f.read()
            problems = kb.stream_problems(self.stream)
            if not problems:
                return self.keep(commit, try_dir)
            self.why = f"incomplete KTAP stream: {problems[0]}"
        elif not self.why:
            self.why = f"exit {rc}"
        failed = os.path.join(self.state, "failed")
        os.makedirs(failed, exist_ok=True)
        shutil.move(try_dir, os.path.join(failed,
                                          f"{commit}-{int(time.time())}"))
        return None

    def run_guest(self, image: str, tests: str, program_args: Dict[str, str],
                  try_dir: str) -> int:
        """One boot of image in this process (kbtools.vm, as vm_run.sh
        boots it): its KTAP in TRY/ktap, the VM runner's messages in
        TRY/log, the console in TRY/console.log, the results in
        TRY/json/. The guest's exit status; vm.run_guest's
        exceptions."""
        json_dir = os.path.join(try_dir, "json")
        prog = vm.runner_prog(self.prog)
        opts = vm.parse(["--kernel", image, *self.vm_args, "--console",
                         os.path.join(try_dir, "console.log"), "-t", tests,
                         "--json", json_dir], prog)
        opts.run.program_args = dict(program_args)
        with open(os.path.join(try_dir, "ktap"), "wb") as sink, \
                open(os.path.join(try_dir, "log"), "w") as log, \
                contextlib.redirect_stderr(log):
            return vm.run_guest(opts, prog, sink).status

    def keep(self, commit: str, try_dir: str) -> int:
        d = kb.boots_dir(self.state, commit)
        os.makedirs(d, exist_ok=True)
        k = len(kb.usable_boots(self.state, commit)) + 1
        os.rename(os.path.join(try_dir, "json"), os.path.join(d, str(k)))
        for name, suffix in (("ktap", "ktap"), ("log", "log"),
                             ("console.log", "console.log")):
            src = os.path.join(try_dir, name)
            if os.path.exists(src):
                os.rename(src, os.path.join(d, f"{k}.{suffix}"))
        return k


def read_lines(path: str) -> List[str]:
    with open(path, errors="replace") as f:
        return f.readlines()


def build_error(log: str) -> str:
    """The compiler's first error in a build's log, else its last line,
    short."""
    with open(log, errors="replace") as f:
        lines = [ln.strip() for ln in f if ln.strip()]
    first = next((ln for ln in lines if " error: " in ln or
                  re.search(r"Error [0-9]+", ln)), lines[-1] if lines else "")
    return first[:70]


def guest_env(targets: Sequence[str],
              listed: Callable[[str], Optional[Sequence[str]]]
              = collection.program_tests) -> Tuple[str, Dict[str, str]]:
    """(the tests to run, the KSELFTEST_<PROG>_ARGS that run only the
    named rows, after this process's own); cli.Error on a test that is
    no test directory. Only a row its program's -t names (listed) runs
    alone; any other runs its whole program and is followed in it: a
    proc_create cell METHOD@SIZE (-t takes methods, and a cell's figure
    depends on the cells before it: clone's first run alone held its
    mode in 23-27% of its samples, 42,016 in one boot; after fork and
    vfork 53-68%, 42,243 in every boot), a memcg_ks reading, a pmqtest
    pair (its -t is a thread count)."""
    want: Dict[str, Any] = {}
    for t in targets:
        test, row = kb.parse_target(t)
        want.setdefault(test, [])
        if row is None:
            want[test] = "all"
        elif want[test] != "all":
            want[test].append(row)
    collection.check_tests(sorted(want))
    env: Dict[str, str] = {}
    for test, rows in want.items():
        alone = listed(test) if rows != "all" else None
        if not alone or any(r not in alone for r in rows):
            continue
        var = "KSELFTEST_" + re.sub(r"[^A-Z0-9]", "_", test.upper()) + \
            "_ARGS"
        env[var] = (os.environ.get(var, "") + " -t " +
                    ",".join(rows)).strip()
    return ",".join(sorted(want)), env


# ---- the bisection ---------------------------------------------------------

@dataclass
class Bisection:
    """One bisection: its settings (st), its state directory, the tree it
    checks commits out in and the runner that builds and boots them; the
    tests and the environment every boot runs them with, the image of
    each commit built, whether it started git bisect, the answer it is
    confirming."""
    st: Dict[str, Any]
    state: str
    tree: Tree
    runner: Runner
    tests: str = field(init=False)
    env: Dict[str, str] = field(init=False)
    images: Dict[str, str] = field(default_factory=dict)
    owns_bisect: bool = False
    confirming: Optional[kb.Answer] = None

    def __post_init__(self) -> None:
        self.tests, self.env = guest_env(self.st["targets"])

    # -- boots

    def boot(self, commit: str, role: str, phase: str, block: int) -> bool:
        """Boot COMMIT (tried twice; the build of it the role names);
        record it in the schedule."""
        image = self.images[image_key(commit, kb.build_of(role))]
        k = self.runner.boot_once(commit, image, self.tests, self.env)
        if k is None:
            self.runner.say(f"boot of {commit[:12]} unusable "
                            f"({self.runner.why}): trying once more")
            k = self.runner.boot_once(commit, image, self.tests, self.env)
        kb.record_boot(self.state, {
            "commit": commit, "role": role, "phase": phase, "block": block,
            "usable": k, "time": f"{time.time():.0f}",
            "load": read_lines("/proc/loadavg")[0].split()[0]
            if os.path.exists("/proc/loadavg") else "",
            "seed": self.st.get("seed")})
        if k is None:
            self.runner.say(f"boot of {commit[:12]} unusable again "
                            f"({self.runner.why})")
            return False
        return True

    def commit_of(self, role: str, step: str) -> str:
        ans = self.confirming
        if role in kb.LO_BUILDS + kb.HI_BUILDS:
            assert ans is not None
            return ans.lo if role in kb.LO_BUILDS else ans.hi
        return str({"good": self.st["good"], "bad": self.st["bad"],
                    "step": step}[role])

    def boot_block(self, phase: str, step: str = "") -> None:
        """Boot the rest of the phase's current block; an endpoint that
        does not boot ends the bisection, a step that does not is
        skipped (BootFailed)."""
        while True:
            boots = kb.read_boots(self.state)
            role, block, last = kb.next_boot(self.st, boots, phase)
            commit = self.commit_of(role, step)
            if not self.boot(commit, role, phase, block):
                if role != "step":
                    raise Done(f"could not decide: the {role} kernel "
                               f"{commit[:12]} does not boot "
                               f"({self.runner.why})", EXIT_UNDECIDED)
                raise BootFailed(self.runner.why)
            if last:
                return

    # -- endpoints

    def build_endpoints(self) -> None:
        for name in ("good", "bad"):
            commit = self.st[name]
            image = self.runner.build(self.st["tree"], commit)
            if image is None:
                raise Done(f"could not decide: the {name} commit "
                           f"{commit[:12]} does not build", EXIT_UNDECIDED)
            self.images[commit] = image

    def endpoints(self) -> None:
        """Compare good and bad in blocks until they differ or cannot."""
        if self.st.get("check"):
            return self.check_endpoints()
        while True:
            done = kb.blocks_done(self.st, kb.read_boots(self.state),
                                  "endpoints")
            fig = kb.Figures.of_state(self.state, kb.read_boots(self.state))
            if done:
                unmeasured = kb.unmeasured_rows(self.st, fig.keys())
                if unmeasured:
                    raise cli.Error("-t: " + "; ".join(unmeasured))
                verdict, signal, entries = kb.decide_endpoints(
                    self.st, fig, done)
                if verdict == "differ":
                    for e in entries:
                        if {"test": e["test"], "row": e["row"]} in signal:
                            print(f"endpoints: bad is {self.st['direction']}"
                                  f" than good on "
                                  f"{kb.describe_endpoint(self.st, e)}",
                                  flush=True)
                    results.write_json(os.path.join(self.state, kb.SIGNAL),
                                       signal)
                    return self.record_endpoints()
                if verdict == "none":
                    raise Done(kb.no_culprit_line(self.st, entries),
                               EXIT_NO_CULPRIT)
                if verdict == "undecided":
                    raise Done(kb.undecided_endpoints_line(self.st, entries),
                               EXIT_UNDECIDED)
                self.runner.say(f"endpoints: not shown to differ after {done} "
                    f"block{'s' if done > 1 else ''}: one more block")
            self.boot_block("endpoints")

    def check_endpoints(self) -> None:
        for role in ("good", "bad"):
            if not self.boot(self.st[role], role, "endpoints", 1):
                raise Done(f"could not decide: the {role} kernel "
                           f"{self.st[role][:12]} does not boot "
                           f"({self.runner.why})", EXIT_UNDECIDED)
        g, b = (self.check_of(self.st[r]) for r in ("good", "bad"))
        if g != "ok" or b != "not ok":
            raise Done(f"no culprit: {self.st['check']} is '{g}' on good "
                       f"and '{b}' on bad", EXIT_NO_CULPRIT)
        results.write_json(os.path.join(self.state, kb.SIGNAL), [])
        self.record_endpoints()

    def check_of(self, commit: str) -> str:
        k = kb.usable_boots(self.state, commit)[-1]
        with open(os.path.join(kb.boots_dir(self.state, commit),
                               f"{k}.ktap"), errors="replace") as f:
            return kb.check_result(f.read(), self.st["check"])

    def record_endpoints(self) -> None:
        boots = kb.read_boots(self.state)
        for role in ("good", "bad"):
            commit = self.st[role]
            n = sum(1 for b in boots if b["commit"] == commit and
                    b["usable"] is not None)
            self.record({"commit": commit, "subject": self.tree.subject(
                commit), "verdict": role, "boots": n, "note": "endpoint"})

    def record(self, step: Dict[str, Any]) -> None:
        kb.append_step(self.state, step)
        print(kb.fmt_step({k: ("" if v is None else v)
                           for k, v in step.items()}), flush=True)

    # -- steps

    def classify(self, commit: str, signal: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Boot the step in blocks until it is decided; its step line."""
        subject = self.tree.subject(commit)
        if self.st.get("check"):
            if not self.boot(commit, "step", commit, 1):
                return {"commit": commit, "subject": subject,
                        "verdict": "skip", "boots": 0,
                        "note": f"boot: {self.runner.why}"}
            result = self.check_of(commit)
            verdict = {"ok": "good", "not ok": "bad"}.get(result, "skip")
            return {"commit": commit, "subject": subject, "verdict": verdict,
                    "boots": 1, "note": f"{self.st['check']}: {result}"}
        while True:
            boots = kb.read_boots(self.state)
            done = kb.blocks_done(self.st, boots, commit)
            if done:
                c, detail = kb.decide_step(self.st, kb.Figures.of_state(
                    self.state, boots), signal, commit, done)
                if c != "more":
                    return {"commit": commit, "subject": subject,
                            "verdict": c, "boots": detail.get("boots"),
                            "ratio": detail.get("ratio"),
                            "note": detail.get("note"),
                            "p_bad": detail.get("p_bad"),
                            "p_good": detail.get("p_good")}
            try:
                self.boot_block(commit, commit)
            except BootFailed as e:
                return {"commit": commit, "subject": subject,
                        "verdict": "skip", "boots": len(kb.usable_boots(
                            self.state, commit)), "note": f"boot: {e}"}

    def mark(self, *args: str) -> str:
        out = self.tree.git("bisect", *args, check=False)
        self.save_log()
        return out

    def save_log(self) -> None:
        if self.tree.bisecting():
            results.write_text(os.path.join(self.state, "bisect.log"),
                               self.tree.log())

    def start(self) -> str:
        self.owns_bisect = True
        log = os.path.join(self.state, "bisect.log")
        if os.path.exists(log):
            out = self.tree.git("bisect", "replay", log, check=False)
            if "is the first bad commit" not in out and \
                    not self.tree.bisecting():
                raise setup_failed(f"git bisect replay of {log} failed")
            self.runner.say(f"resumed the bisection of {self.state} (git bisect "
                f"replayed)")
            return out
        out = self.tree.git("bisect", "start", "--no-checkout",
                            self.st["bad"], self.st["good"], check=False)
        if not self.tree.bisecting():
            raise setup_failed(f"git bisect start failed: {out.strip()}")
        self.save_log()
        return out

    def steps(self, out: str) -> None:
        signal = results.read_json(os.path.join(self.state, kb.SIGNAL))
        while not outcome(out):
            commit = self.tree.git("rev-parse", "BISECT_HEAD").strip()
            image = self.runner.build(self.st["tree"], commit)
            if image is None:
                log = self.runner.build_log
                shutil.copy(log, os.path.join(self.state,
                                              f"build-{commit}.log"))
                self.record({"commit": commit, "subject":
                             self.tree.subject(commit), "verdict": "skip",
                             "boots": 0, "note": f"does not build: "
                             f"{build_error(log)}"})
                out = self.mark("skip", commit)
                continue
            self.images[commit] = image
            step = self.classify(commit, signal)
            self.record(step)
            out = self.mark(step["verdict"], commit)
        self.finish(out)

    def finish(self, out: str) -> None:
        steps = kb.read_steps(self.state)
        ans = kb.answer(steps, self.st["good"], self.st["bad"], self.between,
                        self.parent)
        confirmation = None
        if kb.needs_confirmation(self.st, ans):
            confirmation = self.confirm(ans)
            steps = kb.read_steps(self.state)
        headers = kb.Figures.of_state(self.state,
                                      kb.read_boots(self.state)).headers
        print(kb.error_line(self.st, steps, headers), flush=True)
        if confirmation and confirmation[0] != "confirmed":
            whole = self.between([self.st["good"]], [self.st["bad"]])
            raise Done(kb.unconfirmed_line(self.st, ans, *confirmation,
                                           whole), EXIT_UNDECIDED)
        if ans.culprit:
            raise Done(f"first bad commit: {ans.culprit} "
                       f"{self.tree.subject(ans.culprit)}", EXIT_CULPRIT)
        raise Done(kb.range_line(ans), EXIT_UNDECIDED)

    def confirm(self, ans: kb.Answer) -> Tuple[str, Dict[str, Any]]:
        """Boot the answer's lo and hi, kb.CONFIRM_BUILDS builds each,
        head to head in blocks until kb.decide_confirmation decides; its
        step line."""
        if any(s["verdict"] == "confirmed" for s in kb.read_steps(self.state)):
            return "confirmed", {}      # a resumed bisection, confirmed
        signal = results.read_json(os.path.join(self.state, kb.SIGNAL))
        self.confirming = ans
        for commit in (ans.lo, ans.hi):
            for build in range(1, kb.CONFIRM_BUILDS + 1):
                image = self.runner.build(self.st["tree"], commit, build)
                if image is None:
                    raise Done(f"could not decide: build {build} of "
                               f"{commit[:12]}, which the answer is "
                               f"confirmed on, failed", EXIT_UNDECIDED)
                self.images[image_key(commit, build)] = image
        self.runner.say(f"confirming {kb.range_text(ans)} against "
                        f"{ans.lo[:12]}: {kb.CONFIRM_BUILDS} builds of each, "
                        f"head to head")
        while True:
            boots = kb.read_boots(self.state)
            done = kb.blocks_done(self.st, boots, kb.CONFIRM)
            verdict, detail = kb.decide_confirmation(
                self.st, kb.Figures.of_state(self.state, boots), signal, done)
            if verdict != "more":
                break
            try:
                self.boot_block(kb.CONFIRM)
            except BootFailed as e:
                raise Done(f"could not decide: a boot of the confirmation "
                           f"failed twice ({e})", EXIT_UNDECIDED) from e
        if not any(s["verdict"] in ("confirmed", "unconfirmed")
                   for s in kb.read_steps(self.state)):
            self.record({"commit": ans.hi, "subject": self.tree.subject(
                ans.hi), "verdict": "confirmed" if verdict == "confirmed"
                else "unconfirmed", "boots": detail.get("boots"),
                "ratio": detail.get("ratio"),
                "note": kb.confirmation_line(self.st, ans, verdict, detail)})
        return verdict, detail

    def between(self, goods: List[str], bads: List[str]) -> List[str]:
        """The commits reachable from every one of bads, from none of
        goods, oldest first."""
        common: Optional[List[str]] = None
        for b in bads:
            listed = self.tree.git("rev-list", b, *[f"^{g}" for g in goods]
                                   ).split()
            common = listed if common is None else [c for c in common
                                                     if c in listed]
        return list(reversed(common or []))

    def parent(self, commit: str) -> str:
        return self.tree.git("rev-parse", f"{commit}^").strip()


class BootFailed(Exception):
    """A step's boot failed twice."""


def image_key(commit: str, build: int) -> str:
    """The key of a build of a commit among the images (the commit's
    hash for its first)."""
    return commit if build == 1 else f"{commit}+{build}"


def outcome(out: str) -> Optional[Tuple[str, List[str]]]:
    """('culprit', [hash]) or ('undecided', [hashes]) from git bisect's
    words, or None while it goes on."""
    m = re.search(r"^([0-9a-f]{40}) is the first bad commit", out, re.M)
    if m:
        return "culprit", [m.group(1)]
    if "only 'skip'ped commits left" in out:
        tail = out.split("could be any of:", 1)[-1]
        return "undecided", re.findall(r"^([0-9a-f]{40})", tail, re.M)
    return None


# ---- main ----------------------------------------------------------------------

def default_state(tree: str, good: str, bad: str, direction: str,
                  check: Optional[str], targets: Sequence[str]) -> str:
    import hashlib
    key = hashlib.sha256("\n".join([tree, good, bad, direction, check or ""]
                                   + list(targets)).encode()).hexdigest()
    return paths.user_cache("bisect", key[:12])


def new_settings(args: argparse.Namespace, tree: Tree) -> Dict[str, Any]:
    good = tree.rev(args.good, "--good")
    bad = tree.rev(args.bad, "--bad")
    if good == bad:
        raise cli.Error("--good and --bad are the same commit")
    if subprocess.run(["git", "-C", tree.path, "merge-base",
                       "--is-ancestor", good, bad]).returncode:
        raise cli.Error(f"--good {good[:12]} is not an ancestor of --bad "
                    f"{bad[:12]}")
    direction = "faster" if args.faster else "slower"
    try:
        return kb.make_settings(
            tree.path, good, bad, direction, args.alpha, args.threshold,
            args.check, args.test, "icount" if args.icount else "real",
            max(1, args.max_repeat // 4))
    except kb.BisectError as e:
        raise cli.Error(str(e)) from None


def claim_tree(tree: Tree, state: str, resume: bool) -> None:
    """The tree's git bisect is ours (a --resume after a kill -9) or
    nobody's; somebody else's is left alone."""
    if not tree.bisecting():
        return
    log = os.path.join(state, "bisect.log")
    first = re.compile(r"^git bisect start.*$", re.M)
    if resume and os.path.exists(log):
        mine = first.search("".join(read_lines(log)))
        theirs = first.search(tree.log())
        if mine and theirs and mine.group(0) == theirs.group(0):
            tree.git("bisect", "reset", "-q", check=False)
            return
    raise cli.Error(f"{tree.path} is in a git bisect already ('git bisect "
                f"reset' ends it)")


def prepare(args: argparse.Namespace) -> Tuple[Dict[str, Any], str, Tree]:
    """(settings, state, tree) of a new or resumed bisection."""
    if args.resume and not args.tree:
        if not args.state or not os.path.exists(
                os.path.join(args.state, kb.SETTINGS)):
            raise cli.Error(f"--resume: no bisection in '{args.state}'")
        st = kb.load_settings(args.state)
        if not os.path.isdir(st["tree"]):
            raise cli.Error(f"--resume: the tree {st['tree']} is gone")
        tree = Tree(st["tree"])
        claim_tree(tree, args.state, True)
        return st, args.state, tree
    tree = checked_tree(args.tree)
    st = new_settings(args, tree)
    state = args.state or default_state(tree.path, st["good"], st["bad"],
                                        st["direction"], st["check"],
                                        st["targets"])
    claim_tree(tree, state, args.resume)
    if args.resume:
        if not os.path.exists(os.path.join(state, kb.SETTINGS)):
            raise cli.Error(f"--resume: no bisection in '{state}'")
        return kb.load_settings(state), state, tree
    if os.path.exists(os.path.join(state, kb.SETTINGS)):
        raise cli.Error(f"a bisection was started in {state}: add --resume to "
                    f"continue it, or remove that directory to start over")
    try:
        kb.save_settings(state, st)
    except OSError as e:
        raise cli.Error(f"cannot create --state '{state}': {e.strerror}")
    return st, state, tree


def vm_args(args: argparse.Namespace, st: Dict[str, Any]) -> List[str]:
    out = options.passed_on(args, VM_OPTIONS)
    if st.get("mode") == "icount":
        # The policy's runs in the boot: an exact verdict needs each
        # side's spread.
        try:
            out += ["--icount", "--repeat",
                    str(policy.icount().repetitions)]
        except ValueError as e:
            raise cli.Error(str(e)) from e
    return out


@dataclass(frozen=True)
class Outcome:
    """How a bisection ended: its last line on stdout (first bad commit:
    ..., no culprit: ..., could not decide: ...) and its exit status."""
    line: str
    status: int


def bisect(args: argparse.Namespace, prog: str) -> Outcome:
    """The bisection args (parse_args's) ask for, its step lines and last
    line on stdout; cli.Error on bad usage, a failed setup's cli.Failure
    (3), kb.BisectError or results.ResultError on a state it cannot read,
    proc.Interrupted: the tree put back and the state kept each time."""
    st, state, tree = prepare(args)
    work = tempfile.mkdtemp(prefix="kbench-bisect.")
    runner = Runner(prog, state, work, int(args.jobs or 0),
                    vm_args(args, st))
    b = Bisection(st, state, tree, runner)
    started = time.time()
    try:
        runner.say(f"bisecting {st['good'][:12]}..{st['bad'][:12]} of "
                   f"{st['tree']} on {' '.join(st['targets'])}"
                   f"{' (check ' + st['check'] + ')' if st['check'] else ''}"
                   f"{' (icount)' if st.get('mode') == 'icount' else ''}"
                   f"{kb.order_note(st)}; "
                   f"state: {state}")
        b.build_endpoints()
        if not os.path.exists(os.path.join(state, kb.SIGNAL)):
            b.endpoints()
        elif args.resume:
            for s in kb.read_steps(state):
                print(kb.fmt_step(s), flush=True)
        out = b.start()
        b.steps(out)
    except Done as d:
        n = tree.git("rev-list", "--count", f"{st['good']}..{st['bad']}",
                     check=False).strip()
        runner.say(f"{n} commits, {len(kb.read_steps(state))} lines in "
                   f"{os.path.join(state, kb.STEPS)}, "
                   f"{time.time() - started:.0f} s")
        print(d.line, flush=True)
        return Outcome(d.line, d.status)
    finally:
        # Putting the tree back is not to be cut short by a second signal.
        for sig in proc.STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if b.owns_bisect and tree.bisecting():
            b.save_log()
            tree.git("bisect", "reset", check=False)
        shutil.rmtree(work, ignore_errors=True)
    return Outcome("could not decide", EXIT_UNDECIDED)


def main(argv: Sequence[str], prog: str = "kbench bisect") -> int:
    """kbench bisect, scripts/bisect.sh: 0 a culprit, 1 none, 2 bad
    usage, 3 a failed setup, 125 could not decide, 130 interrupted."""
    def body() -> int:
        args = parse_args(argv, prog)
        try:
            return bisect(args, prog).status
        except (kb.BisectError, results.ResultError) as e:
            raise setup_failed(str(e)) from e
    return cli.orchestrate(prog, body)
