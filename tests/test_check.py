# SPDX-License-Identifier: GPL-2.0
"""kbench check's runner (kbtools.checking) and its table
(kbtools.check): each step's result, time and log (its own output and
its children's), a step that raises is a failure and the run goes on,
the selections of --quick, --vm, --arm64 and STEP, and a missing tool
named with its package."""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, Iterator, List, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import check, checking, cli, packages, proc  # noqa: E402
from support import quiet  # noqa: E402


def passes(c: checking.Check) -> None:
    print("said by the step")
    subprocess.run(["sh", "-c", "echo said by a child; echo to stderr >&2"],
                   check=True)


def skips(c: checking.Check) -> None:
    raise checking.Skip("missing frob (frobnicator)")


def fails(c: checking.Check) -> None:
    print("a line before")
    print("FAIL: the thing")
    raise checking.Fail("it failed")


def raises(c: checking.Check) -> None:
    raise SystemExit(2)


def breaks(c: checking.Check) -> None:
    table: Dict[str, int] = {}
    print(table["no such key"])


def shared_user(name: str, users: Tuple[str, ...], events: List[str],
                left: str = "") -> checking.Step:
    """Step NAME, one of USERS of a shared "lab" that says in events when
    it goes up and down (and fails, saying LEFT, when it goes down with
    one)."""
    @contextlib.contextmanager
    def lab() -> Iterator[str]:
        events.append("up")
        yield "lab"
        events.append("down")
        if left:
            print("destroying")
            raise checking.Fail(left)

    def step(c: checking.Check) -> None:
        with c.shared("the lab", users, lab) as got:
            events.append(f"{name} in {got}")
    step.__name__ = name
    return checking.Step(name, step)

