# SPDX-License-Identifier: GPL-2.0
"""kbtools.where_plugin: the plugin's windows read (and refused when cut
short or not adding up; the plugin sums them per function), the median
per operation over the batches, the program's run read and its windows
split between the rows (the warm-up left out)."""

import json
import os
import sys
import tempfile
import unittest
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))

from kbtools import cli, where_plugin as wp  # noqa: E402



def window(n: int, counts: Dict[str, int]) -> List[str]:
    return ([f"window {n}"] + [f"{f} {c}" for f, c in counts.items()]
            + [f"end {n} {sum(counts.values())}"])


class Windows(unittest.TestCase):
    def test_blocks_in_order(self) -> None:
        lines = window(0, {wp.USER: 5, "__do_sys_getppid": 14,
                           wp.UNKNOWN: 2}) + window(1, {wp.USER: 6})
        got = wp.parse_windows(lines)
        self.assertEqual(got, [{wp.USER: 5, "__do_sys_getppid": 14,
                                wp.UNKNOWN: 2}, {wp.USER: 6}])

    def test_a_total_that_does_not_add_up(self) -> None:
        lines = ["window 0", "x64_sys_call 5", "end 0 6"]
        with self.assertRaises(cli.Failure):
            wp.parse_windows(lines)

    def test_a_window_without_end(self) -> None:
        with self.assertRaises(cli.Failure):
            wp.parse_windows(["window 0", "x64_sys_call 5"])

    def test_a_line_outside_a_window(self) -> None:
        with self.assertRaises(cli.Failure):
            wp.parse_windows(["x64_sys_call 5"])

    def test_a_line_without_a_count(self) -> None:
        with self.assertRaises(cli.Failure):
            wp.parse_windows(["window 0", "x64_sys_call", "end 0 0"])


class Side(unittest.TestCase):
    def test_median_per_operation_and_the_odd_batch(self) -> None:
        plain = {wp.USER: 2000, "__do_sys_getppid": 1500}
        tick = dict(plain, x64_sys_call=900)
        s = wp.side([plain, tick, plain], 100)
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
        ws: List[wp.Window] = [{"f": i} for i in range(6)]
        run = [wp.Segment("getpid", 3, 1, 1, 2, 1000),
               wp.Segment("getppid", 3, 1, 1, 2, 1000)]
        got = wp.split_run(ws, run, "syscall_overhead:")
        self.assertEqual(got["syscall_overhead:getpid"], [{"f": 1}, {"f": 2}])
        self.assertEqual(got["syscall_overhead:getppid"],
                         [{"f": 4}, {"f": 5}])
        with self.assertRaisesRegex(cli.Failure, "6 windows, not the 3"):
            wp.split_run(ws, run[:1])

    def test_every_stride_th_window_is_a_sample(self) -> None:
        ws: List[wp.Window] = [{"f": i} for i in range(7)]
        got = wp.split_run(ws, [wp.Segment("fork@1.70MB", 7, 0, 3, 2, 1)])
        self.assertEqual(got["fork@1.70MB"], [{"f": 0}, {"f": 3}])

    def write(self, d: str, doc: Dict[str, Any]) -> str:
        path = os.path.join(d, "run.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    def test_the_run_read_marked_rows_that_ran(self) -> None:
        doc: Dict[str, Any] = {
            "test": "syscall_overhead",
            "params": {"iterations": 100, "warmup": 10},
            "rows": [{"name": "fork", "median": 9.0, "extra": {"batch": 1}},
                     {"name": "execve", "median": 9.0},
                     {"name": "getpid", "median": 0.3,
                      "extra": {"batch": 1000}},
                     {"name": "shmat_ctl", "status": "skip",
                      "reason": "no SysV IPC"}]}
        with tempfile.TemporaryDirectory() as d:
            run = wp.read_run(self.write(d, doc))
            self.assertEqual(run, [wp.Segment("fork", 110, 10, 1, 100, 1),
                                   wp.Segment("getpid", 110, 10, 1, 100,
                                              1000)])
            del doc["params"]
            with self.assertRaises(cli.Failure):
                wp.read_run(self.write(d, doc))
            # A program without marks has no windows.
            self.assertEqual([], wp.read_run(self.write(
                d, {"test": "pmqtest", "rows": []})))

    def test_proc_create_marks_each_creation_of_a_cell(self) -> None:
        """Each cell that ran: as many windows as it made creations
        (not its warm-up's), every stride-th a sample (count over
        PC_MAX_SAMPLES); a skipped cell none; a failed one cannot be
        told apart."""
        doc: Dict[str, Any] = {
            "test": "proc_create", "params": {"count": 100},
            "rows": [{"name": "fork@1.70MB", "median": 300.0,
                      "extra": {"creations": 100}},
                     {"name": "fork@2.70MB", "median": 310.0,
                      "extra": {"creations": 100}},
                     {"name": "fork@256MiB", "status": "skip",
                      "reason": "no memory"},
                     {"name": "vfork@1.70MB", "median": 40.0,
                      "extra": {"creations": 37}},
                     {"name": "vfork@2.70MB", "median": 40.0,
                      "extra": {"creations": 5}},
                     {"name": "fork_ratio", "median": 1.2,
                      "extra": {"ratio": 1.2}}]}
        with tempfile.TemporaryDirectory() as d:
            # In the order they ran: size by size.
            self.assertEqual(wp.read_run(self.write(d, doc)), [
                wp.Segment("fork@1.70MB", 100, 0, 1, wp.PC_MAX_SAMPLES, 1),
                wp.Segment("vfork@1.70MB", 37, 0, 1, wp.PC_MAX_SAMPLES, 1),
                wp.Segment("fork@2.70MB", 100, 0, 1, wp.PC_MAX_SAMPLES, 1),
                wp.Segment("vfork@2.70MB", 5, 0, 1, wp.PC_MAX_SAMPLES, 1)])
            doc["params"]["count"] = 2 * wp.PC_MAX_SAMPLES + 1
            self.assertEqual(3, wp.read_run(self.write(d, doc))[0].step)
            doc["rows"][3].update(status="fail", reason="fork: EAGAIN")
            with self.assertRaisesRegex(cli.Failure, "vfork@1.70MB failed"):
                wp.read_run(self.write(d, doc))

    def test_symbols_that_moved_are_a_failure(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            for path, addr in ((a, "ffffffff81001000"),
                               (b, "ffffffff81001000")):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(f"{addr} T x64_sys_call\n"
                            "ffffffff82000000 D some_data\n")
            wp.same_symbols(a, b)
            with open(b, "w", encoding="utf-8") as f:
                f.write("ffffffff81001010 T x64_sys_call\n")
            with self.assertRaisesRegex(cli.Failure, "symbols moved"):
                wp.same_symbols(a, b)

    def test_the_guest_runs_the_program_in_the_ab_s_environment(self) -> None:
        cmd = wp.guest_command("/k/so", "/o", {"KSFT_MACHINE_SLOW": "yes",
                                               "KBENCH_ICOUNT": "3"})
        self.assertTrue(cmd.endswith(
            " /o /k/so KBENCH_ICOUNT=3 KSFT_MACHINE_SLOW=yes"), cmd)


if __name__ == "__main__":
    unittest.main()
