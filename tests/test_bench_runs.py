# SPDX-License-Identifier: GPL-2.0
"""The bench scripts (kbtools.bench, kbtools.verdict_ab) with every
program mocked (proc.output, proc.run, proc.capture): the command lines,
the order of the runs, the lines printed and the exit status, a program
that fails, a peer that is missing, bad usage. The table scripts'
own lines are tests/test_bench_tables.py's."""

import json
import os
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import bench, bench_tables, compare, proc  # noqa: E402
from kbtools import runner, verdict_ab  # noqa: E402
from support import quiet  # noqa: E402


class Programs:
    """Stands in for every program: output[name](cmd) gives (status,
    stdout) for proc.output; run[name](cmd) a status for proc.run;
    every command line is kept."""

    def __init__(self, test: unittest.TestCase,
                 output: Optional[Dict[str, Callable[..., Tuple[int, str]]]]
                 = None,
                 run: Optional[Dict[str, Callable[..., int]]] = None,
                 capture: Optional[Dict[str, Callable[..., str]]] = None
                 ) -> None:
        self.cmds: List[List[str]] = []
        self.output = output or {}
        self.run = run or {}
        self.capture = capture or {}
        for name in ("output", "run", "capture"):
            p = mock.patch.object(proc, name, side_effect=getattr(
                self, f"_{name}"))
            p.start()
            test.addCleanup(p.stop)

    @staticmethod
    def name(cmd: Sequence[str]) -> str:
        if cmd[0] == sys.executable:
            return os.path.basename(cmd[1])
        return os.path.basename(cmd[0])

    def _output(self, cmd: Sequence[str]) -> Tuple[int, str]:
        self.cmds.append(list(cmd))
        return self.output.get(self.name(cmd), lambda c: (0, ""))(cmd)

    def _run(self, cmd: Sequence[str], **kw: Any) -> int:
        self.cmds.append(list(cmd))
        return self.run.get(self.name(cmd), lambda c, **k: 0)(cmd, **kw)

    def _capture(self, cmd: Sequence[str]) -> str:
        self.cmds.append(list(cmd))
        return self.capture[self.name(cmd)](cmd)

    def named(self, name: str) -> List[List[str]]:
        return [c for c in self.cmds if self.name(c) == name]


class Tables:
    """Stands in for kbtools.bench_tables: each table records what it was
    given (a document, or compare_dir's arguments) and prints nothing."""

    def __init__(self, test: unittest.TestCase) -> None:
        self.calls: List[Tuple[str, Any]] = []

        def seed_rows(outdir: str, sizes: Sequence[str]
                      ) -> Tuple[Dict[str, Any], str]:
            self.calls.append(("seed_rows", (outdir, list(sizes))))
            return {}, "k"

        def seed_goal(rows: Dict[str, Any], goal: float) -> int:
            self.calls.append(("seed_goal", goal))
            return 0

        def compare_dir(*given: Any) -> int:
            self.calls.append(("compare_dir", given))
            return 0
        fakes: Dict[str, Any] = {
            name: self.lines_of(name)
            for name in ("memcg_table", "fork_table", "book_table")}
        fakes.update(seed_rows=seed_rows, seed_goal=seed_goal,
                     seed_tables=lambda rows, kernel, sizes: None,
                     compare_dir=compare_dir)
        for name, fake in fakes.items():
            p = mock.patch.object(bench_tables, name, fake)
            p.start()
            test.addCleanup(p.stop)

    def lines_of(self, name: str) -> Callable[[Dict[str, Any]], List[str]]:
        def table(doc: Dict[str, Any]) -> List[str]:
            self.calls.append((name, doc))
            return []
        return table

    def named(self, name: str) -> List[Any]:
        return [given for n, given in self.calls if n == name]


def writes_json(doc: Dict[str, Any], status: int = 0, stdout: str = ""
                ) -> Callable[[Sequence[str]], Tuple[int, str]]:
    """A program that writes doc to its --json file."""
    def run(cmd: Sequence[str]) -> Tuple[int, str]:
        path = next(w[len("--json="):] for w in cmd
                    if w.startswith("--json=")) if "--json" not in cmd \
            else cmd[cmd.index("--json") + 1]
        with open(path, "w") as f:
            json.dump(doc, f)
        return status, stdout
    return run


