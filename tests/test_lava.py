# SPDX-License-Identifier: GPL-2.0
"""Tests of scripts/kbtools/lava.py (run_all.sh KTAP + JSON -> LAVA test
cases) and scripts/lava_job.py (the LAVA job definition), on recorded
streams: every way a run can go wrong must give a failed case."""

import io
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.path.insert(0, SCRIPTS)

from kbtools import ktap, lava, lava_job, packages, policy, results  # noqa: E402
from support import present  # noqa: E402

# A program of a stream: (name, nested KTAP, result comment, repetition,
# repetitions).
Prog = Tuple[str, str, Optional[str], Optional[int], Optional[int]]

try:
    import yaml
except ImportError:
    yaml = None
# Which python3 lacks it, and whether Debian's has it.
NO_YAML = ("" if yaml else "needs PyYAML: "
           + packages.module_missing("yaml", "python3-yaml"))

LAVA_NAME = re.compile(r"^[-_.a-zA-Z0-9]+$")

# Recorded from 'run_all.sh -t syscall_overhead,taskstats' (trimmed).
SYSCALL = """\
    TAP version 13
    # Subtest: selftests: kbench/syscall_overhead: syscall_overhead
    # clock: CLOCK_MONOTONIC, overhead of one read: 26.9 ns
    1..2
    # getpid: unit=us n=1000 mean=0.2301 median=0.2217 min=0.2 max=0.9
    ok 1 getpid
    # getppid: unit=us n=1000 mean=0.2702 median=0.2590 min=0.2 max=1.1
    ok 2 getppid
    # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
"""
TASKSTATS = """\
    TAP version 13
    # Subtest: selftests: kbench/taskstats: taskstats
    1..3
    ok 1 family_resolves
    ok 2 ioctl_errors # SKIP kernel has no /proc/taskstats
    # procfs: unit=us n=1000 median=133.41
    ok 3 procfs
    # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0
"""


def title(prog: str, rep: Optional[int] = None,
          reps: Optional[int] = None) -> str:
    t = f"selftests: kbench/{prog}: {prog}"
    return t + (f" (repetition {rep} of {reps})" if rep else "")


def stream(*programs: Prog, plan: Optional[int] = None,
           totals: bool = True) -> str:
    """A run_all.sh stream of (program, nested KTAP, result comment,
    repetition, repetitions) tuples; a comment of None leaves the result
    line out (a stream cut while the program ran)."""
    out = ["TAP version 13", f"1..{plan or len(programs)}"]
    count = {"pass": 0, "fail": 0, "skip": 0}
    for n, (prog, body, comment, rep, reps) in enumerate(programs, 1):
        t = title(prog, rep, reps)
        out.append(f"# {t}")
        out += body.splitlines()
        if comment is None:
            break
        bad = comment.startswith(("exit=", "TIMEOUT"))
        count["fail" if bad else "skip" if comment == "SKIP" else "pass"] += 1
        out.append(f"{'not ok' if bad else 'ok'} {n} {t}" +
                   (f" # {comment}" if comment else ""))
    if totals:
        out.append("# Totals: pass:{pass} fail:{fail} xfail:0 xpass:0 "
                   "skip:{skip} error:0".format(**count))
    return "\n".join(out) + "\n"


def prog(name: str, body: str, comment: Optional[str] = "",
         rep: Optional[int] = None, reps: Optional[int] = None) -> Prog:
    return (name, body, comment, rep, reps)


def json_doc(test: str, rows: Sequence[Tuple[str, float]]) -> Dict[str, Any]:
    return {"schema": "kbench-results/1", "test": test, "rows": [
        {"name": n, "status": "ok", "unit": "us", "n": 1000, "median": m}
        for n, m in rows]}


def cases(sets: Sequence[lava.TestSet]) -> Dict[Tuple[str, str], lava.Case]:
    """{(set, case): Case}."""
    return {(s.name, c.name): c for s in sets for c in s.cases}


def failed(sets: Sequence[lava.TestSet]) -> List[Tuple[str, str]]:
    return sorted(k for k, c in cases(sets).items() if c.result == "fail")


class CaseNames(unittest.TestCase):
    def test_kbench_row_names(self) -> None:
        self.assertEqual(lava.case_name("fork@1.70MB"), "fork_at_1.70MB")
        self.assertEqual(lava.case_name("posix_spawn_exec@1GiB"),
                         "posix_spawn_exec_at_1GiB")
        self.assertEqual(lava.case_name("getpid"), "getpid")
        self.assertEqual(lava.case_name("read memory.stat"),
                         "read_memory.stat")
        self.assertEqual(lava.case_name("p99%"), "p99pct")
        self.assertEqual(lava.case_name("a=b:c/d+e"), "a-b.c_dpluse")
        self.assertEqual(lava.case_name(""), "unnamed")

    def test_every_character_maps_to_a_valid_name(self) -> None:
        for code in range(1, 0x250):
            name = lava.case_name(f"x{chr(code)}y")
            self.assertRegex(name, LAVA_NAME, repr(chr(code)))

    def test_clashing_names_made_unique(self) -> None:
        tset = lava.TestSet("s")
        for name in ("a b", "a/b", "a_b"):
            tset.add(name, lava.LavaResult.PASS)
        self.assertEqual([c.name for c in tset.cases],
                         ["a_b", "a_b.2", "a_b.3"])