class Runner(unittest.TestCase):
    def run_table(self, steps: List[checking.Step],
                  only: List[str]) -> "tuple[int, str]":
        with tempfile.TemporaryDirectory() as work:
            c = checking.Check(TOP, work)
            # The fd-level redirection of each step needs a real stdout.
            with tempfile.TemporaryFile("w+") as out:
                saved = os.dup(1)
                try:
                    os.dup2(out.fileno(), 1)
                    with mock.patch.object(sys, "stdout",
                                           io.TextIOWrapper(
                                               os.fdopen(1, "wb",
                                                         closefd=False),
                                               write_through=True)):
                        rc = checking.run_steps(c, steps, only)
                        sys.stdout.flush()
                finally:
                    os.dup2(saved, 1)
                    os.close(saved)
                out.seek(0)
                return rc, out.read()

    def test_each_step_its_result_time_and_log(self) -> None:
        steps = [checking.Step(n, f) for n, f in (
            ("passes", passes), ("skips", skips), ("fails", fails),
            ("raises", raises), ("breaks", breaks), ("unselected", passes))]
        rc, out = self.run_table(steps, ["passes", "skips", "fails",
                                         "raises", "breaks"])
        self.assertEqual(1, rc)
        lines = out.splitlines()
        self.assertEqual(["TAP version 13", "1..6"], lines[:2])
        for want in ("ok 1 passes", "ok 2 skips # SKIP missing frob "
                     "(frobnicator)", "not ok 3 fails", "not ok 4 raises",
                     "not ok 5 breaks", "ok 6 unselected # SKIP not selected",
                     "# said by the step", "# said by a child",
                     "# to stderr", "# failure: FAIL: the thing",
                     "# failure: FAIL: it failed",
                     "# failure: FAIL: raises raised SystemExit",
                     "# failure: FAIL: breaks raised KeyError",
                     "1 passed, 3 failed, 2 skipped"):
            self.assertIn(want, lines)
        for name in ("passes", "skips", "fails", "raises", "breaks"):
            self.assertRegex(out, rf"(?m)^# {name}: [0-9]+\.[0-9] s$")
        self.assertRegex(out, r"(?m)^# steps by time: ([a-z]+ [0-9]+ s, ){4}"
                              r"[a-z]+ [0-9]+ s$")
        # The traceback of a step's own bug is in its log.
        self.assertIn("# KeyError: 'no such key'", lines)

    def test_a_shared_context_from_its_first_user_to_its_last(self) -> None:
        events: List[str] = []

        def between(c: checking.Check) -> None:
            events.append("b")
        steps = [shared_user("a", ("a", "c"), events),
                 checking.Step("b", between),
                 shared_user("c", ("a", "c"), events)]
        runs: List[Tuple[List[str], List[str]]] = [
            ([], ["up", "a in lab", "b", "c in lab", "down"]),
            (["a", "b"], ["up", "a in lab", "down", "b"]),
            (["c"], ["up", "c in lab", "down"])]
        for only, want in runs:
            events.clear()
            rc, _ = self.run_table(steps, only)
            self.assertEqual((0, want), (rc, events), only)

    def test_a_shared_context_no_step_left_goes_at_the_end(self) -> None:
        events: List[str] = []

        def skips_first(c: checking.Check) -> None:
            raise checking.Skip("missing git (git)")
        rc, out = self.run_table([
            shared_user("a", ("a", "b"), events,
                        left="destroy left: /var/tmp/lab"),
            checking.Step("b", skips_first)], [])
        self.assertEqual(["up", "a in lab", "down"], events)
        self.assertEqual(1, rc)
        lines = out.splitlines()
        self.assertIn("ok 2 b # SKIP missing git (git)", lines)
        self.assertIn("# destroying", lines)
        self.assertIn("# FAIL: the lab: destroy left: /var/tmp/lab", lines)
        # Said after the steps, every line of it behind '# '.
        self.assertLess(lines.index("ok 2 b # SKIP missing git (git)"),
                        lines.index("# destroying"))

    def test_an_interrupted_run_leaves_the_shared_context(self) -> None:
        events: List[str] = []

        def interrupted(c: checking.Check) -> None:
            raise proc.Interrupted(2)
        steps = [shared_user("a", ("a", "c"), events),
                 checking.Step("b", interrupted),
                 shared_user("c", ("a", "c"), events)]
        with self.assertRaises(proc.Interrupted):
            self.run_table(steps, [])
        self.assertEqual(["up", "a in lab", "down"], events)

    def test_all_pass(self) -> None:
        rc, out = self.run_table([checking.Step("passes", passes)], [])
        self.assertEqual(0, rc)
        self.assertTrue(out.endswith("1 passed, 0 failed, 0 skipped\n"))

    def test_need_names_the_package(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            c = checking.Check(TOP, work)
            with mock.patch.object(shutil, "which",
                                   return_value=None), \
                    self.assertRaisesRegex(checking.Skip,
                                           r"missing shellcheck "
                                           r"\(shellcheck\)"):
                c.need("shellcheck")
            self.assertEqual(["shellcheck"], c.missing)
            with self.assertRaisesRegex(checking.Fail, "no package of "
                                        "packages.txt has no-such-tool"):
                c.need("no-such-tool")
            with self.assertRaisesRegex(checking.Fail, "packages.txt has "
                                        "shellcheck in shellcheck"):
                c.need("shellcheck:other")


    def test_an_interrupted_task_stops_the_run(self) -> None:
        with tempfile.TemporaryDirectory() as work:
            c = checking.Check(TOP, work)
            self.assertEqual(3, c.task(lambda argv, prog: 3, [], "t"))
            with self.assertRaises(proc.Interrupted):
                c.task(lambda argv, prog: cli.EXIT_INTERRUPTED, [], "t")


class Table(unittest.TestCase):
    def names(self, *argv: str) -> List[str]:
        seen: List[str] = []

        def run_steps(c: checking.Check, steps: List[checking.Step],
                      only: List[str]) -> int:
            seen.extend(s.name for s in steps)
            return 0
        # Under another python3 (a pyenv shim) main would start Debian's.
        with mock.patch.object(check, "run_steps", run_steps), \
                mock.patch.object(packages, "other_python",
                                  return_value=False):
            self.assertEqual(0, check.main(list(argv), "t"))
        return seen

    def test_the_selections(self) -> None:
        every = [s.name for s in check.STEPS]
        self.assertEqual(len(every), len(set(every)))
        full = self.names()
        quick = self.names("--quick")
        self.assertEqual([s.name for s in check.STEPS if s.when == ""], quick)
        self.assertEqual([s.name for s in check.STEPS
                          if s.when in ("", "full")], full)
        self.assertIn("in_tree_6_12", set(full) - set(quick))
        vm = self.names("--vm")
        arm64 = self.names("--arm64")
        self.assertEqual(["vm_arm64_6_12", "vm_arm64_icount_aa"],
                         [n for n in arm64 if n not in full])
        self.assertTrue(set(arm64) < set(vm))
        self.assertIn("icount_aa", self.names("--testkernel"))
        # make check-all: every step.
        self.assertEqual(every, self.names("--vm", "--testkernel"))

    def test_bad_usage(self) -> None:
        for argv, want in ((["no_such_step"], "no step 'no_such_step'"),
                           (["--bogus"], "unknown argument '--bogus'"),
                           (["--quick", "in_tree_6_12"],
                            "no step 'in_tree_6_12'")):
            rc, _, err = quiet(check.main, argv, "t")
            self.assertEqual(2, rc, argv)
            self.assertIn(want, err)

    def test_every_step_is_documented(self) -> None:
        with open(os.path.join(TOP, "docs", "project-tests.md"),
                  encoding="utf-8") as f:
            doc = f.read()
        for s in check.STEPS:
            self.assertRegex(doc, rf"`{re.escape(s.name)}`", s.name)

    def test_each_step_a_function_of_its_check(self) -> None:
        for s in check.STEPS:
            f: Callable[[checking.Check], None] = s.run
            self.assertEqual(s.name, f.__name__, s.name)


class ExactRows(unittest.TestCase):
    """The exact verdicts of an A/A or A/B (check_guests.exact_rows): an
    exact row that moved without a verdict fails; a near one (arm64's
    clone, bounded by its prior) within its margin does not."""

    def verdicts(self, clone_class: str) -> str:
        from kbtools import check_guests, compare, results
        rows = [compare.Entry(test="syscall_overhead", name=name,
                              verdict=compare.Verdict.SAME,
                              clock=results.ClockMode.ICOUNT,
                              row_class=cls, delta=delta)
                for name, cls, delta in (("getpid", "exact", 0.0),
                                         ("clone", clone_class, -247.75))]
        got = compare.Comparison(text="{}", entries=rows, over=[])
        with tempfile.TemporaryDirectory() as work, \
                mock.patch.object(compare, "comparison", return_value=got):
            c = checking.Check(TOP, work)
            out = io.StringIO()
            with mock.patch("sys.stdout", out):
                check_guests.exact_rows(c, os.path.join(work, "aa"),
                                        {"getpid": "same:exact"})
            return out.getvalue()

    def test_a_moved_exact_row_fails(self) -> None:
        with self.assertRaises(checking.Fail):
            self.verdicts("exact")

    def test_a_near_row_within_its_margin_does_not(self) -> None:
        self.assertIn("getpid: same (exact)", self.verdicts("near"))


class WhereStep(unittest.TestCase):
    """icount_where: kbench where on the test kernel's one-nop commit
    against its base (the builds and boots mocked), with --expect of
    the function that holds the nop; a where that exits 1 fails it."""

    def step(self, where_rc: int, plugin_rc: int = 0, series_rc: int = 0,
             summary: str = "1/1 sys: +1.00 insn on getppid (+0.30%)\n"
             "    in __do_sys_getppid +1.000\nFunctions ('in') counted by "
             "kbench's QEMU plugin.\n") -> List[List[str]]:
        from kbtools import (bisect_demo, check_guests, kernel, series,
                             where)
        argv: List[List[str]] = []

        def where_main(args: List[str], prog: str) -> int:
            argv.append(args)
            return plugin_rc if "--plugin" in args else where_rc

        def series_main(args: List[str], prog: str) -> int:
            argv.append(args)
            with open(args[args.index("--summary") + 1], "w") as f:
                f.write(summary)
            return series_rc

        def build(req: kernel.CommitBuild, prog: str) -> kernel.CommitImage:
            return kernel.CommitImage(f"/img/{req.rev}", "", req.rev)
        one_nop = bisect_demo.Series("good", "nop", "nop")
        with tempfile.TemporaryDirectory() as work, \
                mock.patch.object(kernel, "test_kernels"), \
                mock.patch.object(kernel, "test_kernel_tree",
                                  return_value="/tree"), \
                mock.patch.object(bisect_demo.Committer, "getppid_nop",
                                  return_value=one_nop), \
                mock.patch.object(kernel, "build_commit", build), \
                mock.patch.object(where, "main", where_main), \
                mock.patch.object(series, "main", series_main), \
                mock.patch.object(checking.Check, "need"), \
                contextlib.redirect_stdout(io.StringIO()):
            check_guests.icount_where(checking.Check(TOP, work))
        return argv

    def test_the_nop_is_expected_in_its_function(self) -> None:
        ftrace, plugin, in_series = self.step(0)
        self.assertEqual(["--tree", "/tree", "good..nop", "-t",
                          "syscall_overhead:getppid", "--where",
                          "--where-with", "plugin"], in_series[:8])
        for argv in (ftrace, plugin):
            self.assertEqual(["--kernel", "/img/good", "--vs-kernel",
                              "/img/nop", "-t", "syscall_overhead:getppid",
                              "--expect", "__do_sys_getppid:+1"], argv[:8])
        self.assertNotIn("--plugin", ftrace)
        self.assertIn("--plugin", plugin)

    def test_a_where_not_as_expected_fails(self) -> None:
        with self.assertRaisesRegex(checking.Fail, "where exited 1"):
            self.step(1)
        with self.assertRaisesRegex(checking.Fail,
                                    "where --plugin exited 1"):
            self.step(0, 1)

    def test_a_series_without_the_function_fails(self) -> None:
        with self.assertRaisesRegex(checking.Fail,
                                    "series --where exited 1"):
            self.step(0, 0, 1)
        for summary in ("1/1 sys: +1.00 insn on getppid\n    in "
                        "__do_sys_getppid +1.000, x64_sys_call +0.500\n"
                        "Functions ('in') counted by kbench's QEMU plugin.\n",
                        "    in __do_sys_getppid +1.000\nFunctions ('in') "
                        "counted by ftrace's function_graph tracer.\n"):
            with self.subTest(summary=summary), \
                    self.assertRaisesRegex(checking.Fail,
                                           "does not read 'in "
                                           "__do_sys_getppid \\+1.000'"):
                self.step(0, summary=summary)

    def test_no_plugin_header_skips_after_the_ftrace_half(self) -> None:
        with self.assertRaisesRegex(checking.Skip, "no plugin header"):
            self.step(0, 3)
        with self.assertRaisesRegex(checking.Fail, "where exited 3"):
            self.step(3, 0)

    def test_the_commit_is_the_series_one(self) -> None:
        from kbtools import bisect_demo
        self.assertIs(bisect_demo.GETPPID_NOP, bisect_demo.steps_edits()[0])
        self.assertIs(bisect_demo.GETPPID_NOP,
                      bisect_demo.steps20_edits()[0])


def series_doc(steps: Dict[int, Dict[str, float]], commits: int = 3,
               adds_up: bool = True) -> Dict[str, Any]:
    """kbench series' JSON, as much as lava_series reads: exact rows
    getpid, getppid and msgsnd_rcv (each commit's step from steps, +0
    when not there; a commit missing from steps did not boot), a noisy
    row that moves, and each exact row's check."""
    rows = ("getpid", "getppid", "msgsnd_rcv")
    records: List[Dict[str, Any]] = [
        {"n": 0, "test": "syscall_overhead", "row": r, "class": "exact",
         "step_insn": None, "step_verdict": "base"} for r in rows]
    for n in range(1, commits + 1):
        if n not in steps:
            continue
        for r in rows:
            step = steps[n].get(r, 0.001)
            records.append({
                "n": n, "test": "syscall_overhead", "row": r,
                "class": "exact", "step_insn": step,
                "step_verdict": "slower" if step >= 0.5 else
                "faster" if step <= -0.5 else "same"})
        records.append({"n": n, "test": "syscall_overhead", "row": "fork",
                        "class": "noisy", "step_insn": 900.0,
                        "step_verdict": "same"})
    return {"records": records, "checks": [
        {"row": f"syscall_overhead:{r}", "adds_up": adds_up}
        for r in rows]}


class LavaSeriesStep(unittest.TestCase):
    """lava_series: kbench series --lava on three commits through the
    local lab (the lab, the builds and the series mocked); each exact
    step as LAVA_SERIES_STEPS has it, or the step fails."""

    RIGHT: Dict[int, Dict[str, float]] = {
        1: {"getppid": 0.999}, 2: {}, 3: {"msgsnd_rcv": 2.0}}

    def steps(self, doc: Dict[str, Any]) -> str:
        from kbtools import check_guests
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "series.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            out = io.StringIO()
            with mock.patch("sys.stdout", out):
                check_guests.series_steps(path,
                                          check_guests.LAVA_SERIES_STEPS)
            return out.getvalue()

    def test_the_steps_as_expected(self) -> None:
        said = self.steps(series_doc(self.RIGHT))
        self.assertIn("ok: commit 1 getppid: step 0.999 insn, slower "
                      "(want +1, slower)", said)
        self.assertIn("ok: commit 3 msgsnd_rcv: step 2.0 insn, slower "
                      "(want +2, slower)", said)
        self.assertNotIn("fork", said)
        self.assertNotIn("FAIL", said)

    def test_a_wrong_step_fails(self) -> None:
        none: Dict[str, float] = {}
        cases: List[Tuple[Dict[int, Dict[str, float]], str]] = [
            ({**self.RIGHT, 3: {"msgsnd_rcv": 1.0}},
             "commit 3 msgsnd_rcv: 1.0 insn, slower, want \\+2"),
            ({**self.RIGHT, 2: {"getpid": 1.0}},
             "commit 2 getpid: 1.0 insn, slower, want \\+0"),
            ({**self.RIGHT, 1: none},
             "commit 1 getppid: 0.001 insn, same, want \\+1"),
            ({1: self.RIGHT[1], 3: self.RIGHT[3]},
             "commit 2: no exact row; exact rows for 2 commits, "
             "want 3")]
        for steps, want in cases:
            with self.subTest(want=want), \
                    self.assertRaisesRegex(checking.Fail, want):
                self.steps(series_doc(steps))

    def test_steps_that_do_not_add_up_fail(self) -> None:
        with self.assertRaisesRegex(checking.Fail, "syscall_overhead:getpid:"
                                    " the steps do not add up"):
            self.steps(series_doc(self.RIGHT, adds_up=False))
        doc = series_doc(self.RIGHT)
        doc["checks"] = doc["checks"][1:]
        with self.assertRaisesRegex(checking.Fail, "syscall_overhead:getpid:"
                                    " no check that its steps add up"):
            self.steps(doc)

    def run_step(self, series_rc: int, doc: Dict[str, Any]
                 ) -> List[str]:
        """The step with a lab under WORK/lab: series.main's argv."""
        from kbtools import (bisect_demo, check_guests, kernel, lava_local,
                             series)
        argv: List[str] = []
        events: List[str] = []

        def series_main(args: List[str], prog: str) -> int:
            argv.extend(args)
            self.assertEqual("t0ken", os.environ.get(series.LAVA_TOKEN))
            out = args[args.index("--json") + 1]
            os.makedirs(out)
            with open(os.path.join(out, "series.json"), "w",
                      encoding="utf-8") as f:
                json.dump(doc, f)
            return series_rc

        with tempfile.TemporaryDirectory() as work:
            @contextlib.contextmanager
            def lab(c: checking.Check) -> Iterator[str]:
                events.append("up")
                yield os.path.join(work, "lab")
                events.append("down")
            hashes = iter(["c1", "c2", "c3"])
            with mock.patch.object(kernel, "test_kernels"), \
                    mock.patch.object(kernel, "test_kernel_tree",
                                      return_value="/tree"), \
                    mock.patch.object(bisect_demo.Committer, "word",
                                      return_value="base"), \
                    mock.patch.object(bisect_demo.Committer, "commit",
                                      side_effect=lambda p, e: next(hashes)), \
                    mock.patch.object(check_guests, "local_lab", lab), \
                    mock.patch.object(lava_local.Lab, "make_guest"), \
                    mock.patch.object(lava_local.Lab, "pack_guest"), \
                    mock.patch.object(lava_local.Lab, "admin_token",
                                      return_value="t0ken"), \
                    mock.patch.object(series, "main", series_main), \
                    mock.patch.object(checking.Check, "need"), \
                    mock.patch("sys.stdout", io.StringIO()):
                c = checking.Check(TOP, work)
                try:
                    check_guests.lava_series(c)
                finally:
                    self.assertEqual(["up", "down"], events)
            return [a.replace(work, "WORK") for a in argv]

    def test_the_series_through_the_lab(self) -> None:
        argv = self.run_step(0, series_doc(self.RIGHT))
        self.assertEqual(["--tree", "/tree", "base..c3", "-t",
                          "syscall_overhead", "--lava",
                          "http://127.0.0.1:8790", "--lava-images",
                          "WORK/lab/root/srv/kbench/series",
                          "--lava-images-url", "file:///srv/kbench/series",
                          "--lava-rootfs", "file:///srv/kbench/rootfs.cpio",
                          "--lava-init", "/sbin/kbench-init"], argv[:15])

    def test_a_series_that_fails_or_reads_wrong_fails_the_step(self) -> None:
        with self.assertRaisesRegex(checking.Fail,
                                    "kbench series --lava exited 1"):
            self.run_step(1, series_doc(self.RIGHT))
        with self.assertRaisesRegex(checking.Fail, "commit 1 getppid"):
            self.run_step(0, series_doc({**self.RIGHT, 1: {"getpid": 0}}))


if __name__ == "__main__":
    unittest.main()