class SyscallVsPerf(unittest.TestCase):
    def test_rounds_interleaved_and_the_table(self) -> None:
        means = iter([0.410, 0.430])
        perf = iter(["  0.400 usecs/op\n", " 0.420 usecs/op\n"])
        p = Programs(self, output={"syscall_overhead": lambda c: writes_json(
            {"rows": [{"mean": next(means)}]})(c)},
            capture={"perf": lambda c: "# Running\n" + next(perf)})
        with mock.patch("shutil.which", return_value="/usr/bin/perf"):
            rc, out, err = quiet(bench.syscall_vs_perf_main, ["2"], "svp")
        self.assertEqual(0, rc, err)
        self.assertEqual(["make", "perf", "syscall_overhead", "perf",
                          "syscall_overhead"],
                         [p.name(c) for c in p.cmds])
        self.assertEqual([
            "getppid() ns per call, 2 interleaved rounds",
            " " * 37 + "    best   median   rounds",
            "perf bench syscall basic              400.000      410"
            "   400.000 420.000",
            "kbench syscall_overhead -t getppid    410.000      420"
            "   410.000 430.000",
            "ratio kbench/perf: best 1.025 (within 10%), median 1.024"],
            out.splitlines())

    def test_median_as_awk_printed_it(self) -> None:
        self.assertEqual("2.25", bench.awk_median(["3", "1.5", "2.25"]))
        self.assertEqual("100.118", bench.awk_median(["101.234", "99.001"]))
        self.assertEqual("1234.57", bench.awk_median(["1234.567",
                                                      "1234.568"]))

    def test_no_perf_is_4_and_bad_rounds_2(self) -> None:
        with mock.patch("shutil.which", return_value=None):
            rc, _, err = quiet(bench.syscall_vs_perf_main, [], "svp")
        self.assertEqual(4, rc)
        self.assertIn("svp: perf not found: apt-get install linux-perf", err)
        for argv in (["0"], ["x"], ["1", "2"], ["--bogus"]):
            rc, _, err = quiet(bench.syscall_vs_perf_main, argv, "svp")
            self.assertEqual(2, rc, argv)
            self.assertIn("Try 'svp --help'", err)


class TaskstatsSeed(unittest.TestCase):
    KTAP = "ok 1 netlink_per_pid\nok 5 ioctl # SKIP no /proc/taskstats\n"

    def test_each_size_then_the_table(self) -> None:
        p = Programs(self, output={"taskstats": lambda c: writes_json(
            {"rows": []}, 0, self.KTAP)(c)})
        t = Tables(self)
        with tempfile.TemporaryDirectory() as d:
            rc, _, err = quiet(bench.taskstats_seed_main,
                               ["-o", d, "-p", "2", "-s", "50 100"], "ts")
            self.assertEqual(["taskstats_50.json", "taskstats_50.ktap",
                              "taskstats_100.json", "taskstats_100.ktap"],
                             sorted(os.listdir(d), key=lambda n: (len(n),
                                                                  n)))
        self.assertEqual(0, rc, err)
        first = p.named("taskstats")[0]
        self.assertEqual(["-N", "50", "-p", "2", "-K", "64", "-t",
                          bench.TASKSTATS_ROWS, "--json"], first[1:10])
        self.assertEqual([(d, ["50", "100"])], t.named("seed_rows"))
        self.assertEqual([1.2], t.named("seed_goal"))
        self.assertIn("== 100 processes: taskstats -N 100 -p 2 -K 64\n"
                      "ok 5 ioctl # SKIP no /proc/taskstats\n", err)

    def test_a_size_that_fails_ends_it(self) -> None:
        ktap = "# a\nok 1 x\nnot ok 2 y\n"
        p = Programs(self, output={"taskstats": lambda c: (1, ktap)})
        t = Tables(self)
        rc, _, err = quiet(bench.taskstats_seed_main, ["-s", "50 100"], "ts")
        self.assertEqual((1, 1), (rc, len(p.named("taskstats"))))
        self.assertTrue(err.endswith("taskstats -N 50 failed; see below\n"
                                     "# a\nnot ok 2 y\n"), err)
        self.assertEqual([], t.calls)


class MemcgStatRead(unittest.TestCase):
    def test_arguments_are_memcg_ks_and_failures_said(self) -> None:
        p = Programs(self, output={"memcg_ks": writes_json(
            {"rows": []}, 1, "ok 1 a\nnot ok 2 b\n")})
        t = Tables(self)
        rc, _, err = quiet(bench.memcg_stat_read_main, ["-n", "200"], "msr")
        self.assertEqual(0, rc, err)
        self.assertEqual(["-n", "200"], p.named("memcg_ks")[0][3:])
        self.assertEqual("msr: some memcg_ks tests failed:\nnot ok 2 b\n",
                         err)
        self.assertEqual([{"rows": []}], t.named("memcg_table"))

    def test_no_results(self) -> None:
        for status, want in ((2, 2), (1, 1), (0, 1)):
            Programs(self, output={"memcg_ks": lambda c: (status, "ktap\n")})
            rc, _, err = quiet(bench.memcg_stat_read_main, ["-x"], "msr")
            self.assertEqual(want, rc)
            self.assertEqual(f"ktap\nmsr: memcg_ks exited {status} without "
                             "results\n", err)

    def test_help(self) -> None:
        rc, out, _ = quiet(bench.memcg_stat_read_main, ["--help"], "msr")
        self.assertEqual(0, rc)
        self.assertIn("Usage: msr [memcg_ks options...]", out)