class Translate(unittest.TestCase):
    def translate(self, text: str,
                  docs: Sequence[Dict[str, Any]] = ()) -> List[lava.TestSet]:
        run = None
        if docs:
            run = results.Run("t")
            for d in docs:
                results.add_doc(run, results.parse_doc("mem", d))
        return lava.translate(ktap.parse(text), run)

    def test_checks_and_measurements(self) -> None:
        text = stream(prog("syscall_overhead", SYSCALL),
                      prog("taskstats", TASKSTATS))
        sets = self.translate(text, [
            json_doc("syscall_overhead", [("getpid", 0.2217),
                                          ("getppid", 0.259)]),
            json_doc("taskstats", [("procfs", 133.41)])])
        self.assertEqual([s.name for s in sets],
                         ["syscall_overhead", "taskstats", "run_all"])
        got = cases(sets)
        c = got["syscall_overhead", "getpid"]
        self.assertEqual(c.command(), ["lava-test-case", "getpid", "--result",
                                       "pass", "--measurement", "0.2217",
                                       "--units", "us"])
        self.assertEqual(got["syscall_overhead", "syscall_overhead"].result,
                         "pass")
        self.assertEqual(got["taskstats", "procfs"].measurement, 133.41)
        self.assertIsNone(got["taskstats", "family_resolves"].measurement)
        self.assertEqual(got["run_all", "ktap"].result, "pass")
        self.assertEqual(failed(sets), [])

    def test_skip_keeps_its_reason(self) -> None:
        sets = self.translate(stream(prog("taskstats", TASKSTATS)))
        c = cases(sets)["taskstats", "ioctl_errors"]
        self.assertEqual(c.result, "skip")
        self.assertEqual(c.note, "kernel has no /proc/taskstats")
        script = lava.shell_script(sets)
        self.assertIn("# taskstats/ioctl_errors: skip: kernel has no "
                      "/proc/taskstats\nlava-test-case ioctl_errors "
                      "--result skip\n", script)

    def test_program_that_skips_entirely(self) -> None:
        body = "    TAP version 13\n    1..0 # SKIP no memory controller\n"
        sets = self.translate(stream(prog("memcg_ks", body, "SKIP")))
        got = cases(sets)
        self.assertEqual(got["memcg_ks", "memcg_ks"].result, "skip")
        self.assertEqual(failed(sets), [])

    def test_nested_ktap(self) -> None:
        body = ("    KTAP version 1\n    1..2\n"
                "        KTAP version 1\n        1..2\n"
                "        ok 1 small\n        not ok 2 large\n"
                "    not ok 1 sizes\n    ok 2 other # XFAIL known\n")
        sets = self.translate(stream(prog("p", body, "exit=1")))
        got = cases(sets)
        self.assertEqual(got["p", "sizes.small"].result, "pass")
        self.assertEqual(got["p", "sizes.large"].result, "fail")
        self.assertEqual(got["p", "sizes"].result, "fail")
        self.assertEqual(got["p", "other"].result, "pass")
        self.assertEqual(got["p", "p"].result, "fail")
        self.assertNotIn(("p", "crashed"), got)
        self.assertNotIn(("p", "truncated"), got)

    def test_crashed_program(self) -> None:
        cut = "\n".join(SYSCALL.splitlines()[:5]) + "\n"
        sets = self.translate(stream(prog("syscall_overhead", cut, "exit=139"),
                                     prog("taskstats", TASKSTATS)))
        # The crash also left the program's KTAP short of its plan.
        self.assertEqual(failed(sets), [("run_all", "ktap"),
                                        ("syscall_overhead", "crashed"),
                                        ("syscall_overhead",
                                         "syscall_overhead")])
        self.assertIn("signal 11", present(cases(sets)["syscall_overhead",
                                                       "crashed"].note))

    def test_timeout(self) -> None:
        sets = self.translate(stream(prog("syscall_overhead", SYSCALL[:200],
                                          "TIMEOUT 45 seconds")))
        self.assertIn(("syscall_overhead", "timeout"), failed(sets))

    def test_ok_program_with_short_ktap_is_truncated(self) -> None:
        short = SYSCALL.replace("    ok 2 getppid\n", "")
        sets = self.translate(stream(prog("syscall_overhead", short)))
        self.assertIn(("syscall_overhead", "truncated"), failed(sets))

    def test_stream_cut_inside_a_program(self) -> None:
        cut = "\n".join(TASKSTATS.splitlines()[:4]) + "\n"
        text = stream(prog("syscall_overhead", SYSCALL),
                      prog("taskstats", cut, None), plan=2, totals=False)
        sets = self.translate(text)
        self.assertEqual(failed(sets), [("run_all", "ktap"),
                                        ("run_all", "truncated"),
                                        ("taskstats", "taskstats"),
                                        ("taskstats", "truncated")])
        # What did arrive is still reported.
        self.assertEqual(cases(sets)["taskstats", "family_resolves"].result,
                         "pass")

    def test_stream_cut_between_programs(self) -> None:
        text = stream(prog("syscall_overhead", SYSCALL), plan=2,
                      totals=False)
        self.assertIn(("run_all", "truncated"), failed(self.translate(text)))

    def test_every_cut_of_a_stream_fails(self) -> None:
        """No prefix of a good stream passes for a complete run."""
        text = stream(prog("syscall_overhead", SYSCALL),
                      prog("taskstats", TASKSTATS))
        lines = text.splitlines(keepends=True)
        self.assertEqual(failed(self.translate(text)), [])
        for n in range(len(lines)):
            with self.subTest(lines=n):
                self.assertNotEqual(failed(self.translate("".join(lines[:n]))),
                                    [])

    def test_empty_stream(self) -> None:
        self.assertEqual(failed(self.translate("")),
                         [("run_all", "ktap"), ("run_all", "truncated")])

    def test_repetitions(self) -> None:
        reps = [json_doc("syscall_overhead", [("getpid", m), ("getppid", 1)])
                for m in (0.2, 0.3, 0.7)]
        merged = results.merge_docs([results.parse_doc("mem", r)
                                     for r in reps])
        text = stream(*[prog("syscall_overhead", SYSCALL, "", k, 3)
                        for k in (1, 2, 3)])
        got = cases(self.translate(text, [merged]))
        self.assertEqual(got["syscall_overhead", "getpid.rep1"].measurement,
                         0.2)
        self.assertEqual(got["syscall_overhead", "getpid.rep3"].measurement,
                         0.7)
        self.assertEqual(got["syscall_overhead", "getpid"].measurement, 0.3)
        self.assertEqual(got["syscall_overhead", "getpid"].result, "pass")

    def test_one_failed_repetition_fails_the_check(self) -> None:
        bad = SYSCALL.replace("ok 1 getpid", "not ok 1 getpid")
        text = stream(prog("syscall_overhead", SYSCALL, "", 1, 2),
                      prog("syscall_overhead", bad, "exit=1", 2, 2))
        got = cases(self.translate(text))
        self.assertEqual(got["syscall_overhead", "getpid.rep1"].result, "pass")
        self.assertEqual(got["syscall_overhead", "getpid.rep2"].result, "fail")
        self.assertEqual(got["syscall_overhead", "getpid"].result, "fail")

    def test_rows_only_in_json_are_reported(self) -> None:
        sets = self.translate(stream(prog("syscall_overhead", SYSCALL)), [
            json_doc("syscall_overhead", [("fork@1.70MB", 165.1)])])
        c = cases(sets)["syscall_overhead", "fork_at_1.70MB"]
        self.assertEqual((c.result, c.measurement, c.units),
                         ("pass", 165.1, "us"))

    def test_measurement_format(self) -> None:
        self.assertEqual(lava.format_measurement(245.568), "245.568")
        self.assertEqual(lava.format_measurement(3.0), "3")
        self.assertEqual(lava.format_measurement(1e-9), "0")
        self.assertEqual(lava.format_measurement(1234567.5), "1234567.5")


