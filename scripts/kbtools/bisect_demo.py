# SPDX-License-Identifier: GPL-2.0
"""The end-to-end check of kbench bisect: two series of 7 commits on
top of the test kernel's unpatched tree, one of which makes getsid() 200
ns slower, the other with no functional change. Bisecting the first must
name that commit; the second must end in 'no culprit'. See HELP.

    kbench bisect-demo [--only SERIES] [--keep DIR] [BISECT OPTION]...
                                        (scripts/bisect_demo.sh)

The commits are git plumbing on a private index with a fixed author,
committer and date: the same hashes on every run, as the bash script
made them, so that every image built before is found cached.
"""

import argparse
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from kbtools import bisect, bisect_run, cli, kernel, proc, results
from kbtools.output import msg

SERIES = ("regression", "no-change", "small", "creation")
# Made for kbench series (--series steps), never bisected.
MADE_ONLY = ("steps", "steps20")
# The small and creation series are for --icount: run only when named.
DEFAULT_SERIES = ("regression", "no-change")
BASE = "unpatched"
TARGET = "syscall_overhead:getsid"
# The row a series other than getsid's is bisected on: the copy_process
# nop is one instruction among 42,000 of a clone, which the exact rule
# sees on the row's most common value (kbtools.exact.judged_figure).
TARGETS = {"creation": "proc_create:clone@1.70MB"}
# The bisections' name in their messages.
BISECT_PROG = "kbench bisect"
# Options handed to the bisection (kbench bisect) as given: those with a value, and
# the one without.
BISECT_VALUE_OPTIONS = ("--max-repeat", "--alpha", "--threshold", "-j",
                        "--jobs", "--accel", "--boot-timeout", "--vm-timeout")
