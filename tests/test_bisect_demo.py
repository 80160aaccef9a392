# SPDX-License-Identifier: GPL-2.0
"""scripts/bisect_demo.sh (kbtools.bisect_demo) without building or
booting anything: the series' commits on a small real git tree shaped
like the kernel's (the hashes the bash script made on it, pinned), the
edits as sed made them, the options, and the bisections with the
bisection mocked (its arguments, the verdicts from its outcome
line, the tree put back on its branch, a signal)."""

import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, List, Tuple, Union
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import bisect_demo, bisect_run, cli, kernel, proc  # noqa: E402
from support import quiet  # noqa: E402
import needs  # noqa: E402

SYS_C = (b"#include <linux/kmsg_dump.h>\n\n"
         b"SYSCALL_DEFINE1(getpgid, pid_t, pid)\n{\n\tint retval;\n}\n\n"
         b"SYSCALL_DEFINE1(getsid, pid_t, pid)\n{\n\tstruct task_struct *p;\n"
         b"\tint retval;\n\n\treturn retval;\n}\n\n"
         b"/* Samma p\xc3\xa5 svenska */\n")
MAIN_C = (b"static int kernel_init(void *unused)\n{\n"
          b"\tkernel_init_freeable();\n\tasync_synchronize_full();\n}\n\n"
          b"void f(void)\n{\n\tasync_synchronize_full();\n}\n")
BASE_DATE = "2025-01-01T00:00:00Z"
# What scripts/bisect_demo.sh (bash, before kbtools.bisect_demo) made on
# that tree: (tip, culprit) per series.
GOOD = "20584761514d9964bcc9c3192932a4125cf062a3"
BASH_HASHES = {
    "regression": ("6a69c1d8cdfa3872ca29f94dc61cc94d0e8865e2",
                   "0362bf8dbe9f0949704f1318dd1888a978f7e00a"),
    "no-change": ("71e589ee751ca3314ee559c53ea31b9dd662cb6b", ""),
    "small": ("e20727df2c9d3af645068e4d42c352eee4bb4fa6",
              "fc61bca5903b78db328b90fd8761de77be1a0ff9"),
}


# How a mocked bisection ends for a series (its kind, its arguments):
# (exit status, last line) or an exception raised.
Ends = Callable[[str, List[str]], Union[Tuple[int, str], BaseException]]


def git(tree: str, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_DATE=BASE_DATE,
               GIT_COMMITTER_DATE=BASE_DATE)
    return subprocess.run(["git", "-C", tree, "-c", "user.name=t", "-c",
                           "user.email=t@t", *args], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def small_tree(top: str) -> str:
    """A test kernel's tree in miniature, in its cache layout
    (CACHE/tree-KEY/linux), on branch work, unpatched its base."""
    tree = os.path.join(top, "cache", "tree-x", "linux")
    for path, data in (("kernel/sys.c", SYS_C), ("init/main.c", MAIN_C)):
        os.makedirs(os.path.join(tree, os.path.dirname(path)),
                    exist_ok=True)
        with open(os.path.join(tree, path), "wb") as f:
            f.write(data)
    git(tree, "init", "-q", "-b", "unpatched")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "base")
    git(tree, "checkout", "-q", "-b", "work")
    open(os.path.join(tree, ".kbench-ready"), "w").close()
    return tree


