# SPDX-License-Identifier: GPL-2.0
"""kbtools.plan: the plan of a run made once, by one pure function:
order (ABBA), sides and their prefixes, titles, timeouts, the programs'
arguments, JSON paths and what is merged where."""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import paths, plan, runner  # noqa: E402

PROGRAMS = ("syscall_overhead:syscall_overhead", "pmqtest:pmqtest")


class Plan(unittest.TestCase):
    def make(self, **kw: Any) -> plan.Plan:
        kw.setdefault("settings", {"syscall_overhead": 60, "pmqtest": 30})
        kw.setdefault("scratch", "/s")
        return plan.make(plan.Request(PROGRAMS, **kw))

    def test_one_run(self) -> None:
        p = self.make()
        self.assertEqual([(s.n, s.title) for s in p.steps], [
            (1, "selftests: kbench/syscall_overhead: syscall_overhead"),
            (2, "selftests: kbench/pmqtest: pmqtest")])
        self.assertEqual(p.steps[0].command(), [
            "timeout", "--kill-after=10", "60", "./syscall_overhead"])
        self.assertEqual((p.merges, p.compared), ((), ""))

    def test_json_of_one_run_is_the_directory_s(self) -> None:
        p = self.make(json_dir="/j")
        self.assertEqual(p.steps[1].argv,
                         ("./pmqtest", "--json", "/j/pmqtest.json"))

    def test_repetitions_in_order_merged_into_the_directory(self) -> None:
        p = self.make(repeat=2, json_dir="/j")
        self.assertEqual([(s.program, s.repetition) for s in p.steps], [
            ("syscall_overhead", 1), ("pmqtest", 1),
            ("syscall_overhead", 2), ("pmqtest", 2)])
        self.assertEqual(p.steps[3].title, "selftests: kbench/pmqtest: "
                         "pmqtest (repetition 2 of 2)")
        self.assertEqual(p.steps[3].json, "/s/json/base/2/pmqtest.json")
        self.assertEqual(p.merges, (plan.Merge(
            "base", "/j", ("/s/json/base/1", "/s/json/base/2")),))

    def test_ab_alternates_abba_and_wraps_each_side(self) -> None:
        p = self.make(repeat=3, ab=True, vs_prefix=("env",),
                      base_prefix=("nice", "-n", "0"))
        sides = [(s.repetition, s.side) for s in p.steps
                 if s.program == "pmqtest"]
        self.assertEqual(sides, [(1, "base"), (1, "candidate"),
                                 (2, "candidate"), (2, "base"),
                                 (3, "base"), (3, "candidate")])
        self.assertEqual(p.steps[1].title, "selftests: kbench/"
                         "syscall_overhead: syscall_overhead (candidate, "
                         "repetition 1 of 3)")
        self.assertEqual(p.steps[1].argv[:2], ("env", "./syscall_overhead"))
        self.assertEqual(p.steps[0].argv[:4],
                         ("nice", "-n", "0", "./syscall_overhead"))
        self.assertEqual([m.out for m in p.merges],
                         ["/s/merged/base", "/s/merged/candidate"])
        self.assertEqual(p.compared, "/s/merged")
        self.assertEqual(len(p.steps), 12)

    def test_timeouts(self) -> None:
        self.assertEqual(self.make(timeout_factor=4).steps[1].timeout, 120)
        self.assertEqual(self.make(full=True).steps[1].timeout, 0)
        self.assertEqual(self.make(full=True, timeout=5).steps[1].timeout, 5)
        self.assertEqual(self.make(timeout=0).steps[1].timeout, 0)
        self.assertEqual(self.make(settings={}).steps[1].timeout, 45)
        self.assertIn("--full", self.make(full=True).steps[1].argv)

    def test_program_args_from_the_environment(self) -> None:
        p = self.make(environ={"KSELFTEST_PMQTEST_ARGS": " -i 5  -x "})
        self.assertEqual(p.steps[1].argv, ("./pmqtest", "-i", "5", "-x"))
        self.assertEqual(plan.args_variable("a-b"), "KSELFTEST_A_B_ARGS")

    def test_guest_leaves_repetitions_to_the_host(self) -> None:
        p = self.make(repeat=2, ab=True, json_dir="/j", host_merges=True)
        self.assertEqual(p.steps[0].json,
                         "/j/repetitions/base/1/syscall_overhead.json")
        self.assertEqual((p.merges, p.compared), ((), ""))


if __name__ == "__main__":
    unittest.main()


# Programs of a made-up collection: KTAP, an exit status each, one that
# outlives its timeout, one that prints its arguments.
FAKE = {
    "a/ok": "echo 'TAP version 13'; echo '1..1'; echo \"ok 1 args $*\"",
    "a/skip": "echo 'TAP version 13'; echo '1..0 # SKIP no'; exit 4",
    "b/fail": "echo 'TAP version 13'; echo 'not ok 1 x'; exit 3",
    "b/slow": "sleep 5",
}