BISECT_FLAGS = ("--icount",)
DEMO_GIT_ENV = {
    "GIT_AUTHOR_NAME": "kbench", "GIT_AUTHOR_EMAIL": "kbench@localhost",
    "GIT_COMMITTER_NAME": "kbench", "GIT_COMMITTER_EMAIL": "kbench@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}

HELP = """\
Usage: {prog} [--only regression|no-change|small|creation] [--keep DIR] [BISECT OPTION]...
Make two series of 7 commits on top of the test kernel's unpatched tree
(testkernel/build.sh --print-tree; built once with testkernel/build.sh
--unpatched, so that every kernel here is an incremental build):

  regression  comments, a printk at init, a documentation file, and one
              commit that adds ndelay(200) at the start of getsid()
  no-change   the same with a comment instead of the delay
  small       the same with five nops at the start of getsid() instead
              of the delay (+5 instructions, +1.7%: for --icount, which
              counts them; a real clock cannot see it; not run unless
              named with --only)
  creation    the same with one nop after copy_process()'s declarations
              instead (+1 instruction in 42,000 of a clone: for
              --icount, judged by the row's most common value; bisected
              on -t proc_create:clone@1.70MB; not run unless named)

and bisect each with
  scripts/bisect.sh --tree TREE --good unpatched --bad TIP -t syscall_overhead:getsid

The commits are made without touching the tree's files (a private index)
and with fixed dates, so that a second demo finds every image cached by
hash. The tree is switched to its unpatched branch for the run (under
testkernel's build lock) and put back on its branch afterwards.

  --only SERIES   run one series only
  --keep DIR      keep the bisections' state directories in DIR
  --series SERIES make that series' commits and print them (good=HASH,
                  bad=HASH, culprit=HASH; culprit empty for no-change),
                  bisecting nothing: for recording boots of its kernels
                  (bench/bisect_boots.py). SERIES may also be steps:
                  four commits for kbench series, each of a known cost
                  (getppid +1 nop, a documentation file, ksys_msgsnd +2
                  nops, ksys_msgsnd -1 nop); or steps20: twenty, five
                  of which change code (getppid +1 nop, getppid +1,
                  getsid +5, getppid -1, ksys_msgsnd +1), each
                  followed by three that change a documentation file
  -h, --help      this help

These go to scripts/bisect.sh: --max-repeat, --alpha, --threshold, -j,
--accel, --boot-timeout, --vm-timeout (each with its value), --icount.
Exit status: 0 the regression's (and small's) culprit is the commit that
slows getsid and the no-change series has no culprit; 1 otherwise; 2 bad
usage.
"""


# ---- the edits: what the bash script's sed scripts did ----------------------

@dataclass(frozen=True)
class Insert:
    """Lines put after (or before) each line that is `at`, or after the
    last line when `at` is None. With `within`, only where `at` ends a
    stretch that starts at a line `within` (sed's /within/,/at/)."""
    lines: Tuple[str, ...]
    at: Optional[str] = None
    before: bool = False
    within: Optional[str] = None


@dataclass(frozen=True)
class Edit:
    """One commit: its file edited by its inserts (after dropping the
    first line equal to each of drops), its subject."""
    path: str
    inserts: Tuple[Insert, ...]
    subject: str
    drops: Tuple[str, ...] = ()


GETSID = "SYSCALL_DEFINE1(getsid, pid_t, pid)"
# A file the parent does not have starts as this.
NEW_FILE = b"kbench bisection demo\n=====================\n"


def before_getsid(comment: str, subject: str) -> Edit:
    return Edit("kernel/sys.c", (Insert((comment,), GETSID, before=True),),
                subject)


def at_getsid_start(statement: str, subject: str,
                    *more: Insert) -> Edit:
    """statement first in getsid(), after its declaration and a blank
    line."""
    return Edit("kernel/sys.c", (Insert(("", statement), "\tint retval;",
                                        within=GETSID), *more), subject)


def doc_line(line: str, subject: str) -> Edit:
    return Edit("Documentation/kbench-bisect-demo.rst", (Insert((line,)),),
                subject)


# The fourth commit of each series: the culprit, or one that changes
# nothing.
MIDDLE = {
    "regression": at_getsid_start(
        "\tndelay(200);", "sys: getsid: wait 200 ns first",
        Insert(("#include <linux/delay.h>",), "#include <linux/kmsg_dump.h>")),
    "small": at_getsid_start(
        '\tasm volatile("nop\\n\\tnop\\n\\tnop\\n\\tnop\\n\\tnop");',
        "sys: getsid: five nops first"),
    "no-change": before_getsid("/* It takes no lock but RCU. */",
                               "sys: getsid: say which lock it takes"),
}


COPY_PROCESS = "__latent_entropy struct task_struct *copy_process("
GETPPID = "SYSCALL_DEFINE0(getppid)"
KSYS_MSGSND = ("long ksys_msgsnd(int msqid, struct msgbuf __user *msgp, "
               "size_t msgsz,")
ONE_NOP = '\tasm volatile("nop");'
TWO_NOPS = '\tasm volatile("nop\\n\\tnop");'


# One instruction more in every process creation, as commit 7dbfd4d of
# the test kernel's tree made it (issue 46's A/Bs).
COPY_PROCESS_NOP = Edit("kernel/fork.c", (Insert(
    ("", ONE_NOP), "\tstruct nsproxy *nsp = current->nsproxy;",
    within=COPY_PROCESS),), "fork: copy_process: one nop after the declarations")
MIDDLE["creation"] = COPY_PROCESS_NOP


# One instruction more on getppid's path: the first step of the steps
# series, and kbench check's where case (in __do_sys_getppid).
GETPPID_NOP = Edit("kernel/sys.c", (Insert((ONE_NOP,), "\tint pid;",
                                          within=GETPPID),),
                   "sys: getppid: one nop first")


def steps_edits() -> List[Edit]:
    """A series whose every step is known in instructions (kbench
    series): getppid +1, no code, ksys_msgsnd +2, ksys_msgsnd -1."""
    return [
        GETPPID_NOP,
        doc_line("The kbench series demo changes no code here.",
                 "Documentation: a file of the kbench series demo"),
        Edit("ipc/msg.c", (Insert((TWO_NOPS,), "\tlong mtype;",
                                  within=KSYS_MSGSND),),
             "ipc: ksys_msgsnd: two nops first"),
        Edit("ipc/msg.c", (Insert((ONE_NOP,), "\tlong mtype;",
                                  within=KSYS_MSGSND),),
             "ipc: ksys_msgsnd: one nop of the two taken back",
             drops=(TWO_NOPS,)),
    ]


def steps20_edits() -> List[Edit]:
    """Issue 43's series of 20: getppid +1, getppid +1, getsid +5,
    getppid -1, ksys_msgsnd +1, each followed by three commits that
    change no code (a line of a documentation file each)."""
    code = [
        GETPPID_NOP,
        Edit("kernel/sys.c", (Insert((ONE_NOP,), "\tint pid;",
                                     within=GETPPID),),
             "sys: getppid: a second nop"),
        MIDDLE["small"],
        Edit("kernel/sys.c", (), "sys: getppid: one of its nops taken back",
             drops=(ONE_NOP,)),
        Edit("ipc/msg.c", (Insert((ONE_NOP,), "\tlong mtype;",
                                  within=KSYS_MSGSND),),
             "ipc: ksys_msgsnd: one nop first"),
    ]
    out: List[Edit] = []
    for n, edit in enumerate(code):
        out.append(edit)
        out += [doc_line(f"Line {3 * n + k} of the kbench series demo.",
                         f"Documentation: series demo, line {3 * n + k}")
                for k in (1, 2, 3)]
    return out


def series_edits(kind: str) -> List[Edit]:
    """The commits of a series, in order: 7 of a bisection's."""
    if kind == "steps":
        return steps_edits()
    if kind == "steps20":
        return steps20_edits()
    return [
        before_getsid("/* getsid(0) is the session id of the caller. */",
                      "sys: say what getsid(0) returns"),
        Edit("init/main.c", (Insert(
            ('\tpr_info("kbench bisect demo: a harmless message at '
             'init\\n");',), "\tkernel_init_freeable();"),),
            "init: say hello from kernel_init()"),
        doc_line("The kbench bisection demo adds this file.",
                 "Documentation: a file of the kbench bisection demo"),
        MIDDLE[kind],
        Edit("kernel/sys.c", (Insert(
            ("/* getpgid(0) is the process group of the caller. */",),
            "SYSCALL_DEFINE1(getpgid, pid_t, pid)", before=True),),
            "sys: say what getpgid(0) returns"),
        Edit("init/main.c", (Insert(
            ("\t/* the demo message is printed above */",),
            "\tasync_synchronize_full();"),),
            "init: a comment in kernel_init()"),
        doc_line("Nothing here changes what the kernel does.",
                 "Documentation: say what the demo's file is for"),
    ]


def body_of(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\n") else line


def inserted(lines: List[bytes], ins: Insert) -> List[bytes]:
    """lines with ins's lines put in, as sed's a\\ and i\\ put them."""
    new = [line.encode() + b"\n" for line in ins.lines]
    if ins.at is None:
        if lines and not lines[-1].endswith(b"\n"):
            lines = lines[:-1] + [lines[-1] + b"\n"]
        return lines + new
    at, within = ins.at.encode(), (ins.within or "").encode()
    out: List[bytes] = []
    inside = False
    for line in lines:
        body = body_of(line)
        first = not inside and (not within or body == within)
        chosen = inside or first
        if chosen and body == at:
            if ins.before:
                out += new + [line]
            else:
                if not line.endswith(b"\n"):
                    line += b"\n"
                out += [line] + new
        else:
            out.append(line)
        # A stretch ends at its first `at` after the line that starts it.
        inside = bool(within) and chosen and not (body == at and not first)
    return out


def dropped(lines: List[bytes], line: str) -> List[bytes]:
    """lines without the first one equal to line."""
    for i, have in enumerate(lines):
        if body_of(have) == line.encode():
            return lines[:i] + lines[i + 1:]
    raise cli.Failure(f"no line '{line}' to drop")


def edited(content: bytes, inserts: Sequence[Insert],
           drops: Sequence[str] = ()) -> bytes:
    lines = content.splitlines(keepends=True)
    for line in drops:
        lines = dropped(lines, line)
    for ins in inserts:
        lines = inserted(lines, ins)
    return b"".join(lines)


# ---- the commits ------------------------------------------------------------

class Series(NamedTuple):
    good: str
    tip: str
    culprit: str  # "" for no-change


class Committer:
    """Commits on the tree's objects without touching its files or
    index: git plumbing on a private index in work, fixed dates."""

    def __init__(self, tree: str, work: str):
        self.tree = tree
        self.index = os.path.join(work, "index")

    def env(self, private_index: bool = False) -> Dict[str, str]:
        env = dict(os.environ, **DEMO_GIT_ENV)
        if private_index:
            env["GIT_INDEX_FILE"] = self.index
        return env

    def git(self, *args: str, private_index: bool = False,
            stdin: Optional[bytes] = None) -> bytes:
        return proc.capture_bytes(["git", "-C", self.tree, *args],
                                  env=self.env(private_index), stdin=stdin)

    def word(self, *args: str, private_index: bool = False) -> str:
        return self.git(*args, private_index=private_index).decode().strip()

    def blob_of(self, rev: str, path: str) -> str:
        """The blob of path at rev, "" when rev has no such file."""
        try:
            return self.word("rev-parse", "-q", "--verify", f"{rev}:{path}")
        except proc.Failed:
            return ""

    def commit(self, parent: str, edit: Edit) -> str:
        """A commit on parent whose file is parent's edited; its hash."""
        old = self.blob_of(parent, edit.path)
        content = self.git("cat-file", "blob", old) if old else NEW_FILE
        blob = self.git("hash-object", "-w", "--stdin",
                        stdin=edited(content, edit.inserts,
                                     edit.drops)).decode().strip()
        if blob == old:
            raise cli.Failure(f"the edit '{edit.subject}' changed nothing "
                              f"in {edit.path}")
        self.git("read-tree", parent, private_index=True)
        self.git("update-index", "--add", "--cacheinfo",
                 f"100644,{blob},{edit.path}", private_index=True)
        tree_id = self.word("write-tree", private_index=True)
        return self.word("commit-tree", tree_id, "-p", parent,
                         "-m", edit.subject)

    def series(self, kind: str) -> Series:
        good = c = self.word("rev-parse", BASE)
        culprit = ""
        for n, edit in enumerate(series_edits(kind)):
            c = self.commit(c, edit)
            if n == 3 and kind != "no-change":
                culprit = c
        return Series(good, c, culprit)

    def getppid_nop(self) -> Series:
        """The base and one commit on it: one nop in getppid()."""
        good = self.word("rev-parse", BASE)
        nop = self.commit(good, GETPPID_NOP)
        return Series(good, nop, nop)


# ---- options ----------------------------------------------------------------

class ToBisect(argparse.Action):
    """An option for scripts/bisect.sh, kept as given, in order; a value
    must be one (not empty, not an option)."""

    def __call__(self, parser: argparse.ArgumentParser,
                 namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        words = list(getattr(namespace, self.dest) or [])
        words.append(option_string or "")
        if self.nargs != 0:
            if not values or values.startswith("-"):
                parser.error(f"invalid {option_string} '{values}'")
            words.append(values)
        setattr(namespace, self.dest, words)


def check_series(ap: argparse.ArgumentParser, option: str,
                 value: Optional[str], kinds: Sequence[str] = SERIES) -> None:
    if value and value not in kinds:
        ap.error(f"invalid {option} '{value}' ({', '.join(kinds[:-1])} or "
                 f"{kinds[-1]})")


def parse(prog: str, argv: Sequence[str]) -> argparse.Namespace:
    ap = cli.UsageParser(prog=prog, help_text=HELP.format(prog=prog))
    ap.add_argument("--only")
    ap.add_argument("--keep")
    ap.add_argument("--series")
    for opt in BISECT_VALUE_OPTIONS:
        ap.add_argument(opt, dest="to_bisect", action=ToBisect, default=[])
    for opt in BISECT_FLAGS:
        ap.add_argument(opt, dest="to_bisect", action=ToBisect, nargs=0)
    a = ap.parse_args(list(argv))
    check_series(ap, "--only", a.only)
    check_series(ap, "--series", a.series, SERIES + MADE_ONLY)
    return a


# ---- the demo ---------------------------------------------------------------

def build_lock(tree: str) -> str:
    """testkernel's build lock, in the cache above the tree."""
    return os.path.join(os.path.dirname(os.path.dirname(tree)),
                        ".lock-build")


def check_out(tree: str, rev: str, *force: str) -> bool:
    with proc.locked(build_lock(tree)):
        return proc.run(["git", "-C", tree, "checkout", "-q", *force,
                         rev]) == 0


@dataclass
class Demo:
    """The demo's bisections: its messages' name, the test kernel's tree,
    a scratch directory, where the states are kept, the options handed
    to every bisection."""
    prog: str
    tree: str
    work: str
    states: str
    to_bisect: Sequence[str]

    def __post_init__(self) -> None:
        self.committer = Committer(self.tree, self.work)

    def bisect(self, s: Series, state: str, target: str = TARGET
               ) -> bisect_run.Outcome:
        """kbench bisect on the series, following row target
        (kbtools.bisect_run), its lines on stdout as it goes; a failed
        setup or a state it cannot read is that series' failure (exit
        3)."""
        args = bisect_run.parse_args(
            ["--tree", self.tree, "--good", BASE, "--bad", s.tip, "-t",
             target, "--state", state, *self.to_bisect], BISECT_PROG)
        try:
            return bisect_run.bisect(args, BISECT_PROG)
        except (cli.Error, cli.Failure, bisect.BisectError,
                results.ResultError) as e:
            msg(BISECT_PROG, str(e))
            return bisect_run.Outcome(str(e), cli.EXIT_SETUP)

    def run(self, kind: str) -> bool:
        """Bisect one series: whether it ended as it must."""
        clock = proc.Clock()
        s = self.committer.series(kind)
        state = os.path.join(self.states, kind)
        shutil.rmtree(state, ignore_errors=True)
        count = self.committer.word("rev-list", "--count",
                                    f"{BASE}..{s.tip}")
        delay = f", the delay in {s.culprit[:12]}" if s.culprit else ""
        msg(self.prog, f"{kind} series: {count} commits on {BASE}, tip "
            f"{s.tip[:12]}{delay}")
        ended = self.bisect(s, state, TARGETS.get(kind, TARGET))
        rc, last = ended.status, ended.line
        msg(self.prog, f"{kind} series: exit {rc} in {clock.seconds()} s")
        if kind == "no-change":
            if rc == 1 and last.startswith("no culprit: "):
                return True
            msg(self.prog, "FAIL: want 'no culprit: ...'")
        else:
            if rc == 0 and last.startswith(f"first bad commit: {s.culprit} "):
                return True
            msg(self.prog, f"FAIL: want 'first bad commit: {s.culprit} ...'")
        return False

    def run_all(self, kinds: Sequence[str]) -> int:
        """Every series on the unpatched branch, the tree put back on its
        own afterwards (a signal included)."""
        os.makedirs(self.states, exist_ok=True)
        orig = kernel.tree_head(self.tree)
        orig = "" if orig == BASE else orig
        try:
            if orig and not check_out(self.tree, BASE, "-f"):
                raise cli.Failure(f"cannot check out {BASE} in {self.tree}")
            bad = [kind for kind in kinds if not self.run(kind)]
            msg(self.prog, "FAIL" if bad else "PASS")
            return 1 if bad else 0
        finally:
            if orig and not check_out(self.tree, orig):
                msg(self.prog, f"could not put {self.tree} back on {orig}")


def print_series(c: Committer, kind: str) -> int:
    s = c.series(kind)
    print(f"good={s.good}\nbad={s.tip}\nculprit={s.culprit}", flush=True)
    return 0


def demo(prog: str, a: argparse.Namespace) -> int:
    tree = kernel.test_kernel_tree(prog)
    if not os.path.isfile(os.path.join(tree, ".kbench-ready")):
        raise cli.Failure("no test kernel tree yet: run testkernel/build.sh "
                          "--unpatched first")
    work = tempfile.mkdtemp(prefix="kbench-bisect-demo.")
    try:
        if a.series:
            return print_series(Committer(tree, work), a.series)
        d = Demo(prog, tree, work, a.keep or work, a.to_bisect)
        return d.run_all([a.only] if a.only else DEFAULT_SERIES)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str], prog: str = "kbench bisect-demo") -> int:
    """scripts/bisect_demo.sh: 0 every series ended as it must, 1
    otherwise, 2 bad usage, 130 interrupted (the tree put back)."""
    a = parse(prog, argv)
    return cli.orchestrate(prog, lambda: demo(prog, a))