class Edits(unittest.TestCase):
    def edit(self, text: str, *inserts: bisect_demo.Insert) -> str:
        return bisect_demo.edited(text.encode(), inserts).decode()

    def test_before_and_after_every_match(self) -> None:
        I = bisect_demo.Insert
        self.assertEqual("a\nnew\nb\na\nnew\nb\n",
                         self.edit("a\nb\na\nb\n", I(("new",), "a")))
        self.assertEqual("new\na\nb\n",
                         self.edit("a\nb\n", I(("new",), "a", before=True)))

    def test_after_the_last_line(self) -> None:
        I = bisect_demo.Insert
        self.assertEqual("a\nb\nend\n", self.edit("a\nb\n", I(("end",))))
        self.assertEqual("a\nb\nend\n", self.edit("a\nb", I(("end",))))

    def test_within_a_stretch_only(self) -> None:
        """sed's /start/,/at/{/at/a\\...}: the first `at` after each
        start, none before it."""
        ins = bisect_demo.Insert(("", "x"), "r", within="s")
        self.assertEqual("r\ns\nq\nr\n\nx\nr\ns\nr\n\nx\n",
                         self.edit("r\ns\nq\nr\nr\ns\nr\n", ins))

    def test_a_dropped_line(self) -> None:
        self.assertEqual("a\nc\nb\n", bisect_demo.edited(
            b"a\nb\nc\nb\n", (), ("b",)).decode())
        with self.assertRaises(cli.Failure):
            bisect_demo.edited(b"a\n", (), ("b",))

    def test_the_copy_process_nop(self) -> None:
        """creation's culprit: one nop after copy_process()'s
        declarations, as commit 7dbfd4d of the test kernel's tree (the
        nsproxy line ends them there, and nowhere else)."""
        fork_c = ("struct nsproxy *nsp = current->nsproxy;\n"
                  "__latent_entropy struct task_struct *copy_process(\n"
                  "\tconst u64 clone_flags = args->flags;\n"
                  "\tstruct nsproxy *nsp = current->nsproxy;\n\n"
                  "\t/*\n")
        self.assertEqual(fork_c.replace(
            "nsproxy;\n\n\t/*", "nsproxy;\n\n\tasm volatile(\"nop\");\n"
            "\n\t/*"), self.edit(fork_c, *bisect_demo.MIDDLE["creation"].inserts))
        self.assertEqual("proc_create:clone@1.70MB",
                         bisect_demo.TARGETS["creation"])

    def test_the_series_of_kbench_series(self) -> None:
        """steps: four commits; steps20: twenty, the code changed by
        every fourth from the first, a documentation file by the
        others."""
        steps = bisect_demo.series_edits("steps")
        self.assertEqual(["kernel/sys.c", "Documentation/kbench-bisect-demo"
                          ".rst", "ipc/msg.c", "ipc/msg.c"],
                         [e.path for e in steps])
        self.assertEqual((bisect_demo.TWO_NOPS,), steps[3].drops)
        twenty = bisect_demo.series_edits("steps20")
        self.assertEqual(20, len(twenty))
        code = [n for n, e in enumerate(twenty)
                if not e.path.startswith("Documentation/")]
        self.assertEqual([0, 4, 8, 12, 16], code)
        self.assertEqual((bisect_demo.ONE_NOP,), twenty[12].drops)

    def test_a_series_is_seven_commits_the_fourth_its_culprit(self) -> None:
        for kind in bisect_demo.SERIES:
            edits = bisect_demo.series_edits(kind)
            self.assertEqual(7, len(edits))
            self.assertIs(bisect_demo.MIDDLE[kind], edits[3])