class PmqtestVsRttests(unittest.TestCase):
    def setUp(self) -> None:
        env = mock.patch.dict(os.environ, {"LOOPS": "300", "PRIO": "70",
                                           "RTTESTS_PMQTEST": "/bin/true"})
        env.start()
        self.addCleanup(env.stop)
        for name in ("ROUNDS", "INTERVAL", "MAX_RATIO"):
            os.environ.pop(name, None)

    def test_rounds_alternate_and_the_configurations(self) -> None:
        theirs = "true"

        def helps(cmd: Sequence[str], log: str) -> int:
            with open(log, "w") as f:
                f.write("pmqtest V 2.40\nUsage: ...\n")
            return 0
        p = Programs(self, output={n: writes_json({}) for n in
                                   ("pmqtest", theirs)},
                     run={theirs: helps})
        t = Tables(self)
        with mock.patch.object(proc, "succeeds", return_value=False):
            rc, out, err = quiet(bench.pmqtest_vs_rttests_main, ["2"], "pvr")
        self.assertEqual(0, rc, err)
        runs = [(p.name(c), c[-1].rsplit("/", 1)[1]) for c in p.cmds
                if c[-1].startswith("--json=")]
        self.assertEqual([(theirs, "c0_r1_theirs.json"),
                          ("pmqtest", "c0_r1_ours.json"),
                          ("pmqtest", "c0_r2_ours.json"),
                          (theirs, "c0_r2_theirs.json")], runs)
        self.assertEqual(["-S", "-l", "300", "-i", "100", "-q"],
                         p.named("pmqtest")[0][1:-1])
        (d, configs, rounds, ratio), = t.named("compare_dir")
        self.assertEqual((1, 2, 1.10), (configs, rounds, ratio))
        self.assertEqual([
            "# no SCHED_FIFO privilege: skipping the -p 70 configuration",
            "# rt-tests: /bin/true (pmqtest V 2.40)"],
            out.splitlines()[:2])

    def test_no_rt_tests_is_4(self) -> None:
        os.environ["RTTESTS_PMQTEST"] = "/nonexistent"
        rc, _, err = quiet(bench.pmqtest_vs_rttests_main, [], "pvr")
        self.assertEqual((4, "rt-tests pmqtest not found at /nonexistent "
                          "(apt-get install rt-tests)\n"), (rc, err))


class ProcCreate(unittest.TestCase):
    def test_fork_vs_size_keeps_the_json_when_asked(self) -> None:
        p = Programs(self, output={"proc_create": writes_json({"rows": []})})
        t = Tables(self)
        rc, out, err = quiet(bench.fork_vs_size_main,
                             ["-n", "20", "-m", "16M", "-k"], "fvs")
        self.assertEqual(0, rc, err)
        self.assertEqual([{"rows": []}], t.named("fork_table"))
        doc = p.named("proc_create")[0][-1]
        self.assertTrue(os.path.isfile(doc))
        os.unlink(doc)
        self.assertEqual(["-t", "fork,vfork,posix_spawn", "-m", "16M",
                          "-n", "20", "-T", "3", "--json", doc],
                         p.named("proc_create")[0][1:])
        lines = out.splitlines()
        self.assertEqual(("proc_create -t fork,vfork,posix_spawn -m 16M -n "
                          "20 -T 3", f"JSON: {doc}"), (lines[0], lines[2]))
        self.assertTrue(lines[1].startswith("wall time: "))

    def test_proc_create_that_fails_ends_with_its_status(self) -> None:
        Programs(self, output={"proc_create": lambda c: (3, "")})
        with mock.patch.object(tempfile, "tempdir",
                               tempfile.mkdtemp()) as d:
            rc, _, err = quiet(bench.fork_vs_size_main, [], "fvs")
            self.assertEqual([], os.listdir(d))
            os.rmdir(d)
        self.assertEqual((3, "fvs: proc_create exited with 3\n"), (rc, err))

    def test_book_of_a_given_json_or_a_quick_run(self) -> None:
        p = Programs(self, output={"proc_create": writes_json({})})
        t = Tables(self)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write('{"rows": []}')
            f.flush()
            rc, _, _ = quiet(bench.proc_create_vs_book_main, [f.name],
                             "pcb")
        self.assertEqual((0, [], [{"rows": []}]),
                         (rc, p.cmds, t.named("book_table")))
        rc, _, _ = quiet(bench.proc_create_vs_book_main, [], "pcb")
        self.assertEqual(["-m", "none", "--json"],
                         p.named("proc_create")[0][1:4])
        for argv in (["/nonexistent.json"], ["a", "b"]):
            rc, _, err = quiet(bench.proc_create_vs_book_main, argv, "pcb")
            self.assertEqual(2, rc)

    def test_a_build_that_fails(self) -> None:
        Programs(self, output={"make": lambda c: (2, "")})
        rc, _, err = quiet(bench.proc_create_vs_book_main, [], "pcb")
        self.assertEqual(1, rc)
        self.assertIn("pcb: make -s -C ", err)


