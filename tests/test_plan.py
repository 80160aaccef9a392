# SPDX-License-Identifier: GPL-2.0
"""kbtools.plan: the plan of a run made once, by one pure function:
order (ABBA), sides and their prefixes, titles, timeouts, the programs'
arguments, JSON paths and what is merged where."""

import os
import sys
import unittest
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import plan  # noqa: E402

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