@needs.commands("git")
class Commits(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.top = tmp.name
        self.tree = small_tree(self.top)
        self.work = os.path.join(self.top, "work")
        os.mkdir(self.work)

    def series(self, kind: str) -> bisect_demo.Series:
        return bisect_demo.Committer(self.tree, self.work).series(kind)

    def test_the_hashes_the_bash_script_made(self) -> None:
        for kind, (tip, culprit) in BASH_HASHES.items():
            with self.subTest(kind=kind):
                self.assertEqual(bisect_demo.Series(GOOD, tip, culprit),
                                 self.series(kind))

    def test_the_tree_is_left_alone(self) -> None:
        def state() -> List[str]:
            return [git(self.tree, *args) for args in (
                ("rev-parse", "HEAD"), ("branch", "--show-current"),
                ("status", "--porcelain"), ("ls-files", "-s"))]
        before = state()
        self.series("regression")
        self.assertEqual(before, state())

    def test_the_culprit_adds_the_delay(self) -> None:
        s = self.series("regression")
        diff = git(self.tree, "diff", f"{s.culprit}~", s.culprit)
        self.assertIn("+\tndelay(200);", diff)
        self.assertIn("+#include <linux/delay.h>", diff)
        self.assertEqual("7", git(self.tree, "rev-list", "--count",
                                  f"unpatched..{s.tip}"))

    def test_an_edit_that_changes_nothing_fails(self) -> None:
        git(self.tree, "checkout", "-q", "unpatched")
        with open(os.path.join(self.tree, "kernel/sys.c"), "wb") as f:
            f.write(b"nothing the edits look for\n")
        git(self.tree, "commit", "-q", "-am", "no getsid")
        with self.assertRaisesRegex(cli.Failure,
                                    "'sys: say what getsid.0. returns' "
                                    "changed nothing in kernel/sys.c"):
            self.series("regression")

    def test_print_series(self) -> None:
        with mock.patch.object(kernel, "test_kernel_tree",
                               return_value=self.tree):
            rc, out, err = quiet(bisect_demo.main, ["--series", "small"],
                                 "bisect_demo.sh")
        tip, culprit = BASH_HASHES["small"]
        self.assertEqual((0, f"good={GOOD}\nbad={tip}\nculprit={culprit}\n"),
                         (rc, out), err)


class Options(unittest.TestCase):
    def parse(self, *argv: str) -> Any:
        return bisect_demo.parse("bisect_demo.sh", list(argv))

    def test_bisect_options_pass_as_given_in_order(self) -> None:
        a = self.parse("--icount", "-j", "3", "--keep", "k", "--alpha",
                       "0.01", "--jobs", "2", "--accel=tcg")
        self.assertEqual(["--icount", "-j", "3", "--alpha", "0.01",
                          "--jobs", "2", "--accel", "tcg"], a.to_bisect)
        self.assertEqual(([], None, None), (self.parse().to_bisect,
                                            self.parse().only,
                                            self.parse().series))

    def test_bad_usage(self) -> None:
        for argv, said in (
                (["--only", "nothing"], "invalid --only 'nothing' "
                 "(regression, no-change, small or creation)"),
                (["--series", "x"], "invalid --series 'x'"),
                (["--only"], "option '--only' needs a value"),
                (["--alpha", ""], "invalid --alpha ''"),
                (["--max-repeat", "-1"], "invalid --max-repeat '-1'"),
                (["--bogus"], "unknown argument '--bogus'"),
                (["extra"], "unknown argument 'extra'")):
            with self.subTest(argv=argv):
                rc, _, err = quiet(self.parse, *argv)
                self.assertEqual(2, rc)
                self.assertIn(f"bisect_demo.sh: {said}", err)
                self.assertIn("Try 'bisect_demo.sh --help'", err)

    def test_help(self) -> None:
        rc, out, _ = quiet(self.parse, "--help")
        self.assertEqual(0, rc)
        self.assertTrue(out.startswith("Usage: bisect_demo.sh [--only "))
        self.assertIn("no-change", out)


@needs.commands("git")
class Bisections(unittest.TestCase):
    """The demo with the bisection mocked (bisect_run.bisect): its
    outcome says how each series ended. One tree for all, each series
    made once (Commits checks how they are made)."""
    tmp: "tempfile.TemporaryDirectory[str]"
    tree: str
    made: Dict[str, bisect_demo.Series]

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.tree = small_tree(cls.tmp.name)
        cls.made = {}

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def setUp(self) -> None:
        git(self.tree, "checkout", "-q", "work")
        open(os.path.join(self.tree, ".kbench-ready"), "w").close()
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.top = tmp.name
        self.calls: List[List[str]] = []
        self.tmpdir = os.path.join(self.top, "tmp")
        os.mkdir(self.tmpdir)
        make = bisect_demo.Committer.series

        def made_once(committer: bisect_demo.Committer,
                      kind: str) -> bisect_demo.Series:
            if kind not in self.made:
                self.made[kind] = make(committer, kind)
            return self.made[kind]
        patches: List[Any] = [mock.patch.object(kernel, "test_kernel_tree",
                                    return_value=self.tree),
                  mock.patch.object(tempfile, "tempdir", self.tmpdir),
                  mock.patch.object(bisect_demo.Committer, "series",
                                    made_once)]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)

    def bisect(self, ends: Ends) -> Any:
        """A bisection (kbtools.bisect_run.bisect) that ends as
        ends(kind, argv) says: (exit status, last line) or an
        exception; each one's arguments kept in self.calls."""
        def bisect(args: Any, prog: str) -> bisect_run.Outcome:
            argv = ["--tree", args.tree, "--good", args.good, "--bad",
                    args.bad, "-t", *args.test, "--state", args.state]
            argv += ["--icount"] if args.icount else []
            self.calls.append(argv)
            self.assertEqual("unpatched",
                             git(self.tree, "branch", "--show-current"))
            result = ends(os.path.basename(args.state), argv)
            if isinstance(result, BaseException):
                raise result
            print("a step")
            print(result[1])
            return bisect_run.Outcome(result[1], result[0])
        return mock.patch.object(bisect_run, "bisect", bisect)

    def right(self, kind: str, cmd: List[str]) -> Tuple[int, str]:
        if kind == "no-change":
            return 1, "no culprit: good and bad alike"
        tip = cmd[cmd.index("--bad") + 1]
        culprit = git(self.tree, "rev-parse", f"{tip}~3")
        return 0, f"first bad commit: {culprit} sys: getsid: ..."

    def main(self, *argv: str) -> Tuple[Any, str, str]:
        return quiet(bisect_demo.main, list(argv), "bisect_demo.sh")

    def test_both_series_right_is_pass(self) -> None:
        keep = os.path.join(self.top, "keep")
        with self.bisect(self.right):
            rc, out, err = self.main("--keep", keep, "--icount")
        self.assertEqual(0, rc, err)
        self.assertEqual(2, len(self.calls))
        tip = BASH_HASHES["regression"][0]
        self.assertEqual(
            ["--tree",
             self.tree, "--good", "unpatched", "--bad", tip, "-t",
             "syscall_overhead:getsid", "--state",
             os.path.join(keep, "regression"), "--icount"], self.calls[0])
        self.assertIn("bisect_demo.sh: regression series: 7 commits on "
                      f"unpatched, tip {tip[:12]}, the delay in "
                      f"{BASH_HASHES['regression'][1][:12]}\n", err)
        self.assertIn("bisect_demo.sh: no-change series: exit 1 in ", err)
        self.assertTrue(err.endswith("bisect_demo.sh: PASS\n"), err)
        self.assertEqual("work", git(self.tree, "branch", "--show-current"))
        self.assertEqual([], os.listdir(self.tmpdir))
        self.assertTrue(os.path.isdir(keep))

    def test_only_small(self) -> None:
        with self.bisect(self.right):
            rc, _, err = self.main("--only", "small")
        self.assertEqual((0, 1), (rc, len(self.calls)), err)
        self.assertIn("/small", self.calls[0][-1])

    def test_a_wrong_culprit_or_a_culprit_for_no_change_fails(self) -> None:
        def wrong(kind: str, cmd: List[str]) -> Tuple[int, str]:
            if kind == "no-change":
                return 0, "first bad commit: 1234 something"
            return 0, "first bad commit: 1234 something"
        with self.bisect(wrong):
            rc, _, err = self.main()
        self.assertEqual(1, rc)
        culprit = BASH_HASHES["regression"][1]
        self.assertIn(f"FAIL: want 'first bad commit: {culprit} ...'", err)
        self.assertIn("FAIL: want 'no culprit: ...'", err)
        self.assertTrue(err.endswith("bisect_demo.sh: FAIL\n"), err)
        self.assertEqual("work", git(self.tree, "branch", "--show-current"))

    def test_the_right_line_with_the_wrong_status_fails(self) -> None:
        with self.bisect(lambda kind, cmd: (125, self.right(kind, cmd)[1])):
            rc, _, err = self.main()
        self.assertEqual(1, rc)
        self.assertIn("regression series: exit 125 in ", err)

    def test_a_signal_stops_it_and_puts_the_tree_back(self) -> None:
        with self.bisect(lambda kind, cmd: proc.Interrupted(15)):
            rc, _, err = self.main()
        self.assertEqual((130, 1), (rc, len(self.calls)))
        self.assertIn("bisect_demo.sh: interrupted", err)
        self.assertEqual([], os.listdir(self.tmpdir))
        self.assertEqual("work", git(self.tree, "branch", "--show-current"))

    def test_a_tree_on_unpatched_stays_there(self) -> None:
        git(self.tree, "checkout", "-q", "unpatched")
        with self.bisect(self.right):
            rc, _, err = self.main()
        self.assertEqual(0, rc, err)
        self.assertEqual("unpatched",
                         git(self.tree, "branch", "--show-current"))

    def test_no_tree_yet(self) -> None:
        os.unlink(os.path.join(self.tree, ".kbench-ready"))
        with self.bisect(self.right):
            rc, _, err = self.main()
        self.assertEqual((1, []), (rc, self.calls))
        self.assertIn("no test kernel tree yet: run testkernel/build.sh "
                      "--unpatched first", err)


if __name__ == "__main__":
    unittest.main()
