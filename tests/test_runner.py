# SPDX-License-Identifier: GPL-2.0
"""kbtools.runner: the host's loop that runs a plan (kbtools.plan): each
program under timeout(1), its KTAP nested, the result lines and totals
as run_all.sh prints them, bad usage, a signal. subprocess.Popen is mocked
(as kunit_tool_test does): no program runs."""

import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import unittest.mock
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import cli, collection, design, packages, policy  # noqa: E402
from kbtools import proc  # noqa: E402
from kbtools import results, runner  # noqa: E402
from support import quiet  # noqa: E402

PROGRAMS = ("syscall_overhead:syscall_overhead", "pmqtest:pmqtest")


class FakeChild:
    """A Popen that prints its lines and exits with its status."""

    def __init__(self, lines: List[bytes], status: int):
        self.stdout = io.BytesIO(b"".join(lines))
        self.status = status
        self.pid = 1

    def wait(self, timeout: Any = None) -> int:
        return self.status


class Loop(unittest.TestCase):
    def setUp(self) -> None:
        self.cmds: List[List[str]] = []
        self.statuses: Dict[str, int] = {}

    def popen(self, cmd: List[str], **kw: Any) -> FakeChild:
        self.cmds.append(cmd)
        self.assertEqual(kw["stderr"], subprocess.STDOUT)
        name = next(w for w in cmd if w.startswith("./"))[2:]
        return FakeChild([b"TAP version 13\n", b"1..1\n", b"ok 1 x\n"],
                         self.statuses.get(name, 0))

    def run_all(self, argv: List[str]) -> Any:
        """(exit status, stdout, stderr) of run_all.sh ARGV."""
        with unittest.mock.patch.object(subprocess, "Popen",
                                        self.popen), \
                unittest.mock.patch.object(collection, "tests",
                                           return_value=["pmqtest"]), \
                unittest.mock.patch.object(collection, "check_tests"), \
                unittest.mock.patch.object(collection, "programs",
                                           return_value=list(PROGRAMS)):
            return quiet(runner.main, ["--no-build", *argv], "run_all.sh")

    def test_stream_nested_and_totals(self) -> None:
        self.statuses = {"pmqtest": 4}
        rc, out, _ = self.run_all(["-t", "pmqtest"])
        self.assertEqual(rc, 0)
        self.assertEqual(out.splitlines(), [
            "TAP version 13", "1..2",
            "# selftests: kbench/syscall_overhead: syscall_overhead",
            "    TAP version 13",
            "    # Subtest: selftests: kbench/syscall_overhead: "
            "syscall_overhead",
            "    1..1", "    ok 1 x",
            "ok 1 selftests: kbench/syscall_overhead: syscall_overhead",
            "# selftests: kbench/pmqtest: pmqtest",
            "    TAP version 13",
            "    # Subtest: selftests: kbench/pmqtest: pmqtest",
            "    1..1", "    ok 1 x",
            "ok 2 selftests: kbench/pmqtest: pmqtest # SKIP",
            "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0"])
        secs = policy.settings_timeout(os.path.join(TOP, "syscall_overhead"))
        self.assertEqual(self.cmds[0][:3], ["timeout", "--kill-after=10",
                                            str(secs)])

    def test_hash_nesting_and_failures(self) -> None:
        self.statuses = {"syscall_overhead": 124, "pmqtest": -11}
        rc, out, _ = self.run_all(["--nest", "hash", "-o", "7"])
        self.assertEqual(rc, 1)
        self.assertIn("# TAP version 13\n# 1..1\n# ok 1 x\n", out)
        self.assertIn("not ok 1 selftests: kbench/syscall_overhead: "
                      "syscall_overhead # TIMEOUT 7 seconds\n", out)
        self.assertIn("not ok 2 selftests: kbench/pmqtest: pmqtest "
                      "# exit=139\n", out)
        self.assertIn("fail:2", out)

    def test_bad_usage_is_exit_2(self) -> None:
        for argv in (["--nest", "x"], ["-o", "x"], ["--repeat", "0"],
                     ["--vs-prefix="], ["--vs-prefix", "no-such-cmd-x"],
                     ["--fail-above", "5"], ["--base-prefix", "env"],
                     ["--vs-prefix", "env", "--fail-above", "x"],
                     ["--bogus"], ["-t", ","]):
            with self.subTest(argv=argv):
                rc, _, err = self.run_all(argv)
                self.assertEqual(rc, 2)
                self.assertIn("Try 'run_all.sh --help'", err)
                self.assertEqual(self.cmds, [])

    def test_repeat_without_n_is_the_design_s(self) -> None:
        n, _ = design.plan(["pmqtest"], None)
        rc, out, err = self.run_all(["-r", "--nest", "hash"])
        self.assertEqual(rc, 0)
        self.assertIn(f"\n1..{2 * n}\n# design: {n} repetitions", out)
        self.assertIn(f"(repetition {n} of {n})", out)
        self.assertIn("run_all.sh: design: ", err)

    def test_timeout_factor_from_the_environment(self) -> None:
        with unittest.mock.patch.dict(os.environ,
                                      {"KBENCH_TIMEOUT_FACTOR": "3"}):
            rc, out, _ = self.run_all(["-t", "pmqtest"])
        secs = policy.settings_timeout(os.path.join(TOP, "pmqtest"))
        self.assertEqual(self.cmds[1][2], str(3 * secs))
        for bad in ("0", "x", "1.5"):
            with unittest.mock.patch.dict(os.environ,
                                          {"KBENCH_TIMEOUT_FACTOR": bad}):
                rc, _, err = self.run_all([])
            self.assertEqual(rc, 2)
            self.assertIn("KBENCH_TIMEOUT_FACTOR must be", err)

    def test_interrupted_stops_and_says_bail_out(self) -> None:
        def interrupt(cmd: List[str], **kw: Any) -> FakeChild:
            raise proc.Interrupted(2)
        self.popen = interrupt  # type: ignore[assignment]
        rc, _, err = self.run_all([])
        self.assertEqual(rc, 130)
        self.assertEqual(err, "Bail out! interrupted\n")

    def test_missing_packages_end_the_run_with_their_status(self) -> None:
        with unittest.mock.patch.object(packages, "set_up", return_value=4):
            rc = quiet(runner.run, runner.Args(), "t")[0]
        self.assertEqual(rc, 4)

    def test_ab_is_compared_and_merged(self) -> None:
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(runner, "compare",
                                           return_value=0) as cmp, \
                unittest.mock.patch.object(results, "merge_dirs") as merge:
            rc, out, err = self.run_all([
                "--vs-prefix", "env", "-r", "2", "--json", d])
            with open(os.path.join(d, "run_all.ktap")) as f:
                copy = f.read()
        self.assertEqual(rc, 0)
        self.assertEqual(merge.call_count, 2)
        self.assertEqual(cmp.call_args[0][:2], (
            [os.path.join(d, "base"), os.path.join(d, "candidate")],
            "base,env"))
        self.assertIn("# design: ", out)
        self.assertIn("warning: --repeat 2", err)
        self.assertEqual(copy, out)

    def test_usage_is_run_all_s(self) -> None:
        text = runner.usage("kbench run")
        self.assertTrue(text.startswith("Usage: kbench run [OPTION]...\n"))
        self.assertTrue(text.endswith("saying which; scripts/setup.sh).\n"))
        self.assertNotIn("$prog", text)