class PlanFile(unittest.TestCase):
    """The guest's runner of the plan file (scripts/guest/run_plan.sh)
    prints the stream that kbench run prints for the same plan."""

    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.top = self.dir.name
        for name, body in FAKE.items():
            os.makedirs(os.path.join(self.top, os.path.dirname(name)),
                        exist_ok=True)
            path = os.path.join(self.top, name)
            with open(path, "w") as f:
                f.write("#!/bin/bash\n" + body + "\n")
            os.chmod(path, 0o755)

    def tearDown(self) -> None:
        self.dir.cleanup()

    def make_plan(self, **kw: Any) -> plan.Plan:
        json_dir = os.path.join(self.top, "json")
        return plan.make(plan.Request(
            ("a:ok", "a:skip", "b:fail", "b:slow"), settings={"b": 1},
            json_dir=json_dir, scratch=os.path.join(self.top, "s"),
            host_merges=True, environ={"KSELFTEST_OK_ARGS": "-x  y"}, **kw))

    def guest(self, p: plan.Plan, nest: str
              ) -> "subprocess.CompletedProcess[bytes]":
        path = os.path.join(self.top, "plan")
        ktap = os.path.join(self.top, "json", "run_all.ktap")
        os.makedirs(os.path.dirname(ktap), exist_ok=True)
        with open(path, "w") as f:
            f.write(plan.to_file(p, nest, ktap))
        return subprocess.run(
            [os.path.join(TOP, "scripts", "guest", "run_plan.sh"), self.top,
             path], stdout=subprocess.PIPE, check=False)

    def host(self, p: plan.Plan, nest: str) -> bytes:
        out = io.BytesIO()
        a = runner.Args(nest=nest)
        with mock.patch.object(paths, "TOP", self.top):
            counts = runner.run_plan(a, p, [], runner.Stream(out))
        return out.getvalue() + (
            f"# Totals: pass:{counts['pass']} fail:{counts['fail']} xfail:0 "
            f"xpass:0 skip:{counts['skip']} error:0\n").encode()

    def test_same_stream_as_kbench_run(self) -> None:
        cases: List[Dict[str, Any]] = [
            {}, {"repeat": 2, "ab": True, "vs_prefix": ("env",)}]
        for kw in cases:
            p = self.make_plan(**kw)
            for nest in ("indent", "hash"):
                with self.subTest(nest=nest, **kw):
                    got = self.guest(p, nest)
                    want = self.host(p, nest)
                    self.assertEqual(got.stdout.decode(), want.decode())
                    self.assertEqual(got.returncode, 1)
                    with open(os.path.join(self.top, "json",
                                           "run_all.ktap"), "rb") as f:
                        self.assertEqual(f.read(), got.stdout)
        self.assertIn(b"not ok 16 selftests: kbench/b: slow (base, "
                      b"repetition 2 of 2) # TIMEOUT 1 seconds", got.stdout)
        self.assertIn(b"/json/repetitions/base/2/ok.json -x y\n", got.stdout)

    def test_quotes_survive_the_shell(self) -> None:
        p = self.make_plan(ab=True, vs_prefix=("env", "A='b c'$x"))
        text = plan.to_file(p, "indent")
        self.assertIn("'env' 'A='\"'\"'b c'\"'\"'$x' ./ok", text.replace(
            "env 'A=", "'env' 'A="))
        got = self.guest(p, "indent")
        self.assertIn(b"ok 2 selftests: kbench/a: ok (candidate, repetition "
                      b"1 of 1)", got.stdout)

    def test_lists_as_kbench_run_does(self) -> None:
        # --list in a guest: the host's listing, printed as kbench run
        # --list prints it (no KTAP, no totals), exit 0.
        text = runner.guest_plan(["--list", "--nest", "hash"], {},
                                 ("a:ok", "b:it's"), "", "t")
        path = os.path.join(self.top, "plan")
        with open(path, "w") as f:
            f.write(text)
        got = subprocess.run(
            [os.path.join(TOP, "scripts", "guest", "run_plan.sh"), self.top,
             path], stdout=subprocess.PIPE, check=False)
        self.assertEqual((0, b"a:ok\nb:it's\n"), (got.returncode,
                                                   got.stdout))

    def test_passes_with_nothing_failed(self) -> None:
        p = plan.make(plan.Request(("a:ok",), scratch=self.top))
        got = self.guest(p, "indent")
        self.assertEqual(got.returncode, 0)
        self.assertTrue(got.stdout.endswith(
            b"# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n"))
