# SPDX-License-Identifier: GPL-2.0
"""fuzz/run.sh and fuzz/properties.sh (kbtools.fuzz) with the harnesses
and the property run mocked: the command lines of both builds (a replay
of the seeds alone, a timed exploration), the lines printed for a clean
run and for a finding (grep -A's context), every failing seed of a
replay, the verdict of a property run from its log, bad usage. Not
test_fuzz_*.py: those are the property modules."""

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

from kbtools import fuzz, proc  # noqa: E402
from support import quiet  # noqa: E402

CLEAN_LOG = """\
INFO: Seed: 1
#2\tINITED cov: 60 ft: 80 corp: 30/200b exec/s: 0 rss: 30Mb
#3000\tDONE   cov: 71 ft: 102 corp: 39/256b lim: 21 exec/s: 0 rss: 33Mb
Done 3000 runs in 1 second(s)
"""


REPLAYED = """\
INFO: Seed: 123
fuzz_options: Running 3 inputs 1 time(s) each.
Executed a-seed in 0 ms
"""


def crash_log() -> str:
    return "\n".join(
        ["INFO: Seed: 1", "==1==ERROR: AddressSanitizer: overflow"]
        + [f"frame {i}" for i in range(25)] + ["runtime error: x"]
        + [f"more {i}" for i in range(30)]
        + ["Test unit written to /a/options-crash-1",
           "Test unit written to /a/options-crash-2"]) + "\n"


class Lines(unittest.TestCase):
    def test_context_as_grep_prints_it(self) -> None:
        log = crash_log().splitlines()
        grep = subprocess.run(
            ["grep", "-E", "-A", "20", fuzz.FINDING.pattern],
            input=crash_log(), capture_output=True, text=True).stdout
        self.assertEqual(grep.splitlines(),
                         fuzz.with_context(log, fuzz.FINDING, 20))
        self.assertEqual([], fuzz.with_context(["a"], fuzz.FINDING, 20))

    def test_figures_of_the_last_status_line(self) -> None:
        self.assertEqual("3000 runs, cov: 71 ft: 102 corp: 39/256b lim: 21 "
                         "exec/s: 0 rss: 33Mb",
                         fuzz.figures(CLEAN_LOG.splitlines()))
        self.assertEqual("", fuzz.figures(["no status"]))