COMPARE = """\
  getpid   0.238 us  1.2%  x1.477       -  0.33  -  0.6%    -  {0}
  getppid   0.28 us  1.7%  x1.388       -  0.33  -  1.0%    -  {1}
  fork      120 us  1.7%  x1.01       -  0.33  -  1.0%    -  {2}
  checks_ok    -  ok
"""


class VerdictAb(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.out = tmp.name
        # The runs themselves (kbtools.runner, tested on its own).
        runs = mock.patch.object(runner, "run_logged", return_value=0)
        self.runs = runs.start()
        self.addCleanup(runs.stop)

    def programs(self, verdicts: Dict[str, Tuple[str, ...]]) -> Programs:
        """kbtools.compare answers verdicts[label] for each run."""
        def comparison(req: compare.Request) -> compare.Comparison:
            return compare.Comparison(
                COMPARE.format(*verdicts[req.labels[1]]), [], [])
        p = mock.patch.object(compare, "comparison", comparison)
        p.start()
        self.addCleanup(p.stop)
        return Programs(self, capture={
            "seccomp_wrap": lambda c: "compares=50 ratio=1.4\n"})

    def main(self, *argv: str) -> Tuple[Any, str, str]:
        return quiet(verdict_ab.main, ["--out", self.out, *argv], "va.sh")

    def test_all_expectations_met(self) -> None:
        p = self.programs({"aa1": ("same",) * 3, "seccomp50": (
            "slower", "slower", "same")})
        rc, out, err = self.main("--trials", "1", "--compares", "50", "-r",
                                 "2", "-t", "syscall_overhead", "-t",
                                 "proc_create")
        self.assertEqual(0, rc, err)
        self.assertEqual([
            "A/A trial 1: 0 of 3 rows slower/faster",
            "seccomp filter, 50 compares: direct compares=50 ratio=1.4",
            "    direct after the run: compares=50 ratio=1.4",
            "      getpid   0.238 us  1.2%  x1.477       -  0.33  -  0.6%"
            "    -  slower",
            "      getppid   0.28 us  1.7%  x1.388       -  0.33  -  1.0%"
            "    -  slower",
            "va.sh: all expectations met"], out.splitlines())
        wrap = os.path.join(self.out, "seccomp_wrap")
        d = os.path.join(self.out, "seccomp50")
        self.assertEqual(
            (["--no-build", "-t", "syscall_overhead", "-t", "proc_create",
              "--vs-prefix", f"{wrap} -n 50", "--repeat", "2", "--json", d],
             "kbench run", f"{d}.ktap", f"{d}.err"),
            self.runs.call_args_list[1][0])
        self.assertEqual(["TESTS=syscall_overhead proc_create", "all"],
                         p.named("make")[0][-2:])
        with open(os.path.join(self.out, "aa1.txt")) as f:
            self.assertIn("  getpid ", f.read())

    def test_a_row_that_moves_fails(self) -> None:
        self.programs({"aa1": ("same", "faster", "same"), "seccomp0": (
            "slower", "no-verdict", "slower")})
        rc, out, _ = self.main("--trials", "1", "--compares", "0")
        self.assertEqual(1, rc)
        lines = out.splitlines()
        self.assertEqual("A/A trial 1: 1 of 3 rows slower/faster", lines[0])
        self.assertIn("    FAIL: a null-syscall row is not 'slower'", lines)
        self.assertTrue(lines[-2].startswith("    other changed row:   fork"))
        self.assertEqual("va.sh: an expectation failed (figures above)",
                         lines[-1])

    def test_no_aa_no_seccomp(self) -> None:
        p = self.programs({})
        rc, out, _ = self.main("--no-aa", "--no-seccomp")
        self.assertEqual((0, "va.sh: all expectations met\n", ["make"]),
                         (rc, out, [p.name(c) for c in p.cmds]))

    def test_bad_usage(self) -> None:
        for argv in (["-r", "0"], ["--trials", "x"], ["--compares", "1,,2"],
                     ["-t"], ["--bogus"]):
            rc, _, err = quiet(verdict_ab.main, argv, "va.sh")
            self.assertEqual(2, rc, argv)
            self.assertIn("Try 'va.sh --help'", err)


if __name__ == "__main__":
    unittest.main()
