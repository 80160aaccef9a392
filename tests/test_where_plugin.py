# SPDX-License-Identifier: GPL-2.0
"""kbtools.where_plugin: the plugin's windows read (and refused when cut
short or not adding up), kallsyms' code symbols, addresses mapped to
functions (user space one bucket), the median per operation over the
batches, the program's run read and its windows split between the rows
(the warm-up left out)."""

import json
import os
import sys
import tempfile
import unittest
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))

from kbtools import cli, where_plugin as wp  # noqa: E402

KALLSYMS = """\
0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81001000 T x64_sys_call
ffffffff81002000 t __do_sys_getppid
ffffffff81002100 T __task_pid_nr_ns
ffffffff82000000 D some_data
"""


def window(n: int, counts: Dict[int, int]) -> List[str]:
    return ([f"window {n}"] + [f"{a:x} {c}" for a, c in counts.items()]
            + [f"end {n} {sum(counts.values())}"])


class Windows(unittest.TestCase):
    def test_blocks_in_order(self) -> None:
        lines = window(0, {0x401000: 5, 0xffffffff81002004: 14}) + \
            window(1, {0x401000: 6})
        got = wp.parse_windows(lines)
        self.assertEqual(got, [{0x401000: 5, 0xffffffff81002004: 14},
                               {0x401000: 6}])

    def test_a_total_that_does_not_add_up(self) -> None:
        lines = ["window 0", "401000 5", "end 0 6"]
        with self.assertRaises(cli.Failure):
            wp.parse_windows(lines)

    def test_a_window_without_end(self) -> None:
        with self.assertRaises(cli.Failure):
            wp.parse_windows(["window 0", "401000 5"])

    def test_a_line_outside_a_window(self) -> None:
        with self.assertRaises(cli.Failure):
            wp.parse_windows(["401000 5"])


class Symbols(unittest.TestCase):
    def setUp(self) -> None:
        self.syms = wp.parse_kallsyms(KALLSYMS.splitlines())

    def test_code_symbols_only(self) -> None:
        self.assertNotIn("some_data", self.syms.names)
        self.assertNotIn("fixed_percpu_data", self.syms.names)

    def test_addresses_to_functions(self) -> None:
        self.assertEqual(self.syms.name_of(0xffffffff81002004),
                         "__do_sys_getppid")
        self.assertEqual(self.syms.name_of(0xffffffff81002100),
                         "__task_pid_nr_ns")
        self.assertEqual(self.syms.name_of(0x7fffdeadbeef), wp.USER)
        self.assertEqual(self.syms.name_of(0xffff888000000000), wp.UNKNOWN)

    def test_zeroed_addresses_refused(self) -> None:
        with self.assertRaises(cli.Failure):
            wp.parse_kallsyms(["0000000000000000 T x64_sys_call"])


class Side(unittest.TestCase):
    def test_median_per_operation_and_the_odd_batch(self) -> None:
        syms = wp.parse_kallsyms(KALLSYMS.splitlines())
        plain = {0x401000: 2000, 0xffffffff81002004: 1400,
                 0xffffffff81002010: 100}
        tick = dict(plain)
        tick[0xffffffff81001004] = 900
        s = wp.side([plain, tick, plain], syms, 100)
        self.assertEqual(s.functions, {wp.USER: 20.0,
                                       "__do_sys_getppid": 15.0})
        self.assertAlmostEqual(s.window_insn, 35.0)
        self.assertAlmostEqual(s.atypical, 1 / 3)
        # The means hold the tick: they add up to the mean window.
        self.assertEqual(s.means, {wp.USER: 20.0, "__do_sys_getppid": 15.0,
                                   "x64_sys_call": 3.0})
        self.assertAlmostEqual(s.window_mean, 38.0)
        self.assertAlmostEqual(sum(s.means.values()), s.window_mean)

    def test_rows_split_in_order_without_the_warmup(self) -> None:
        ws = [{1: i} for i in range(6)]
        run = wp.Run([("getpid", 1000), ("getppid", 1000)], 1, 2)
        got = wp.split_run(ws, run)
        self.assertEqual(got["getpid"], [{1: 1}, {1: 2}])
        self.assertEqual(got["getppid"], [{1: 4}, {1: 5}])
        with self.assertRaises(cli.Failure):
            wp.split_run(ws, wp.Run([("getpid", 1000)], 1, 2))

    def test_the_run_read_marked_rows_that_ran(self) -> None:
        doc = {"test": "syscall_overhead",
               "params": {"iterations": 100, "warmup": 10},
               "rows": [{"name": "fork", "median": 9.0,
                         "extra": {"batch": 1}},
                        {"name": "execve", "median": 9.0},
                        {"name": "getpid", "median": 0.3,
                         "extra": {"batch": 1000}},
                        {"name": "shmat_ctl", "status": "skip",
                         "reason": "no SysV IPC"}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            run = wp.read_run(path)
            self.assertEqual(run, wp.Run([("fork", 1), ("getpid", 1000)],
                                         10, 100))
            del doc["params"]
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            with self.assertRaises(cli.Failure):
                wp.read_run(path)

    def test_the_guest_runs_the_program_in_the_ab_s_environment(self) -> None:
        cmd = wp.guest_command("/k/so", "/o", {"KSFT_MACHINE_SLOW": "yes",
                                               "KBENCH_ICOUNT": "3"})
        self.assertTrue(cmd.endswith(
            " /o /k/so KBENCH_ICOUNT=3 KSFT_MACHINE_SLOW=yes"), cmd)


if __name__ == "__main__":
    unittest.main()