class Harnesses(unittest.TestCase):
    """Each harness in both builds, its seeds in a corpus of the test's
    own (fuzz.FUZZ moved there)."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.out = os.path.join(tmp.name, "build")
        self.fuzz = os.path.join(tmp.name, "fuzz")
        for h in ("options", "cgroup"):
            for build in ("", "msan"):
                os.makedirs(os.path.join(self.out, build), exist_ok=True)
                path = os.path.join(self.out, build, f"fuzz_{h}")
                with open(path, "w") as f:
                    f.write("#!/bin/sh\n")
                os.chmod(path, 0o755)
            os.makedirs(os.path.join(self.fuzz, "corpus", h))
            for seed in ("b-seed", "a-seed", "c-seed"):
                open(os.path.join(self.fuzz, "corpus", h, seed), "w").close()
        open(os.path.join(self.fuzz, "options.dict"), "w").close()
        patch = mock.patch.object(fuzz, "FUZZ", self.fuzz)
        patch.start()
        self.addCleanup(patch.stop)
        self.cmds: List[List[str]] = []

    def seed(self, h: str, name: str) -> str:
        return os.path.join(self.fuzz, "corpus", h, name)

    def harness(self, logs: Dict[str, Union[str, Callable[[List[str]], str]]]
                ) -> Any:
        """proc.run as the harnesses: each writes its log (logs[BUILD/NAME]
        or logs[NAME], a function of the command for a replay), exit 0
        when it is clean."""
        def run(cmd: List[str], log: str, append: bool = False) -> int:
            self.cmds.append(cmd)
            name = os.path.basename(log)[:-len(".log")]
            build = os.path.basename(os.path.dirname(log))
            text = logs.get(f"{build}/{name}", logs.get(name, ""))
            if callable(text):
                text = text(cmd)
            with open(log, "a" if append else "w") as f:
                f.write(text)
            return 0 if text in (CLEAN_LOG, REPLAYED) else 1
        return mock.patch.object(proc, "run", side_effect=run)

    def main(self, *argv: str) -> Tuple[Any, str, str]:
        return quiet(fuzz.run_main, list(argv), "fuzz/run.sh")

    def test_a_replay_runs_each_seed_once_in_both_builds(self) -> None:
        with self.harness({"options": REPLAYED, "cgroup": REPLAYED}):
            rc, out, err = self.main("-o", self.out, "--replay", "options",
                                     "cgroup")
        self.assertEqual((0, ""), (rc, err))
        self.assertEqual(["options (ASan+UBSan): 3 seeds replayed: clean",
                          "options (MSan): 3 seeds replayed: clean",
                          "cgroup (ASan+UBSan): 3 seeds replayed: clean",
                          "cgroup (MSan): 3 seeds replayed: clean"],
                         out.splitlines())
        seeds = [self.seed("options", s) for s in ("a-seed", "b-seed",
                                                    "c-seed")]
        artifacts = os.path.join(self.out, "artifacts")
        # Whole seeds (no -max_len), no dictionary, no time, no seed.
        self.assertEqual([os.path.join(self.out, "fuzz_options"),
                          "-timeout=10", "-rss_limit_mb=2048",
                          "-close_fd_mask=3", "-artifact_prefix="
                          + os.path.join(artifacts, "options-"), *seeds],
                         self.cmds[0])
        self.assertEqual([os.path.join(self.out, "msan", "fuzz_options"),
                          "-timeout=10", "-rss_limit_mb=2048",
                          "-close_fd_mask=3", "-artifact_prefix="
                          + os.path.join(artifacts, "msan-options-"),
                          *seeds], self.cmds[1])
        self.assertEqual(4, len(self.cmds))
        self.assertFalse(os.path.exists(os.path.join(self.out, "corpus")))

    def test_a_replay_names_every_failing_seed(self) -> None:
        a, b, c = (self.seed("options", s) for s in ("a-seed", "b-seed",
                                                     "c-seed"))

        def msan(cmd: List[str]) -> str:
            """a and c read what was never written."""
            ran = [f for f in cmd if f.startswith(self.fuzz)]
            log = f"Running: {ran[0]}\n"
            if ran[0] in (a, c):
                return log + ("==1==WARNING: MemorySanitizer: "
                              "use-of-uninitialized-value\n    #0 here\n")
            return log + f"Running: {ran[1]}\n" + (
                "==1==WARNING: MemorySanitizer: "
                "use-of-uninitialized-value\n    #0 there\n")
        with self.harness({"options": REPLAYED, "msan/options": msan}):
            rc, out, _ = self.main("-o", self.out, "--replay", "options")
        self.assertEqual(1, rc)
        msan_bin = os.path.join(self.out, "msan", "fuzz_options")
        log = os.path.join(self.out, "msan", "options.log")
        self.assertEqual([
            "options (ASan+UBSan): 3 seeds replayed: clean",
            "==1==WARNING: MemorySanitizer: use-of-uninitialized-value",
            "    #0 here",
            "FAIL: options (MSan): seed a-seed: libFuzzer exited 1",
            f"reproduce: {msan_bin} {a}",
            "FAIL: options (MSan): seed c-seed: libFuzzer exited 1",
            f"reproduce: {msan_bin} {c}",
            f"options (MSan): 3 seeds replayed: 2 failed (log: {log})"],
            out.splitlines())
        # The seeds after a failing one run in the next process.
        self.assertEqual([[a, b, c], [b, c]],
                         [cmd[5:] for cmd in self.cmds[1:]])
        with open(log) as f:
            self.assertEqual(2, f.read().count("MemorySanitizer"))

    def test_a_replay_that_fails_before_a_seed(self) -> None:
        with self.harness({"options": REPLAYED,
                           "msan/options": "==1==ERROR: no shadow\n"}):
            rc, out, _ = self.main("-o", self.out, "--replay", "options")
        self.assertEqual(1, rc)
        self.assertIn("FAIL: options (MSan): libFuzzer exited 1 before a "
                      "seed ran", out)
        self.assertEqual(2, len(self.cmds))

    def test_a_timed_run_keeps_its_inputs(self) -> None:
        with self.harness({"options": CLEAN_LOG}):
            rc, out, _ = self.main("-o", self.out, "options")
        self.assertEqual(0, rc)
        figures = ("3000 runs, cov: 71 ft: 102 corp: 39/256b lim: 21 "
                   "exec/s: 0 rss: 33Mb: no crash")
        self.assertEqual([f"options (ASan+UBSan): {figures}",
                          f"options (MSan): {figures}"], out.splitlines())
        corpora = [os.path.join(self.out, "corpus", "options"),
                   os.path.join(self.fuzz, "corpus", "options")]
        for build, cmd in zip(("", "msan"), self.cmds):
            prefix = f"{build}-" if build else ""
            self.assertEqual([
                os.path.join(self.out, build, "fuzz_options"),
                "-dict=" + os.path.join(self.fuzz, "options.dict"),
                "-max_total_time=30", "-timeout=10", "-rss_limit_mb=2048",
                "-close_fd_mask=3", "-artifact_prefix=" + os.path.join(
                    self.out, "artifacts", f"{prefix}options-"),
                "-max_len=256", "-print_final_stats=1", *corpora], cmd)
        self.assertTrue(os.path.isdir(corpora[0]))

    def test_a_finding(self) -> None:
        with self.harness({"options": crash_log(), "cgroup": CLEAN_LOG}):
            rc, out, _ = self.main("-o", self.out, "-t", "5", "options",
                                   "cgroup")
        self.assertEqual(1, rc)
        lines = out.splitlines()
        self.assertEqual("==1==ERROR: AddressSanitizer: overflow", lines[0])
        log = os.path.join(self.out, "options.log")
        self.assertEqual(
            [f"FAIL: options (ASan+UBSan): libFuzzer exited 1 (log: {log})",
             "reproduce: " + os.path.join(self.out, "fuzz_options")
             + " /a/options-crash-2"], lines[40:42])
        self.assertIn("-max_len=16384", self.cmds[2])
        self.assertTrue(lines[-1].endswith(": no crash"), lines)

    def test_bad_usage(self) -> None:
        cases: Tuple[Tuple[List[str], str], ...] = (
                ([], "no harness given"),
                (["-t", "0", "options"], "-t wants whole seconds, not '0'"),
                (["-t", "5", "--replay", "options"],
                 "-t and --replay exclude each other"),
                (["-r", "9", "options"], "unknown argument '-r'"),
                (["-o", "/nonexistent", "options"], "-o: no directory"),
                (["--bogus", "options"], "unknown argument '--bogus'"),
                (["-o", self.out, "netlink"], "no harness "
                 + os.path.join(self.out, "fuzz_netlink")
                 + " (make -C fuzz first)"),
                (["-o", self.out, "options", "cgroup2"], "no harness "))
        for argv, said in cases:
            with self.subTest(argv=argv), self.harness({}):
                rc, out, err = self.main(*argv)
                self.assertEqual((2, [], ""), (rc, self.cmds, out))
                self.assertTrue(err.startswith(f"fuzz/run.sh: {said}"), err)
        os.remove(os.path.join(self.out, "msan", "fuzz_cgroup"))
        with self.harness({}):
            rc, _, err = self.main("-o", self.out, "cgroup")
        self.assertEqual(2, rc)
        self.assertIn("no harness " + os.path.join(self.out, "msan",
                                                   "fuzz_cgroup"), err)

    def test_help(self) -> None:
        rc, out, _ = self.main("--help")
        self.assertEqual(0, rc)
        self.assertIn("Usage: fuzz/run.sh [-o OUT] [-t SECONDS | --replay] "
                      "HARNESS...", out)


class Properties(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.log = os.path.join(tmp.name, "properties.log")
        self.calls: List[Tuple[List[str], str, str, str, bool]] = []

    def verdict(self, log: str) -> Tuple[Any, str, str]:
        with open(self.log, "w") as f:
            f.write(log)
        return quiet(fuzz.properties_verdict, self.log)

    def test_verdicts_from_the_log(self) -> None:
        rc, out, _ = self.verdict("test_a ... ok\n\nRan 1 test\n\nOK\n")
        self.assertEqual((0, ""), (rc, out))
        rc, out, _ = self.verdict("@example(b'x')\nFAILED (failures=1)\n")
        self.assertEqual(1, rc)
        self.assertEqual(
            "\nFalsifying examples: paste each above the test its comment "
            "names (tests/), make it pass, commit both:\n"
            "    @example(b'x')\n"
            f"FAIL: a property does not hold (log: {self.log})\n", out)
        rc, out, _ = self.verdict("test_a ... skipped 'no'\nOK (skipped=1)\n")
        self.assertEqual((1, "FAIL: a property was skipped, so it explored "
                          f"nothing (log: {self.log})\n"), (rc, out))

    def run_properties(self, *argv: str, hypothesis: bool = True
                       ) -> Tuple[Any, str, str]:
        def tee(cmd: List[str], log: str, env: Dict[str, str], cwd: str,
                merge: bool) -> int:
            self.calls.append((cmd, env["KBENCH_FUZZ_MODE"],
                               env["KBENCH_FUZZ_EXAMPLES"], cwd, merge))
            with open(log, "w") as f:
                f.write("OK\n")
            return 0
        with mock.patch.object(proc, "tee", side_effect=tee), \
                mock.patch.object(proc, "succeeds", return_value=hypothesis), \
                mock.patch.object(fuzz, "FUZZ", os.path.dirname(self.log)):
            return quiet(fuzz.properties_main, list(argv),
                         "fuzz/properties.sh")

    def test_the_run(self) -> None:
        rc, _, err = self.run_properties()
        self.assertEqual(0, rc, err)
        self.assertEqual(
            [([fuzz.PYTHON, "-m", "unittest", "discover", "-v", "-s", ".",
               "-p", "test_fuzz_*.py"], "explore", "1000", fuzz.TESTS,
              True)], self.calls)
        rc, _, _ = self.run_properties("-n", "5", "test_fuzz_ktap")
        self.assertEqual(([fuzz.PYTHON, "-m", "unittest", "-v",
                           "test_fuzz_ktap"], "5"),
                         (self.calls[1][0], self.calls[1][2]))

    def test_bad_usage_and_no_hypothesis(self) -> None:
        for argv, said in ((["-n", "0"], "-n wants a count of examples"),
                           (["test_kcidb"], "no property module "
                            "'test_kcidb' (tests/test_fuzz_*.py)"),
                           (["test_fuzz_nothing"], "no property module")):
            with self.subTest(argv=argv):
                rc, _, err = self.run_properties(*argv)
                self.assertEqual(2, rc)
                self.assertTrue(err.startswith(f"fuzz/properties.sh: {said}"))
        rc, _, err = self.run_properties(hypothesis=False)
        self.assertEqual((2, []), (rc, self.calls))
        self.assertIn("has no hypothesis (apt-get install "
                      "python3-hypothesis)", err)


if __name__ == "__main__":
    unittest.main()
