# SPDX-License-Identifier: GPL-2.0
"""kbtools.where: function_graph traces read into self instructions per
call (nesting, calls whose start or end the trace lost, other system
calls left out), the profile of one operation from two runs, the
difference with its sum checked against the row's delta, the guest's
command line (vng mocked) and the command's usage errors."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from typing import Dict, List, Optional, Sequence, Set, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))

from kbtools import (cli, collection, policy, proc, qemu_plugin,  # noqa: E402
                     vng, where)


def leaf(depth: int, name: str, ns: int) -> str:
    return f" 0)   {ns // 1000}.{ns % 1000:03d} us    |" \
        f"{'  ' * (depth + 1)}{name}();"


def opening(depth: int, name: str) -> str:
    return f" 0)               |{'  ' * (depth + 1)}{name}() {{"


def closing(depth: int, ns: int) -> str:
    return f" 0)   {ns // 1000}.{ns % 1000:03d} us    |" \
        f"{'  ' * (depth + 1)}}}"


def syscall(name: str, self_ns: int, children: Sequence[Tuple[str, int]],
            root_ns: int = 1496) -> List[str]:
    """One x64_sys_call graph: __x64_sys_NAME with leaf children."""
    inner = self_ns + sum(ns for _, ns in children)
    return [opening(0, "x64_sys_call"), opening(1, "__x64_sys_" + name),
            *(leaf(2, n, ns) for n, ns in children),
            closing(1, inner), closing(0, inner + root_ns)]


GETSID = [("__rcu_read_lock", 728), ("pid_vnr", 746),
          ("__rcu_read_unlock", 730)]


def trace(getsids: int, extra: int = 2857) -> List[str]:
    """A header, a leaf outside any graph, one dup2, then getsids
    (__x64_sys_getsid's self instructions extra)."""
    lines = ["# tracer: function_graph", "#", " 0)   0.724 us    |  "
             "mutex_unlock();", *syscall("dup2", 900, [("expand_files", 744)])]
    for _ in range(getsids):
        lines += syscall("getsid", extra, GETSID)
    return lines


def guest_files(d: str, getsids: int) -> None:
    """What where_guest.sh leaves in d: the trace, its log."""
    with open(os.path.join(d, "trace.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(trace(getsids)) + "\n")
    with open(os.path.join(d, "where.log"), "w", encoding="utf-8") as f:
        f.write("ok 1 getsid\n/sys/kernel/tracing/per_cpu/cpu0/stats:"
                "overrun: 0\n")


def names(tree: where.Tree) -> List[str]:
    return [name for name, _ in tree]


class ParseTrace(unittest.TestCase):
    def test_self_is_duration_less_children(self) -> None:
        trees = where.parse_trace(trace(3))
        self.assertEqual(3, len(trees["getsid"]))
        self.assertEqual((("__rcu_read_lock", 728.0), ("pid_vnr", 746.0),
                          ("__rcu_read_unlock", 730.0),
                          ("__x64_sys_getsid", 2857.0),
                          ("x64_sys_call", 1496.0)),
                         trees["getsid"][0])
        # Outside any graph: left out.
        self.assertEqual({"getsid", "dup2"}, set(trees))

    def test_only_the_rows_system_calls(self) -> None:
        trees = where.parse_trace(trace(3), syscalls=["getsid"])
        self.assertEqual(["getsid"], list(trees))

    def test_a_lost_end_does_not_shift_the_nesting(self) -> None:
        # schedule() switched away and its end never came: the next line
        # at depth 0 is believed.
        lines = [opening(0, "x64_sys_call"), opening(1, "__x64_sys_getsid"),
                 opening(2, "schedule"), *syscall("getsid", 10, [])]
        trees = where.parse_trace(lines, syscalls=["getsid"])
        self.assertEqual([(("__x64_sys_getsid", 10.0),
                           ("x64_sys_call", 1496.0))],
                         trees["getsid"])

    def test_an_end_without_start_is_left_out(self) -> None:
        lines = [closing(1, 5000), closing(0, 6000), *syscall("getsid", 7, [])]
        trees = where.parse_trace(lines)
        self.assertEqual([(("__x64_sys_getsid", 7.0),
                           ("x64_sys_call", 1496.0))],
                         trees["getsid"])

    def test_an_interrupt_before_the_syscall(self) -> None:
        # irq_enter_rcu() inside x64_sys_call before the system call:
        # the system call still names the graph.
        lines = [opening(0, "x64_sys_call"), leaf(1, "irq_enter_rcu", 731),
                 leaf(1, "__x64_sys_getpid", 900), closing(0, 3200)]
        trees = where.parse_trace(lines, syscalls=["getpid"])
        self.assertEqual(["irq_enter_rcu", "__x64_sys_getpid",
                          "x64_sys_call"],
                         names(trees["getpid"][0]))

    def test_a_system_call_without_wrapper(self) -> None:
        # 6.1's getpid: x64_sys_call calls __do_sys_getpid.
        lines = [opening(0, "x64_sys_call"), leaf(1, "__do_sys_getpid", 900),
                 closing(0, 2000)]
        trees = where.parse_trace(lines, syscalls=["getpid"])
        self.assertEqual([(("__do_sys_getpid", 900.0),
                           ("x64_sys_call", 1100.0))], trees["getpid"])

    def test_a_comment_is_no_call(self) -> None:
        lines = syscall("getsid", 7, [])
        lines.insert(1, " 0)               |  /* a marker */")
        trees = where.parse_trace(lines)
        self.assertEqual([(("__x64_sys_getsid", 7.0),
                           ("x64_sys_call", 1496.0))], trees["getsid"])

    def test_shift_scales_to_instructions(self) -> None:
        lines = [opening(0, "x64_sys_call"), leaf(1, "__x64_sys_getpid", 800),
                 closing(0, 2000)]
        trees = where.parse_trace(lines, shift=2)
        self.assertEqual((("__x64_sys_getpid", 200.0),
                          ("x64_sys_call", 300.0)),
                         trees["getpid"][0])


class RealTrace(unittest.TestCase):
    """An excerpt of a real trace (the test kernel, getsid, exact mode):
    it starts inside a graph and ends in an open one; one graph's
    __x64_sys_getsid read +231 (the tracer's ring buffer moving to its
    next page), one took a softirq after the system call."""

    def test_getsid_excerpt(self) -> None:
        path = os.path.join(HERE, "data", "where_getsid.trace")
        with open(path, encoding="utf-8") as f:
            trees = where.parse_trace(f, syscalls=["getsid"])
        same, share = where.typical(trees["getsid"])
        self.assertEqual((7, 6), (len(trees["getsid"]), len(same)))
        self.assertAlmostEqual(1 / 7, share)
        self.assertEqual(["__rcu_read_lock", "pid_vnr", "__rcu_read_unlock",
                          "__x64_sys_getsid", "x64_sys_call"],
                         names(same[0]))
        self.assertEqual([2862.0] * 3 + [3093.0] + [2862.0] * 2,
                         [t[3][1] for t in same])
        p = where.per_operation({}, trees, 7)
        self.assertEqual(where.Func(2862.0, 1.0),
                         p.functions["__x64_sys_getsid"])
        self.assertEqual(where.Func(1501.0, 1.0), p.functions["x64_sys_call"])


class Profiles(unittest.TestCase):
    def side(self, extra: int, row_insn: float) -> where.RowProfile:
        short = where.parse_trace(trace(200, extra), syscalls=["getsid"])
        long = where.parse_trace(trace(1200, extra), syscalls=["getsid"])
        p = where.per_operation(short, long, 1000)
        return where.RowProfile("syscall_overhead:getsid", f"k{extra}",
                                row_insn, p.functions, p.atypical)

    def test_setup_cancels(self) -> None:
        p = self.side(2857, 301.0).functions
        self.assertEqual(1.0, p["__x64_sys_getsid"].calls)
        self.assertEqual(2857.0, p["__x64_sys_getsid"].self_insn)
        self.assertEqual(1496.0, p["x64_sys_call"].self_insn)

    def test_typical_path_and_median(self) -> None:
        plain: where.Tree = (("f", 10.0), ("__x64_sys_x", 5.0))
        hit: where.Tree = (("f", 9000.0), ("__x64_sys_x", 5.0))
        preempted: where.Tree = (("f", 10.0), ("schedule", 800.0),
                                 ("__x64_sys_x", 5.0))
        long = {"x": [plain] * 97 + [hit] * 2 + [preempted]}
        p = where.per_operation({}, long, 100)
        self.assertEqual({"f": where.Func(10.0, 1.0),
                          "__x64_sys_x": where.Func(5.0, 1.0)}, p.functions)
        self.assertAlmostEqual(0.01, p.atypical["x"])

    def test_two_calls_per_operation(self) -> None:
        tree = (("g", 3.0), ("__x64_sys_x", 5.0))
        p = where.per_operation({"x": [tree] * 3}, {"x": [tree] * 203}, 100)
        self.assertEqual(where.Func(6.0, 2.0), p.functions["g"])

    def test_five_nops_sum_to_the_delta(self) -> None:
        base, cand = self.side(2857, 301.0), self.side(2862, 306.0)
        chs = where.changes(base.functions, cand.functions)
        self.assertEqual(["__x64_sys_getsid"], [ch.name for ch in chs])
        self.assertEqual(5.0, chs[0].delta)
        text = where.format_table(base, cand)
        self.assertIn("__x64_sys_getsid", text)
        self.assertIn("sum +5.000 = the row's delta +5.000", text)
        self.assertIn("base getsid 0.0%", text)

    def test_a_gap_is_said(self) -> None:
        base, cand = self.side(2857, 301.0), self.side(2862, 310.0)
        text = where.format_table(base, cand)
        self.assertIn("+4.000 unattributed", text)
        self.assertIn("ftrace cannot see", text)

    def test_a_tracer_that_differs_is_said(self) -> None:
        base = {"f": where.Func(670.0, 1.0), "g": where.Func(1332.0, 1.0)}
        cand = {"f": where.Func(738.0, 1.0), "g": where.Func(1449.0, 1.0)}
        self.assertTrue(where.tracer_differs(base, cand))
        self.assertFalse(where.tracer_differs(base, base))
        prof = [where.RowProfile("r", k, v, p)
                for k, v, p in (("a", 327.0, base), ("b", 320.0, cand))]
        self.assertIn("tracer's own per-call cost differs",
                      where.format_table(*prof))
        self.assertIn("not exact", where.diff_json(*prof)["check"])

    def test_nothing_changed(self) -> None:
        base = self.side(2857, 301.0)
        self.assertIn("no function on the row's path changed",
                      where.format_table(base, base))

    def test_changed_calls_are_named(self) -> None:
        base = {"f": where.Func(10.0, 1.0), "g": where.Func(5.0, 1.0)}
        cand = {"f": where.Func(20.0, 2.0), "g": where.Func(5.0, 1.0)}
        prof = [where.RowProfile("r", k, 1.0, p)
                for k, p in (("a", base), ("b", cand))]
        text = where.format_table(*prof)
        self.assertIn("1 -> 2", text)
        self.assertIn("tracer's per-call cost is in the sum", text)

    def test_json_round_trip(self) -> None:
        side = self.side(2857, 301.0)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(side.to_json(), f)
            back = where.load_profile(path)
        self.assertEqual(side.functions, back.functions)
        self.assertEqual(side.atypical, back.atypical)
        self.assertEqual(301.0, back.row_insn)


    def test_the_zeros_are_said(self) -> None:
        base = {"f": where.Func(10.0, 1.0), "g": where.Func(5.0, 2.0),
                "h": where.Func(7.0, 1.0)}
        cand = dict(base, f=where.Func(11.0, 1.0))
        prof = [where.RowProfile("r", k, v, p)
                for k, v, p in (("a", 300.0, base), ("b", 301.0, cand))]
        self.assertEqual(["g x2", "h"], where.unchanged(base, cand))
        self.assertIn("unchanged (+0.000): g x2, h\n",
                      where.format_table(*prof))
        self.assertEqual(["g x2", "h"], where.diff_json(*prof)["unchanged"])

    def test_the_string_routines_part_is_said(self) -> None:
        """Debian 6.1's memset on an ERMS CPU (rep stosb, one
        instruction a byte) against 6.12's memset_orig (eleven in 64):
        their part of the sum is set apart from the rest's."""
        base = {"memset_erms": where.Func(27198.0, 0.0),
                "copy_process": where.Func(1157.0, 0.0),
                "dup_fd": where.Func(1189.0, 0.0)}
        cand = {"memset_orig": where.Func(4984.0, 0.0),
                "copy_process": where.Func(1118.0, 0.0),
                "dup_fd": where.Func(1189.0, 0.0)}
        prof = [where.RowProfile("r", k, v, p) for k, v, p in
                (("a", 29544.0, base), ("b", 7291.0, cand))]
        doc = where.diff_json(*prof)
        self.assertEqual({"names": ["memset_erms", "memset_orig"],
                          "base": 27198.0, "cand": 4984.0,
                          "delta": -22214.0}, doc["string_routines"])
        text = where.format_diff(doc)
        self.assertIn("  string routines (memset_erms, memset_orig): "
                      "27198.000 -> 4984.000,\n    -22214.000 of the sum, "
                      "the rest -39.000 (QEMU", text)
        self.assertIn("rep movs or rep stos as one instruction", text)
        # Read from the functions: also in a where file without the key.
        self.assertEqual(text, where.format_diff(
            {k: v for k, v in doc.items() if k != "string_routines"}))
        # No string routine changed: no such line, no such key.
        doc = where.diff_json(prof[0], where.RowProfile(
            "r", "b", 29543.0, dict(base, dup_fd=where.Func(1188.0, 0.0))))
        self.assertNotIn("string_routines", doc)
        self.assertNotIn("string routines", where.format_diff(doc))


class Files(unittest.TestCase):
    """A where file (where --json's, an A/B's where.json) read again."""

    def test_read_again_as_it_was_written(self) -> None:
        base = {"f": where.Func(10.0, 1.0), "g": where.Func(5.0, 1.0)}
        cand = dict(base, f=where.Func(11.0, 1.0))
        doc = where.diff_json(where.RowProfile("r", "a", 300.0, base),
                              where.RowProfile("r", "b", 301.0, cand))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "where.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"rows": [doc]}, f)
            back = where.load_diffs(path)
            self.assertEqual(where.format_diff(doc),
                             where.format_diff(back[0]))
        self.assertNotIn("the comparison's own delta", where.format_diff(doc))
        # How far apart, and why: ftrace's row runs alone.
        self.assertIn("  the comparison's own delta: +42.020; the where "
                      "boot's +1.000 is -41.020 from\n    it: the where boot "
                      "runs the row alone",
                      where.format_diff(dict(doc, compared_delta=42.02)))
        self.assertIn("delta: +1.000, the where boot's too",
                      where.format_diff(dict(doc, compared_delta=1.0)))
        # A thousandth apart is the printed figures' rounding: no why
        # (+0.999 in the comparison, +1.000 here); two thousandths are not.
        self.assertEqual("the comparison's own delta: +0.999, the where "
                         "boot's too",
                         where.compared_text(dict(doc, compared_delta=0.999)))
        self.assertIn("is +0.002 from",
                      where.compared_text(dict(doc, compared_delta=0.998))
                      or "")
        self.assertIn("runs the whole program as the comparison does",
                      where.compared_text(dict(doc, compared_delta=2.0,
                                               method=where.PLUGIN)) or "")
        self.assertIn("one more boot of the comparison's own exact guest",
                      where.compared_text(dict(doc, compared_delta=2.0,
                                               method=where.PLUGIN,
                                               ab_guest=True)) or "")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "where.json")
            for bad in ("{}", '{"rows": [{"row": "r"}]}',
                        '{"rows": [{"row": "r", "base": "a", "cand": "b", '
                        '"check": "", "functions": [{"name": "f"}]}]}', "x"):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(bad)
                with self.subTest(bad=bad), \
                        self.assertRaisesRegex(cli.Error,
                                               "not a kbench where file"):
                    where.load_diffs(path)

    def test_against_base_boots_each_kernel_once(self) -> None:
        """The base once for every candidate's rows, each candidate
        with rows once, none without; each difference its label."""
        def profile(prog: str, image: str, rows: Sequence[str], out: str,
                    icount: policy.Icount, plugin: Optional[str] = None
                    ) -> List[where.RowProfile]:
            booted.append((image, list(rows)))
            plugins.add(plugin)
            extra = 1.0 if image == "c1" else 0.0
            return [where.RowProfile(f"{where.PROGRAM}:{r}", image,
                                     300.0 + extra,
                                     {"f": where.Func(10.0 + extra, 1.0)})
                    for r in rows]
        booted: List[Tuple[str, List[str]]] = []
        plugins: Set[Optional[str]] = set()
        with mock.patch.object(where, "profile", profile), \
                mock.patch.object(where, "bootable", lambda k, p: k), \
                mock.patch.object(collection, "build") as build:
            docs = where.against_base(
                "t", "b", [("one", "c1", ["getppid", "getsid"]),
                           ("two", "c2", []), ("three", "c3", ["getsid"])],
                "/nonexistent", policy.icount(), "/p.so")
        self.assertEqual({"/p.so"}, plugins)
        build.assert_called_once()
        self.assertEqual([("b", ["getppid", "getsid"]), ("c1", ["getppid",
                          "getsid"]), ("c3", ["getsid"])], booted)
        self.assertEqual(["one", "one", "three"],
                         [d["candidate"] for d in docs])
        self.assertEqual([1.0, 1.0, 0.0], [d["row_delta"] for d in docs])
        self.assertEqual([], where.against_base("t", "b", [("x", "c", [])],
                                                "/nonexistent",
                                                policy.icount()))


class Mechanism(unittest.TestCase):
    """--where-with: the plugin by default when it can be built (its
    build mocked), else ftrace with the reason; either when asked."""

    def test_the_plugin_when_it_builds(self) -> None:
        with mock.patch.object(qemu_plugin, "build",
                               return_value="/p.so") as build:
            how = where.mechanism("t", None)
            self.assertEqual(where.Mechanism(where.PLUGIN, "/p.so",
                                             "the default: it is exact"), how)
            self.assertEqual("counted by kbench's QEMU plugin (the default: "
                             "it is exact)", how.said())
            self.assertEqual("/p.so", where.mechanism("t", "plugin").plugin)
            self.assertEqual(2, build.call_count)
            how = where.mechanism("t", "ftrace")
        self.assertEqual(2, build.call_count)
        self.assertEqual((where.FTRACE, None), (how.method, how.plugin))

    def test_ftrace_when_it_cannot(self) -> None:
        no = cli.Failure("cannot fetch Debian's qemu source package",
                         cli.EXIT_SETUP)
        with mock.patch.object(qemu_plugin, "build", side_effect=no):
            how = where.mechanism("t", None)
            self.assertEqual((where.FTRACE, None), (how.method, how.plugin))
            self.assertEqual("counted by ftrace's function_graph tracer (the "
                             "QEMU plugin cannot be provisioned: cannot fetch "
                             "Debian's qemu source package)", how.said())
            with self.assertRaises(cli.Failure) as e:
                where.mechanism("t", "plugin")
            self.assertEqual(cli.EXIT_SETUP, e.exception.status)

    def test_the_words_say_who_counted(self) -> None:
        ftrace, plugin = {"row": "r"}, {"row": "r", "method": "plugin"}
        self.assertEqual("kbench's QEMU plugin",
                         where.method_names([plugin, plugin]))
        self.assertEqual("ftrace's function_graph tracer and kbench's QEMU "
                         "plugin", where.method_names([ftrace, plugin]))
        self.assertIn("every guest instruction", where.method_text([plugin]))
        self.assertNotIn("ftrace", where.method_text([plugin]))
        self.assertIn("function_graph", where.method_text([ftrace]))


class Expect(unittest.TestCase):
    def pair(self, delta: float, row_delta: float
             ) -> Tuple[where.RowProfile, where.RowProfile]:
        base = {"f": where.Func(10.0, 1.0), "g": where.Func(5.0, 1.0)}
        cand = {"f": where.Func(10.0 + delta, 1.0), "g": where.Func(5.0, 1.0)}
        return (where.RowProfile("r", "a", 300.0, base),
                where.RowProfile("r", "b", 300.0 + row_delta, cand))

    def test_parse(self) -> None:
        self.assertEqual(("__x64_sys_getsid", 5.0),
                         where.parse_expect("__x64_sys_getsid:+5"))
        self.assertEqual(("a:b", -1.5), where.parse_expect("a:b:-1.5"))
        for bad in ("f", ":1", "f:x", "f:"):
            with self.subTest(bad=bad), self.assertRaises(cli.Error):
                where.parse_expect(bad)

    def test_met(self) -> None:
        self.assertEqual([], where.unmet([self.pair(5.0, 5.0)], {"f": 5.0}))
        self.assertEqual([], where.unmet([self.pair(0.0, 0.0)], {}))

    def test_unmet(self) -> None:
        self.assertEqual(["r: f +4.000, expected +5.000"],
                         where.unmet([self.pair(4.0, 4.0)], {"f": 5.0}))
        self.assertEqual(["r: f +5.000, expected no change"],
                         where.unmet([self.pair(5.0, 5.0)], {}))
        self.assertEqual(["g: no change, expected +1.000"],
                         where.unmet([self.pair(5.0, 5.0)],
                                     {"f": 5.0, "g": 1.0}))
        problems = where.unmet([self.pair(5.0, 6.0)], {"f": 5.0})
        self.assertEqual(1, len(problems))
        self.assertIn("+1.000 unattributed", problems[0])


class Kept(unittest.TestCase):
    def test_a_kept_directory_is_read_again(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            for name, n in (("short", 200), ("long", 1200)):
                os.makedirs(os.path.join(d, name))
                guest_files(os.path.join(d, name), n)
            with open(os.path.join(d, "profile.json"), "w",
                      encoding="utf-8") as f:
                json.dump({"row": "syscall_overhead:getsid", "kernel": "k",
                           "functions": {}}, f)
            with mock.patch.object(where, "row_figure",
                                   return_value=301.0) as fig:
                side = where.load_profile(d)
        self.assertEqual(2857.0, side.functions["__x64_sys_getsid"].self_insn)
        self.assertEqual(301.0, side.row_insn)
        self.assertEqual("getsid", fig.call_args[0][1])

    def test_lost_events_are_a_failure(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            for name in ("short", "long"):
                os.makedirs(os.path.join(d, name))
                with open(os.path.join(d, name, "where.log"), "w",
                          encoding="utf-8") as f:
                    f.write("/sys/kernel/tracing/per_cpu/cpu0/stats:overrun: "
                            "12\n/sys/kernel/tracing/per_cpu/cpu0/stats:"
                            "dropped events: 0\n")
            with self.assertRaises(cli.Failure) as e:
                where.read_side(d, "k", "getsid", 0)
        self.assertIn("lost 12 events", str(e.exception))

    def test_a_row_where_cannot_read(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "profile.json"), "w",
                      encoding="utf-8") as f:
                json.dump({"row": "pmqtest:x", "functions": {}}, f)
            with self.assertRaises(cli.Error):
                where.load_profile(d)


class Guest(unittest.TestCase):
    def test_command_line(self) -> None:
        cmd = where.vng_command("/k/bzImage", ["msgsnd_rcv", "getsid"], "/o",
                                policy.icount("shift=0,sleep=off"))
        self.assertEqual(["vng", "--run", "/k/bzImage"], cmd[:3])
        # The exact guest's QEMU options: -icount first, then what makes
        # the boot deterministic (policy.Icount.qemu_args).
        opts = cmd[cmd.index("--qemu-opts") + 1]
        self.assertTrue(opts.startswith("-icount shift=0,sleep=off"), opts)
        icount = policy.icount("shift=0,sleep=off")
        for arg in icount.qemu_args:
            self.assertIn(arg, opts)
        self.assertIn("--rwdir=/o", cmd)
        self.assertEqual(["--cpus", "1"], cmd[cmd.index("--cpus"):][:2])
        self.assertEqual(["where_guest.sh", "o", where.PROGRAM, "2", "12",
                          "100", "msgsnd_rcv", "getsid"],
                         [os.path.basename(w) for w in cmd[-1].split()])
        # The kernel's command line carries it: 2048 bytes on x86.
        every = where.vng_command("/k", list(where.ROW_SYSCALLS), "/o",
                                  policy.icount())
        self.assertLess(len(every[-1]), 512)

    def test_rows(self) -> None:
        self.assertEqual(list(where.ROW_SYSCALLS),
                         where.rows_of("syscall_overhead"))
        self.assertEqual(["getsid", "getpid"],
                         where.rows_of(
                             "syscall_overhead:getsid,getpid,getsid"))
        for bad in ("pmqtest", "syscall_overhead:fork", "syscall_overhead:",
                    "syscall_overhead:getsid,"):
            with self.subTest(test=bad), self.assertRaises(cli.Error):
                where.rows_of(bad)

    def boot(self, status: int, d: str) -> List[where.RowProfile]:
        with mock.patch.object(vng, "ensure", return_value="/bin"), \
                mock.patch.object(proc, "run", return_value=status) as run, \
                contextlib.redirect_stderr(io.StringIO()):
            try:
                return where.profile("kbench where", "/k", ["getsid"], d,
                                     policy.icount())
            finally:
                self.assertEqual("vng", run.call_args[0][0][0])

    def test_no_tracer_is_a_skip(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(cli.Failure) as e:
                self.boot(4, d)
        self.assertEqual(4, e.exception.status)

    def test_a_failed_guest_is_a_failure(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(cli.Failure) as e:
                self.boot(1, d)
        self.assertEqual(1, e.exception.status)
        self.assertIn("vng.log", str(e.exception))

    def test_a_run_is_read_per_row(self) -> None:
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(where, "row_figure", return_value=301.0):
            # What the guest leaves in out/ROW.
            for name, n in (("short", 200), ("long", 1200)):
                os.makedirs(os.path.join(d, "getsid", name))
                guest_files(os.path.join(d, "getsid", name), n)
            sides = self.boot(0, d)
            self.assertTrue(os.path.exists(os.path.join(
                d, "getsid", "profile.json")))
        self.assertEqual(2857.0,
                         sides[0].functions["__x64_sys_getsid"].self_insn)


class Usage(unittest.TestCase):
    def run_main(self, *argv: str) -> Tuple[int, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()):
            try:
                rc = where.main(list(argv), "kbench where")
            except SystemExit as e:
                rc = int(e.code or 0)
        return rc, err.getvalue()

    def test_bad_usage(self) -> None:
        cases: List[List[str]] = [
            [], ["--kernel", "a"],
            ["--kernel", "a", "--vs-kernel", "b", "-t", "syscall_overhead:"],
            ["--kernel", "a", "--vs-kernel", "b", "-t", "pmqtest:x"],
            ["--kernel", "a", "--vs-kernel", "b", "-t",
             "syscall_overhead:fork"],
            ["--profile", "a"],
            ["--profile", "a", "--vs-profile", "b", "--kernel", "c"],
            ["--profile", "a", "--vs-profile", "b", "--expect", "f"]]
        for argv in cases:
            with self.subTest(argv=argv):
                rc, err = self.run_main(*argv)
                self.assertEqual(2, rc)
                self.assertIn("kbench where", err)

    def test_not_a_profile(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write("{}")
            rc, err = self.run_main("--profile", path, "--vs-profile", path)
        self.assertEqual(2, rc)
        self.assertIn("not a kbench where profile", err)

    def test_missing_profile(self) -> None:
        rc, err = self.run_main("--profile", "/nonexistent/a",
                                "--vs-profile", "/nonexistent/b")
        self.assertEqual(2, rc)
        self.assertIn("cannot read /nonexistent/a", err)


def run_json() -> Dict[str, object]:
    """The program's run in a plugin boot: a warm-up batch and 12
    samples of getppid, batches of 100 (execve's chain unmarked)."""
    return {"test": "syscall_overhead", "params": {"iterations": 12,
                                                   "warmup": 1},
            "rows": [{"name": "execve", "median": 1.0},
                        {"name": "getppid", "median": 1.0,
                         "extra": {"batch": 100}}]}


class ExactGuest(unittest.TestCase):
    """A plugin boot of the A/B's own guest: the programs' windows in the
    plan's order (syscall_overhead's batches, then proc_create's
    creations, pmqtest none), each row's samples its profile."""

    def boot(self, d: str, fork: Sequence[int]) -> None:
        docs = {"syscall_overhead": run_json(),
                "pmqtest": {"test": "pmqtest", "rows": []},
                "proc_create": {
                    "test": "proc_create", "params": {"count": 3},
                    "rows": [{"name": "fork@1.70MB", "median": 0.0,
                              "mean": 0.0, "extra": {"creations": 3}},
                             {"name": "vfork@1.70MB", "median": 0.0,
                              "mean": 0.0, "extra": {"creations": 1}}]}}
        for prog, doc in docs.items():
            with open(os.path.join(d, f"{prog}.json"), "w") as f:
                json.dump(doc, f)
        with open(os.path.join(d, "windows.txt"), "w") as f:
            counts = [{"x64_sys_call": 2300}] * 13 + \
                [{"copy_process": n, "[user]": 50} for n in fork] + \
                [{"copy_process": 7}]
            for n, w in enumerate(counts):
                f.write(f"window {n}\n" + "".join(
                    f"{k} {v}\n" for k, v in w.items()) +
                    f"end {n} {sum(w.values())}\n")

    def test_the_rows_of_each_program(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            self.boot(d, [1000, 1003, 1000])
            progs = ["syscall_overhead:syscall_overhead", "pmqtest:pmqtest",
                     "proc_create:proc_create"]
            with mock.patch.object(where, "row_figure", return_value=0.0):
                getppid, fork = where.exact_sides(
                    d, os.path.join(d, "windows.txt"), "/k", progs,
                    ["syscall_overhead:getppid", "proc_create:fork@1.70MB"],
                    0)
            self.assertEqual("proc_create:fork@1.70MB", fork.row)
            self.assertEqual(where.PLUGIN, fork.method)
            self.assertEqual({"copy_process": 1001.0, "[user]": 50.0},
                             fork.means)
            self.assertEqual(23.0, getppid.functions["x64_sys_call"]
                             .self_insn)
            # One window too many: not the rows'.
            with open(os.path.join(d, "windows.txt"), "a") as f:
                f.write("window 99\nf 1\nend 99 1\n")
            with self.assertRaisesRegex(cli.Failure, "windows, not the"):
                where.exact_sides(d, os.path.join(d, "windows.txt"), "/k",
                                  progs, ["proc_create:fork@1.70MB"], 0)
            # Two repetitions: each program's rows again, in the plan's
            # order (repetition 1 of every program, then 2), pooled.
            doc = {"test": "syscall_overhead", "repeat": 2,
                   "params": {"iterations": 1, "warmup": 1},
                   "repetitions": [{}, {}],
                   "rows": [{"name": "getppid", "repetitions": [
                       {"median": 0.3, "mean": 0.3,
                        "extra": {"batch": 100}},
                       {"median": 0.5, "mean": 0.5,
                        "extra": {"batch": 100}}]}]}
            with open(os.path.join(d, "syscall_overhead.json"), "w") as f:
                json.dump(doc, f)
            pc = {"test": "proc_create", "repeat": 2, "params": {"count": 3},
                  "repetitions": [{}, {}],
                  "rows": [{"name": "fork@1.70MB", "repetitions": [
                      {"median": 1.0, "mean": 1.0, "n": 1,
                       "extra": {"creations": 1}},
                      {"median": 3.0, "mean": 3.0, "n": 2,
                       "extra": {"creations": 2}}]}]}
            with open(os.path.join(d, "proc_create.json"), "w") as f:
                json.dump(pc, f)
            with open(os.path.join(d, "windows.txt"), "w") as f:
                for n, w in enumerate([("f", 1), ("f", 30000), ("c", 10),
                                       ("f", 1), ("f", 50000), ("c", 20),
                                       ("c", 30)]):
                    f.write(f"window {n}\n{w[0]} {w[1]}\nend {n} {w[1]}\n")
            getppid, fork = where.exact_sides(
                d, os.path.join(d, "windows.txt"), "/k", progs,
                ["syscall_overhead:getppid", "proc_create:fork@1.70MB"], 0)
            self.assertEqual({"f": 400.0}, getppid.means)
            self.assertEqual(400.0, getppid.row_mean)
            # The row's mean weighs each repetition by its samples.
            self.assertEqual({"c": 20.0}, fork.means)
            self.assertAlmostEqual(7000.0 / 3, fork.row_mean or 0.0)
            os.remove(os.path.join(d, "proc_create.json"))
            with self.assertRaisesRegex(cli.Failure, "no proc_create.json"):
                where.exact_sides(d, os.path.join(d, "windows.txt"), "/k",
                                  progs, ["proc_create:fork@1.70MB"], 0)


class Plugin(unittest.TestCase):
    """where --plugin: the boot's command (the plugin in QEMU's options,
    the plugin's guest script), its files read into profiles (vng
    mocked), the table of two of them."""
    KALLSYMS = ("ffffffff81001000 T x64_sys_call\n"
                "ffffffff81002000 t __do_sys_getppid\n")

    def boot(self, d: str, nop: int) -> where.RowProfile:
        def run(cmd: Sequence[str], **kw: object) -> int:
            cmds.append(list(cmd))
            with open(os.path.join(d, "kallsyms"), "w") as f:
                f.write(self.KALLSYMS)
            with open(os.path.join(d, "run.json"), "w") as f:
                json.dump(run_json(), f)
            with open(os.path.join(d, "windows.txt"), "w") as f:
                for n in range(1 + 12):
                    f.write(f"window {n}\n[user] 2280\n"
                            f"x64_sys_call 2300\n"
                            f"__do_sys_getppid {1400 + nop}\n"
                            f"end {n} {5980 + nop}\n")
            return 0
        cmds: List[List[str]] = []
        with mock.patch.object(vng, "ensure", return_value="/bin"), \
                mock.patch.object(proc, "run", run), \
                mock.patch.object(where, "row_figure",
                                  return_value=59.0 + nop / 100), \
                contextlib.redirect_stderr(io.StringIO()):
            [side] = where.profile("kbench where", "/k", ["getppid"], d,
                                   policy.icount(), "/c/where_count.so")
        opts = cmds[0][cmds[0].index("--qemu-opts") + 1]
        self.assertIn(f"-plugin /c/where_count.so,out={d}/windows.txt,"
                      f"syms={d}/kallsyms", opts)
        self.assertIn("-icount", opts)
        self.assertIn("where_plugin_guest.sh", cmds[0][-1])
        return side

    def test_a_boot_read_into_a_profile(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            side = self.boot(d, 0)
            kept = where.load_profile(os.path.join(d, "getppid"))
        self.assertEqual(where.PLUGIN, side.method)
        self.assertEqual({"[user]": 22.8, "x64_sys_call": 23.0,
                          "__do_sys_getppid": 14.0},
                         {k: f.self_insn for k, f in side.functions.items()})
        self.assertAlmostEqual(59.8, side.window_insn or 0.0)
        self.assertEqual(side.to_json(), kept.to_json())

    def test_one_nop_is_one_function_and_the_sum(self) -> None:
        with tempfile.TemporaryDirectory() as a, \
                tempfile.TemporaryDirectory() as b:
            doc = where.diff_json(self.boot(a, 0), self.boot(b, 100))
        self.assertEqual(["__do_sys_getppid"],
                         [f["name"] for f in doc["functions"]])
        self.assertEqual(1.0, doc["sum"])
        text = where.format_diff(doc)
        self.assertIn("counted by QEMU's plugin", text)
        self.assertIn("sum +1.000 = the row's delta +1.000", text)
        self.assertIn("window less row: base +0.800; cand +0.800", text)
        self.assertIn("unchanged (+0.000): [user], x64_sys_call", text)

    def test_why_a_sum_is_not_the_delta(self) -> None:
        def side(window: float) -> where.Figures:
            return where.Figures({}, 300.0, window)
        self.assertIn("+0.020 more beyond the row in cand: the rest of the "
                      "two clock reads differs between these kernels (their "
                      "vDSO)\n", where.plugin_why(
                          side(300.78), side(300.8), where.MEDIAN, True)
                      + "\n")
        self.assertIn("on average over the batches: what ran between a "
                      "clock read and a mark", where.plugin_why(
                          side(300.78), side(300.8), where.MEAN, True))
        self.assertIn("the row's batches differ", where.plugin_why(
            side(300.8), side(300.8), where.MEDIAN, True))
        self.assertIn("the row's batches differ", where.plugin_why(
            side(300.78), side(300.8), where.MEDIAN, False))
        chs = [where.Change("f", 1.0, 2.0, 0.0, 0.0)]
        self.assertIn("(because)", where.check_sum(chs, 3.0, why="because"))

    def test_batches_that_differ_are_compared_by_their_means(self) -> None:
        """A row whose batches differ (fork): the medians per function do
        not add up, the means do, to the mean window; the sum checked
        against the row's mean delta in the same boots, the window's
        constant the rest; the median delta said beside it."""
        def side(k: str, a: float, b: float, extra: float
                 ) -> where.RowProfile:
            means = {"copy_process": a, "kmem_cache_free": b}
            window = sum(means.values())
            return where.RowProfile(
                "syscall_overhead:fork", k, 1000.0 + extra,
                {"copy_process": where.Func(a - 1, 0.0),
                 "kmem_cache_free": where.Func(b - 30, 0.0)},
                {"batches": 1.0}, 0, where.PLUGIN, 999.0, means, window,
                window - 80.0 - extra)
        base, cand = side("a", 1042.0, 500.0, 0.0), side("b", 1043.0, 450.0,
                                                         2.0)
        self.assertEqual(where.MEAN, where.statistic(base, cand))
        doc = where.diff_json(base, cand)
        self.assertEqual((-49.0, -51.0, 2.0),
                         (doc["sum"], doc["row_delta"],
                          doc["row_median_delta"]))
        self.assertEqual({"base": 80.0, "cand": 82.0}, doc["window_gap"])
        self.assertEqual([("kmem_cache_free", -50.0, -50.0),
                          ("copy_process", 1.0, 1.0)],
                         [(ch["name"], ch["delta"], ch["median_delta"])
                          for ch in doc["functions"]])
        text = where.format_diff(doc)
        self.assertIn("means over the batches)", text)
        self.assertRegex(text, r"delta  median\n  kmem_cache_free .* -50.000 "
                         r" -50.000\n")
        self.assertIn("sum -49.000 against the row's delta -51.000: -2.000 "
                      "unattributed (the window holds +2.000 more", text)
        self.assertIn("its median's (compare's) +2.000", text)
        self.assertIn("(a tick, a refill; in the means)", text)
        # Sides mostly one window: the medians, as before.
        for s in (base, cand):
            s.atypical = {"batches": 1 / 12}
        self.assertEqual(where.MEDIAN, where.statistic(base, cand))
        self.assertNotIn("stat", where.diff_json(base, cand))
        # Kept and read again.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(cand.to_json(), f)
            self.assertEqual(cand.to_json(),
                             where.load_profile(path).to_json())

    def test_plugin_with_kept_profiles_is_a_usage_error(self) -> None:
        with contextlib.redirect_stderr(io.StringIO()) as err, \
                self.assertRaises(SystemExit) as e:
            where.parse(["--plugin", "--profile", "a", "--vs-profile", "b"],
                        "kbench where")
        self.assertEqual(2, e.exception.code)
        self.assertIn("not with --profile", err.getvalue())

    def test_the_plugin_rows(self) -> None:
        self.assertEqual(["fork"],
                         where.rows_of("syscall_overhead:fork", True))
        self.assertIn("clone", where.rows_of("syscall_overhead", True))


if __name__ == "__main__":
    unittest.main()