class HandOver(unittest.TestCase):
    """run_all.sh on a host checks its options, then hands the command
    line over to kbench run as it came."""

    def run_all(self, *args: str) -> Any:
        with tempfile.TemporaryDirectory() as d:
            for name in ("run_all.sh", "scripts/lib.bash"):
                os.makedirs(os.path.dirname(os.path.join(d, name)),
                            exist_ok=True)
                shutil.copy(os.path.join(TOP, name), os.path.join(d, name))
            os.makedirs(os.path.join(d, "t1"))
            for name in ("t1/Makefile", "t1/config"):
                open(os.path.join(d, name), "w").close()
            with open(os.path.join(d, "kbench"), "w") as f:
                f.write('#!/bin/sh\necho "$KBENCH_PROG $*"\n')
            os.chmod(os.path.join(d, "kbench"), 0o755)
            env = {k: v for k, v in os.environ.items()
                   if k != "KBENCH_MERGE"}
            return subprocess.run([os.path.join(d, "run_all.sh"), *args],
                                  env=env, capture_output=True, text=True,
                                  check=False)

    def test_a_host_s_run_is_kbench_run_s(self) -> None:
        p = self.run_all("--no-build", "-t", "t1", "-r", "--nest=hash")
        self.assertEqual((0, "run_all.sh run --no-build -t t1 -r "
                          "--nest=hash\n"), (p.returncode, p.stdout))

    def test_bad_usage_stays_run_all_s(self) -> None:
        p = self.run_all("--no-build", "--repeat", "0")
        self.assertEqual((2, ""), (p.returncode, p.stdout))
        self.assertIn("run_all.sh: invalid --repeat '0'", p.stderr)


class Errors(unittest.TestCase):
    def test_checks(self) -> None:
        with self.assertRaises(cli.Error):
            runner.check_repeat("0")
        self.assertEqual(runner.check_repeat("3"), 3)
        with self.assertRaises(cli.Error):
            runner.check_fail_above("5%")
        self.assertEqual(runner.candidate_label("a,b"), "a;b")
        self.assertEqual(runner.candidate_label("base"), "candidate")


if __name__ == "__main__":
    unittest.main()