class Main(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def main(self, *argv: str,
             env_path: Optional[str] = None) -> Tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        old = os.environ.get("PATH", "")
        if env_path is not None:
            os.environ["PATH"] = env_path
        try:
            with redirect_stdout(out), redirect_stderr(err):
                rc = lava.main(list(argv), "kbtools.lava")
        finally:
            os.environ["PATH"] = old
        return rc, out.getvalue(), err.getvalue()

    def test_printed_script(self) -> None:
        ktap_file = self.write("run.ktap", stream(prog("syscall_overhead",
                                                       SYSCALL)))
        os.mkdir(os.path.join(self.dir, "json"))
        self.write("json/syscall_overhead.json", json.dumps(
            json_doc("syscall_overhead", [("getpid", 0.25)])))
        rc, out, _ = self.main("--json", os.path.join(self.dir, "json"),
                               ktap_file)
        self.assertEqual(rc, 0)
        cmds = [shlex.split(line) for line in out.splitlines()
                if not line.startswith("#")]
        self.assertEqual(cmds[0], ["lava-test-set", "start",
                                   "syscall_overhead"])
        self.assertIn(["lava-test-case", "getpid", "--result", "pass",
                       "--measurement", "0.25", "--units", "us"], cmds)
        self.assertEqual(cmds[-1], ["lava-test-set", "stop"])

    def test_broken_json_is_a_failed_case(self) -> None:
        ktap_file = self.write("run.ktap", stream(prog("syscall_overhead",
                                                       SYSCALL)))
        bad = self.write("bad.json", "{")
        rc, out, _ = self.main("--json", bad, ktap_file)
        self.assertEqual(rc, 1)
        self.assertIn("lava-test-case results --result fail", out)

    def test_truncated_stream_exits_1(self) -> None:
        ktap_file = self.write("run.ktap", "TAP version 13\n1..3\n")
        rc, out, _ = self.main(ktap_file)
        self.assertEqual(rc, 1)
        self.assertIn("lava-test-case truncated --result fail", out)

    def test_bad_usage(self) -> None:
        rc, _, err = self.main(os.path.join(self.dir, "missing"))
        self.assertEqual(rc, 2)
        self.assertIn("cannot read", err)
        ktap_file = self.write("run.ktap", "")
        rc, _, err = self.main("--exec", ktap_file, env_path=self.dir)
        self.assertEqual(rc, 2)
        self.assertIn("lava-test-case not found", err)

    def test_exec_calls_the_lava_helpers(self) -> None:
        """--exec runs lava-test-set/-case (here: scripts that log their
        arguments, standing in for LAVA's own helpers)."""
        log = os.path.join(self.dir, "calls")
        for helper in ("lava-test-case", "lava-test-set"):
            path = self.write(helper, f"#!/bin/sh\necho {helper} \"$@\" "
                                      f">>{log}\n")
            os.chmod(path, stat.S_IRWXU)
        ktap_file = self.write("run.ktap", stream(prog("taskstats",
                                                       TASKSTATS)))
        rc, out, _ = self.main("--exec", ktap_file,
                               env_path=self.dir + ":/bin:/usr/bin")
        self.assertEqual(rc, 0)
        with open(log, encoding="utf-8") as f:
            calls = f.read().splitlines()
        self.assertEqual(calls[0], "lava-test-set start taskstats")
        self.assertIn("lava-test-case ioctl_errors --result skip", calls)
        self.assertIn("kbench: taskstats/ioctl_errors: skip:", out)
        self.assertEqual(calls.count("lava-test-set stop"), 2)


class JobCheck(unittest.TestCase):
    """The host side: LAVA's results against the KTAP in the job's log."""

    LOG = [{"dt": "t", "lvl": "info", "msg": "start: 3 test"},
           {"dt": "t", "lvl": "target", "msg": "root@kbench:~# run"}]

    def log_of(self, text: str) -> List[Dict[str, str]]:
        return self.LOG + [{"dt": "t", "lvl": "target", "msg": line + "\r"}
                           for line in text.splitlines()] + \
            [{"dt": "t", "lvl": "target", "msg": "<LAVA_SIGNAL_ENDRUN>"}]

    def api_of(self, sets: Sequence[lava.TestSet],
               **change: str) -> Dict[str, Any]:
        out: List[Dict[str, Any]] = []
        for s in sets:
            for c in s.cases:
                res = change.get(c.name, c.result)
                m = c.measurement
                out.append({"name": c.name, "result": res,
                            "measurement": None if m is None else f"{m:.10f}",
                            "unit": c.units or "",
                            "metadata": f"definition: 1_kbench\nset: {s.name}"
                                        f"\ncase: {c.name}\n"})
        out.append({"name": "kbench", "result": "pass", "measurement": None,
                    "metadata": {"definition": "lava", "case": "kbench"}})
        return {"results": out}

    def test_stream_from_log(self) -> None:
        text = stream(prog("syscall_overhead", SYSCALL))
        self.assertEqual(lava.stream_of_log(self.log_of(text)), text)
        self.assertEqual(lava.stream_of_log(self.LOG), "")

    def test_kernel_messages_left_out(self) -> None:
        text = stream(prog("taskstats", TASKSTATS))
        log = self.log_of(text)
        log.insert(6, {"dt": "t", "lvl": "target", "msg": "[   86.693185] "
                       "netlink: 'taskstats': attribute type 1 has an "
                       "invalid length."})
        self.assertEqual(lava.stream_of_log(log), text)

    def test_measurements_from_figure_lines(self) -> None:
        sets = lava.translate(ktap.parse(stream(prog("syscall_overhead",
                                                     SYSCALL))))
        c = cases(sets)["syscall_overhead", "getppid"]
        self.assertEqual((c.measurement, c.units), (0.259, "us"))

    def test_matching_and_mismatching_results(self) -> None:
        text = stream(prog("syscall_overhead", SYSCALL),
                      prog("taskstats", TASKSTATS))
        want = lava.translate(ktap.parse(text))
        got = lava.api_cases(self.api_of(want))
        self.assertEqual(lava.compare_api(want, got), [])
        self.assertIn("getpid", lava.table(got))
        got = lava.api_cases(self.api_of(want, getpid="fail"))
        self.assertEqual(lava.compare_api(want, got), [
            "syscall_overhead/getpid: LAVA says fail, the KTAP pass"])
        got = lava.api_cases(self.api_of(want))
        del got["taskstats", "procfs"]
        got["x", "y"] = lava.ApiCase("pass", None, None)
        self.assertEqual(lava.compare_api(want, got), [
            "taskstats/procfs: not in LAVA's results",
            "x/y: in LAVA's results only"])

    def test_check_job_command(self) -> None:
        if yaml is None:
            self.skipTest(NO_YAML)
        text = stream(prog("taskstats", TASKSTATS))
        want = lava.translate(ktap.parse(text))
        with tempfile.TemporaryDirectory() as d:
            tests, log = os.path.join(d, "t.json"), os.path.join(d, "l.yaml")
            with open(tests, "w", encoding="utf-8") as f:
                json.dump(self.api_of(want), f)
            with open(log, "w", encoding="utf-8") as f:
                yaml.safe_dump(self.log_of(text), f)
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(lava.main(["--check-job", tests, log],
                                           "kbtools.lava"), 0)
            self.assertIn("all matching the job's KTAP", out.getvalue())
            with open(log, "w", encoding="utf-8") as f:
                yaml.safe_dump(self.LOG, f)
            with redirect_stdout(io.StringIO()), \
                    redirect_stderr(io.StringIO()) as err:
                self.assertEqual(lava.main(["--check-job", tests, log],
                                           "kbtools.lava"), 1)
            self.assertIn("no KTAP stream", err.getvalue())


class IcountJobCheck(JobCheck):
    """A job run under QEMU's instruction counter (lava_job.py --icount):
    its KTAP's figures are virtual time, LAVA's measurements instructions
    (insn), and the check knows which from the job's definition."""

    JOB = {"device_type": "qemu",
           "context": {"arch": "amd64", "no_kvm": True,
                       "extra_options": ["-icount shift=0,sleep=off,"
                                         "align=off", "-smp 1"]}}

    def test_shift_from_the_definition(self) -> None:
        self.assertEqual(lava.job_icount_shift(self.JOB), 0)
        job = json.loads(json.dumps(self.JOB))
        job["context"]["extra_options"][0] = "-icount shift=3"
        self.assertEqual(lava.job_icount_shift(job), 3)
        for plain in ({"context": {"arch": "amd64"}}, {}, [], None,
                      {"context": {"extra_options": "-icount shift=0"}}):
            self.assertIsNone(lava.job_icount_shift(plain), plain)
        job["context"]["extra_options"][0] = "-icount sleep=off"
        with self.assertRaises(ValueError):
            lava.job_icount_shift(job)

    def test_instructions_per_operation(self) -> None:
        sets = lava.translate(ktap.parse(stream(prog("syscall_overhead",
                                                     SYSCALL))),
                              icount_shift=0)
        c = cases(sets)["syscall_overhead", "getppid"]
        self.assertEqual(c.units, "insn")
        self.assertAlmostEqual(present(c.measurement), 259.0)

    def test_units_and_rounding_checked(self) -> None:
        text = stream(prog("syscall_overhead", SYSCALL))
        exact = lava.translate(ktap.parse(text), icount_shift=0)
        got = lava.api_cases(self.api_of(exact))
        self.assertEqual(lava.compare_api(exact, got), [])
        # The JSON's figure behind the KTAP's 4 decimals: 0.25904 us.
        got["syscall_overhead", "getppid"] = lava.ApiCase("pass", 259.04,
                                                         "insn")
        self.assertEqual(lava.compare_api(exact, got), [])
        # The same figures in us are the wrong units for an icount job.
        real = lava.translate(ktap.parse(text))
        got = lava.api_cases(self.api_of(real))
        self.assertIn("syscall_overhead/getpid: LAVA's unit us, the KTAP's "
                      "insn", lava.compare_api(exact, got))
        self.assertIn("syscall_overhead/getpid: LAVA's measurement 0.2217, "
                      "the KTAP's 221.7", lava.compare_api(exact, got))

    def test_check_job_reads_the_definition(self) -> None:
        if yaml is None:
            self.skipTest(NO_YAML)
        text = stream(prog("syscall_overhead", SYSCALL))
        want = lava.translate(ktap.parse(text), icount_shift=0)
        with tempfile.TemporaryDirectory() as d:
            tests, log, job = (os.path.join(d, n) for n in
                               ("t.json", "l.yaml", "job.yaml"))
            with open(tests, "w", encoding="utf-8") as f:
                json.dump(self.api_of(want), f)
            with open(log, "w", encoding="utf-8") as f:
                yaml.safe_dump(self.log_of(text), f)
            with open(job, "w", encoding="utf-8") as f:
                yaml.safe_dump(self.JOB, f)
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(lava.main(["--check-job", tests, log,
                                            "--job", job], "kbtools.lava"), 0)
            self.assertIn("measurements: 2 in insn (icount: figures are "
                          "guest instructions per operation)",
                          out.getvalue())
            # Without the definition, instructions are not the KTAP's us.
            with redirect_stdout(io.StringIO()), \
                    redirect_stderr(io.StringIO()) as err:
                self.assertEqual(lava.main(["--check-job", tests, log],
                                           "kbtools.lava"), 1)
            self.assertIn("LAVA's unit insn, the KTAP's us", err.getvalue())
            with open(job, "w", encoding="utf-8") as f:
                f.write("context: {extra_options: ['-icount sleep=off']}\n")
            with redirect_stdout(io.StringIO()), \
                    redirect_stderr(io.StringIO()) as err:
                self.assertEqual(lava.main(["--check-job", tests, log,
                                            "--job", job], "kbtools.lava"), 2)
            self.assertIn("job.yaml: the job's '-icount sleep=off'",
                          err.getvalue())


# A boot of the series fixture (kbench series --tree ... under --icount):
# syscall_overhead's results with every repetition of its one boot.
SERIES_BOOT = os.path.join(HERE, "data", "series", "steps", "boots",
                           "1d1d872998e704078ac4525322edc6a1a21ee0c0", "1")


class ResultsThroughLog(unittest.TestCase):
    """The guest's results files through a job's log (--emit-results,
    results_of_log): every repetition back, byte for byte."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.sent = os.path.join(self.dir, "sent")
        os.makedirs(self.sent)
        for name in os.listdir(SERIES_BOOT):
            with open(os.path.join(SERIES_BOOT, name), "rb") as src, \
                    open(os.path.join(self.sent, name), "wb") as dst:
                dst.write(src.read())
        # A second file, not ASCII and without a final newline.
        with open(os.path.join(self.sent, "pmqtest.json"), "wb") as f:
            f.write(json.dumps(json_doc("pmqtest", [("rtt µs", 1.5)]),
                               ensure_ascii=False).encode())

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def sent_files(self) -> Dict[str, bytes]:
        out = {}
        for name in sorted(os.listdir(self.sent)):
            with open(os.path.join(self.sent, name), "rb") as f:
                out[name] = f.read()
        return out

    def emitted(self) -> str:
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(lava.main(["--emit-results", self.sent],
                                       "kbtools.lava"), 0)
        return out.getvalue()

    def log(self, blocks: str) -> List[Dict[str, str]]:
        """A job log as LAVA keeps it: its own entries, the shell's, the
        KTAP and the blocks as the console gave them (CR LF), kernel
        messages among them, the cases after."""
        text = stream(prog("syscall_overhead", SYSCALL))
        lines = text.splitlines() + blocks.splitlines() + [
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=getpid RESULT=pass>"]
        entries = [{"dt": "t", "lvl": "info", "msg": "start: 3 test"},
                   {"dt": "t", "lvl": "target", "msg": "root@kbench:~# run"}]
        for k, line in enumerate(lines):
            entries.append({"dt": "t", "lvl": "target", "msg": line + "\r"})
            if k % 97 == 5:
                entries.append({"dt": "t", "lvl": "target", "msg":
                                "[  812.004213] random: crng reseeded"})
                entries.append({"dt": "t", "lvl": "debug", "msg":
                                "Received signal: <TESTCASE> x"})
        return entries

    def test_every_file_back_byte_for_byte(self) -> None:
        blocks = self.emitted()
        self.assertTrue(all(len(line) <= 120
                            for line in blocks.splitlines()))
        log = self.log(blocks)
        self.assertEqual(lava.results_of_log(log), self.sent_files())
        # The KTAP stream is read as before.
        self.assertEqual(lava.stream_of_log(log),
                         stream(prog("syscall_overhead", SYSCALL)))

    def test_repetitions_come_back(self) -> None:
        got = os.path.join(self.dir, "got")
        lava.write_results(lava.results_of_log(self.log(self.emitted())),
                           got)
        want = results.load(SERIES_BOOT).tests["syscall_overhead"]
        back = results.load(got).tests["syscall_overhead"]
        reps = {n: r.boot_reps() for n, r in want.rows.items()}
        self.assertTrue(any(len(b) > 1 for v in reps.values() for b in v))
        self.assertEqual({n: r.boot_reps() for n, r in back.rows.items()},
                         reps)

    def test_a_boot_kept_as_the_series_reads_it(self) -> None:
        from kbtools import series
        log = self.log(self.emitted())
        got, ktap_path = os.path.join(self.dir, "1"), \
            os.path.join(self.dir, "1.ktap")
        lava.keep_boot(log, got, ktap_path)
        self.assertIn("syscall_overhead:getppid",
                      series.insn_boots([SERIES_BOOT]))
        self.assertEqual(series.insn_boots([got]),
                         series.insn_boots([SERIES_BOOT]))
        with open(ktap_path, encoding="utf-8") as f:
            self.assertEqual(f.read(),
                             stream(prog("syscall_overhead", SYSCALL)))
        with self.assertRaisesRegex(ValueError, "no results files"):
            lava.keep_boot(self.log(""), got, ktap_path)
        with self.assertRaisesRegex(ValueError, "no KTAP stream"):
            lava.keep_boot([e for e in log if "TAP version" not in
                            e["msg"]], got, ktap_path)

    def test_a_log_without_blocks(self) -> None:
        self.assertEqual(lava.results_of_log(self.log("")), {})
        with self.assertRaises(ValueError):
            lava.results_of_log({"not": "a log"})

    def broken(self, change: Any) -> str:
        """results_of_log's error on the log CHANGE(lines) makes."""
        lines = self.emitted().splitlines()
        with self.assertRaises(ValueError) as cm:
            lava.results_of_log(self.log("\n".join(change(lines))))
        return str(cm.exception)

    def test_a_lost_line_is_said(self) -> None:
        self.assertIn("pmqtest.json: ",
                      self.broken(lambda ls: ls[:2] + ls[3:]))

    def test_a_changed_character_is_said(self) -> None:
        def change(ls: List[str]) -> List[str]:
            k = len(ls) - 3
            c = "A" if ls[k][0] != "A" else "B"
            return ls[:k] + [c + ls[k][1:]] + ls[k + 1:]
        self.assertIn("syscall_overhead.json: ", self.broken(change))

    def test_a_cut_log_is_said(self) -> None:
        self.assertIn("the log ends inside its block",
                      self.broken(lambda ls: ls[:-4]))

    def test_a_block_not_closed(self) -> None:
        def drop_end(ls: List[str]) -> List[str]:
            return [x for x in ls
                    if not x.startswith("kbench-results-end pmqtest")]
        self.assertIn("not closed", self.broken(drop_end))

    def test_no_file_outside_the_directory(self) -> None:
        for name in ("../x.json", "/etc/x.json", "x.txt", ".x.json"):
            block = lava.results_block(name, b"{}")
            with self.assertRaises(ValueError):
                lava.results_of_log(self.log("\n".join(block)))
            with self.assertRaises(ValueError):
                lava.write_results({name: b"{}"}, self.dir)

    def test_an_unreadable_directory(self) -> None:
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(lava.main(["--emit-results",
                                        os.path.join(self.dir, "none")],
                                       "kbtools.lava"), 2)
        self.assertIn("cannot read", err.getvalue())


class Api(unittest.TestCase):
    """The REST calls of a series through LAVA, urllib mocked."""

    def replies(self, *bodies: bytes) -> Any:
        from unittest import mock
        answers = [io.BytesIO(b) for b in bodies]
        calls: List[Any] = []

        def urlopen(req: Any, timeout: float) -> Any:
            calls.append(req)
            return answers.pop(0)
        self.calls = calls
        return mock.patch("urllib.request.urlopen", urlopen)

    def test_submit_poll_log(self) -> None:
        api = lava.Api("http://lab:8790/", "s3cret")
        with self.replies(b'{"job_ids": [42]}',
                          b'{"id": 42, "state": "Finished"}', b"- {}\n"):
            self.assertEqual(api.submit("job: x"), "42")
            self.assertEqual(api.job("42")["state"], "Finished")
            self.assertEqual(api.log("42"), "- {}\n")
        first = self.calls[0]
        self.assertEqual(first.full_url, "http://lab:8790/api/v0.2/jobs/")
        self.assertEqual(first.get_header("Authorization"), "Token s3cret")
        self.assertEqual(json.loads(first.data), {"definition": "job: x"})
        self.assertEqual(self.calls[2].full_url,
                         "http://lab:8790/api/v0.2/jobs/42/logs/")

    def test_refused_job_or_lab(self) -> None:
        api = lava.Api("http://lab", "t")
        with self.replies(b'{"message": "invalid definition"}'), \
                self.assertRaisesRegex(ValueError, "did not take the job"):
            api.submit("x")
        with self.replies(b"[1]"), self.assertRaisesRegex(ValueError,
                                                          "not a job"):
            api.job("1")
        from unittest import mock
        with mock.patch("urllib.request.urlopen",
                        side_effect=OSError("refused")), \
                self.assertRaisesRegex(ValueError, "LAVA API jobs/1/: "):
            api.job("1")


    def test_a_lab_on_this_machine_past_the_proxy(self) -> None:
        """A proxy of the environment (http_proxy) cannot reach this
        machine's 127.0.0.1: a lab there is called directly."""
        import http.server
        import threading
        from unittest import mock

        class Lab(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b'{"id": 7, "state": "Finished"}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Lab)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            # A proxy that refuses every connection (port 9, discard).
            with mock.patch.dict(os.environ, {
                    "http_proxy": "http://127.0.0.1:9",
                    "HTTP_PROXY": "http://127.0.0.1:9", "no_proxy": "",
                    "NO_PROXY": ""}):
                api = lava.Api(f"http://127.0.0.1:{server.server_port}",
                               "t")
                self.assertEqual(api.job("7")["state"], "Finished")
        finally:
            server.shutdown()
            server.server_close()

    def test_which_labs_are_on_this_machine(self) -> None:
        for url, here in (("http://127.0.0.1:8790", True),
                          ("http://localhost/", True),
                          ("http://127.1.2.3", True), ("http://[::1]:80", True),
                          ("http://lab:8790", False),
                          ("https://10.0.0.1/", False), ("", False)):
            self.assertEqual(lava.on_this_machine(url), here, url)

class JobGenerator(unittest.TestCase):
    URLS = ["--kernel", "https://lab/vmlinuz-6.1",
            "--rootfs", "https://lab/kbench-rootfs.cpio.gz"]

    def setUp(self) -> None:
        if yaml is None:
            self.skipTest(NO_YAML)

    def generate(self, *argv: str) -> Any:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "job.yaml")
            self.assertEqual(lava_job.main(list(self.URLS + list(argv)) +
                                           ["-o", path], "lava_job.py"), 0)
            with open(path, encoding="utf-8") as f:
                return yaml.safe_load(f)

    def test_qemu_job(self) -> None:
        job = self.generate()
        self.assertEqual(job["device_type"], "qemu")
        self.assertIs(job["context"]["no_kvm"], True)
        self.assertEqual([list(a)[0] for a in job["actions"]],
                         ["deploy", "boot", "test"])
        deploy, boot, test = (list(a.values())[0] for a in job["actions"])
        kernel, ramdisk = deploy["images"]["kernel"], deploy["images"]["ramdisk"]
        self.assertEqual(kernel["url"], "https://lab/vmlinuz-6.1")
        self.assertNotIn("quiet", kernel["image_arg"])
        self.assertIn("console=ttyS0", kernel["image_arg"])
        self.assertEqual(ramdisk["url"], "https://lab/kbench-rootfs.cpio.gz")
        self.assertEqual(ramdisk["format"], "cpio.newc")
        self.assertEqual(ramdisk["compression"], "gz")
        self.assertEqual(ramdisk["overlays"], {"lava": True})
        self.assertEqual((deploy["to"], boot["method"], boot["media"]),
                         ("tmpfs", "qemu", "tmpfs"))
        for t in (job["timeouts"]["job"], deploy["timeout"], boot["timeout"],
                  test["timeout"]):
            self.assertGreater(t["minutes"], 0)
        (definition,) = test["definitions"]
        self.assertEqual(definition["from"], "inline")
        self.assertEqual(definition["repository"]["metadata"]["format"],
                         "Lava-Test Test Definition 1.0")
        self.assertEqual(definition["repository"]["run"]["steps"],
                         ["/opt/kbench/scripts/guest/lava_run.sh"])

    def test_options_passed_through(self) -> None:
        job = self.generate("-t", "syscall_overhead", "-t", "taskstats",
                            "--repeat", "3", "--full")
        test = job["actions"][2]["test"]
        step = test["definitions"][0]["repository"]["run"]["steps"][0]
        self.assertEqual(step.split()[1:], ["-t", "syscall_overhead", "-t",
                                            "taskstats", "--repeat", "3",
                                            "--full"])
        self.assertGreaterEqual(test["timeout"]["minutes"], 3 * 240)
        step = self.generate("--timeout", "600", "--machine-slow")[
            "actions"][2]["test"]["definitions"][0]["repository"]["run"][
            "steps"][0]
        self.assertEqual(step, "KSFT_MACHINE_SLOW=yes "
                               "/opt/kbench/scripts/guest/lava_run.sh --timeout 600")
        self.assertGreater(job["timeouts"]["job"]["minutes"],
                           test["timeout"]["minutes"])

    def test_icount_step_in_a_shell(self) -> None:
        """The step as LAVA's test shell runs it: the exact mode's
        variables set (icount's settings hold ';' and a blank), the
        script started with its options."""
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "scripts", "guest", "lava_run.sh")
            os.makedirs(os.path.dirname(script))
            with open(script, "w", encoding="utf-8") as f:
                f.write('#!/bin/sh\nprintf "%s|%s|%s\\n" "$KBENCH_ICOUNT" '
                        '"$KBENCH_ICOUNT_SETTINGS" "$*"\n')
            os.chmod(script, 0o755)
            step = self.generate("--icount", "-t", "syscall_overhead",
                                 "--kbench-dir", d)["actions"][2]["test"][
                "definitions"][0]["repository"]["run"]["steps"][0]
            out = subprocess.run(["sh", "-c", step], capture_output=True,
                                 text=True, check=True).stdout
        env = policy.icount_env(policy.icount(steady=False))
        self.assertIn(";", env["KBENCH_ICOUNT_SETTINGS"])
        self.assertEqual(out, f"{env['KBENCH_ICOUNT']}|"
                              f"{env['KBENCH_ICOUNT_SETTINGS']}|"
                              "-t syscall_overhead --repeat 2\n")

    def test_board(self) -> None:
        job = self.generate("--device-type", "bcm2711-rpi-4-b",
                            "--deploy-to", "tftp", "--boot-method", "u-boot",
                            "--arch", "arm64")
        self.assertNotIn("no_kvm", job["context"])
        self.assertIn("console=ttyAMA0", job["context"]["extra_kernel_args"])
        deploy, boot = (list(a.values())[0] for a in job["actions"][:2])
        self.assertEqual(deploy["to"], "tftp")
        self.assertNotIn("image_arg", deploy["images"]["kernel"])
        self.assertEqual(boot["method"], "u-boot")

    def test_bad_usage(self) -> None:
        for bad in (["--repeat", "0"], ["-t", "a b"], ["--timeout", "1m"],
                    ["--kernel-arg", "quiet"], ["--kernel", "vmlinuz"]):
            with self.subTest(bad=bad), redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as cm:
                    lava_job.main(self.URLS + bad, "lava_job.py")
                self.assertEqual(cm.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
