# SPDX-License-Identifier: GPL-2.0
"""Property-based tests of the LAVA side: kbtools.lava (a run_all.sh
KTAP stream and its --json results as LAVA test cases; --check-job on a
finished job's results and log) and scripts/lava_job.py (the job
definition from command-line values). Any input gives a result or one
line on stderr naming the input, with exit status 2; never a traceback
or a hang. Output into a closed pipe ends quietly."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import unittest
from typing import Any, List, Sequence, Tuple

import fuzz_props
import test_lava
from fuzz_props import HERE, MISSING, SCRIPTS, example, prop, st

from kbtools import ktap, lava, lava_job  # noqa: E402

try:
    import yaml
except ImportError:
    yaml = None

RECORDED = os.path.join(HERE, "data", "kcidb", "host")
PROG = "kbtools.lava"
PREFIX = PROG + ": "
LAVA_COMMANDS = ("lava-test-set", "lava-test-case")


def recorded_stream() -> str:
    with open(os.path.join(RECORDED, "run_all.ktap"), encoding="utf-8") as f:
        return f.read()


STREAM = recorded_stream().splitlines()
DOCS = fuzz_props.load_docs(RECORDED)
# What a lab gives for the recorded stream, as test_lava's job check
# builds it: LAVA's test results and the job's log.
_JOB = test_lava.JobCheck()
API = _JOB.api_of(
    lava.translate(ktap.parse(recorded_stream())))
ENTRIES = _JOB.log_of(recorded_stream())


def check_script(testcase: unittest.TestCase, script: str) -> None:
    """Every line of the printed script is a comment or one well-quoted
    lava-test-set / lava-test-case command."""
    for line in script.splitlines():
        if line.startswith("# "):
            continue
        argv = shlex.split(line)
        testcase.assertIn(argv[0], LAVA_COMMANDS, line)
        if argv[1:] != ["stop"]:
            testcase.assertTrue(lava.NAME_OK.match(argv[2]), line)


def error_lines(testcase: unittest.TestCase, rc: int, err: str,
                paths: Sequence[str]) -> None:
    """Exit 0 or 1 with our messages only, or exit 2 with one line that
    names one of PATHS."""
    testcase.assertIn(rc, (0, 1, 2), err)
    lines = err.strip("\n").split("\n") if err else []
    for line in lines:
        testcase.assertTrue(line.startswith(PREFIX), err)
    if rc == 2:
        fuzz_props.assert_error(testcase, err, PROG, paths)


@unittest.skipIf(MISSING, MISSING or "")
class LavaStreamProperties(unittest.TestCase):
    """A stream (and results directory) to LAVA test cases."""

    def setUp(self) -> None:
        self.dir, = fuzz_props.temp_paths(self, "run")
        self.ktap = os.path.join(self.dir, "run_all.ktap")

    def fresh_copy(self) -> None:
        """The recorded run, again for each example."""
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(RECORDED, self.dir)

    def translate(self, *opts: str) -> str:
        rc, out, err = fuzz_props.run_main(lava.main, list(opts) +
                                           [self.ktap], PROG)
        self.assertIn(rc, (0, 1), err)
        self.assertEqual(err, "")
        check_script(self, out)
        # The stream's problems name its file and their lines.
        if "# run_all/ktap: fail: " in out:
            self.assertIn(f"# run_all/ktap: fail: {self.ktap}: line ", out)
        return out

    @prop(lines=fuzz_props.ktap_lines())
    def test_any_ktap(self, lines: List[str]) -> None:
        self.fresh_copy()
        fuzz_props.write_text(self.ktap, "\n".join(lines) + "\n")
        self.translate()

    # Issue 34's stream: a test line without a name.
    @example(edits=[(2, "replace", "    ok 0 ")], with_json=True)
    @prop(edits=fuzz_props.line_edits(
        STREAM, hows=("drop", "double", "replace", "cut")),
        with_json=st.booleans())
    def test_mutated_stream(self, edits: List[fuzz_props.LineEdit],
                            with_json: bool) -> None:
        """The recorded stream with lines dropped, doubled, changed or
        cut off, with and without its results."""
        self.fresh_copy()
        fuzz_props.write_text(self.ktap, "\n".join(
            fuzz_props.edited_lines(STREAM, edits)) + "\n")
        self.translate(*(("--json", self.dir) if with_json else ()))

    @prop(case=fuzz_props.file_and(DOCS, fuzz_props.spoilings))
    def test_mutated_results(self, case: Tuple[str, Tuple[str, Any]]
                             ) -> None:
        """A results file mutated, spoiled or replaced: a failed
        'results' case at worst, never an exception."""
        self.fresh_copy()
        name, spoiling = case
        fuzz_props.write_text(os.path.join(self.dir, name),
                              fuzz_props.spoiled_text(DOCS[name], spoiling))
        self.translate("--json", self.dir)


@unittest.skipIf(MISSING or yaml is None,
                 MISSING or "PyYAML missing (Debian: python3-yaml)")
class LavaCheckJobProperties(unittest.TestCase):
    """--check-job TESTS.json LOG.yaml on what a lab (or a hand) gives."""

    def setUp(self) -> None:
        self.tests, self.log = fuzz_props.temp_paths(self, "tests.json",
                                                     "log.yaml")

    def check_job(self, tests_text: str, log_text: str) -> int:
        fuzz_props.write_text(self.tests, tests_text)
        fuzz_props.write_text(self.log, log_text)
        rc, _, err = fuzz_props.run_main(
            lava.main, ["--check-job", self.tests, self.log], PROG)
        error_lines(self, rc, err, (self.tests, self.log))
        return rc

    def test_recorded_job_matches(self) -> None:
        self.assertEqual(self.check_job(json.dumps(API),
                                        yaml.safe_dump(ENTRIES)), 0)

    def test_nested_too_deeply(self) -> None:
        deep = "[" * 100000 + "]" * 100000
        self.assertEqual(self.check_job(deep, yaml.safe_dump(ENTRIES)), 2)
        self.assertEqual(self.check_job(json.dumps(API), deep), 2)

    # Found by this property: results of another shape (not a list, a
    # result that is no object, metadata that is a list, a measurement
    # that is no number) ended in a traceback, and a mismatch named with
    # a line break printed two lines. Issue 34's audit: a lone surrogate
    # ("\ud800") in a name could not be printed.
    @example(spoiling=("any", [0]))
    @example(spoiling=("any", {"results": 0}))
    @example(spoiling=("mutate", ("replace", ("results", 0, "metadata"),
                                  [0])))
    @example(spoiling=("mutate", ("replace", ("results", 0, "measurement"),
                                  "x")))
    @example(spoiling=("mutate", ("replace", ("results", 0, "name"), "\n")))
    @example(spoiling=("mutate", ("replace", ("results", 0, "name"),
                                  "\ud800")))
    @prop(spoiling=fuzz_props.spoilings(API))
    def test_mutated_tests(self, spoiling: Tuple[str, Any]) -> None:
        self.check_job(fuzz_props.spoiled_text(API, spoiling),
                       yaml.safe_dump(ENTRIES))

    # Found by this property: YAML's errors (an unclosed flow sequence)
    # and a log that is no list ended in a traceback.
    @example(spoiling=("spoil", ("truncate", 5)))
    @example(spoiling=("any", 1))
    @prop(spoiling=fuzz_props.spoilings(ENTRIES))
    def test_mutated_log(self, spoiling: Tuple[str, Any]) -> None:
        # JSON is YAML: a spoiled document is a spoiled log.
        self.check_job(json.dumps(API), fuzz_props.spoiled_text(
            ENTRIES, spoiling, dump=yaml.safe_dump))


# lava_job.py's options that take free text, and what a value may hold.
TEXT_OPTIONS = ("--job-name", "--kbench-dir", "--device-type", "--arch",
                "--deploy-to", "--boot-method", "--kernel-type", "--init",
                "--kernel-arg", "--prompt", "--login", "-t", "--kernel",
                "--rootfs")
NUMBER_OPTIONS = ("--repeat", "--timeout", "--memory", "--boot-minutes",
                  "--test-minutes")


@unittest.skipIf(MISSING or yaml is None,
                 MISSING or "PyYAML missing (Debian: python3-yaml)")
class LavaJobProperties(unittest.TestCase):
    """Any option values: a job LAVA can read whose commands say what was
    asked, or a usage error (exit 2) that names the option."""

    URLS = ["--kernel", "https://lab/vmlinuz", "--rootfs",
            "https://lab/rootfs.cpio.gz"]

    def setUp(self) -> None:
        self.out, = fuzz_props.temp_paths(self, "job.yaml")

    def check_job(self, argv: List[str]) -> None:
        rc, _, err = fuzz_props.run_main(lava_job.main,
                                         self.URLS + argv + ["-o", self.out],
                                         "lava_job.py")
        self.assertIn(rc, (0, 2), err)
        if rc == 2:
            self.assertIn("lava_job.py: error: ", err)
            self.assertNotIn("Traceback", err)
            return
        self.assertEqual(err, "")
        with open(self.out, encoding="utf-8") as f:
            job = yaml.safe_load(f)
        deploy, _, test = (list(a.values())[0] for a in job["actions"])
        args = lava_job.parse_args(self.URLS + argv)
        # Every kernel argument is one word of the kernel's command line,
        # and that line one word of QEMU's.
        cmdline = lava_job.kernel_args(args)
        self.assertEqual(cmdline.split()[1:],
                         ["rdinit=" + args.init] + args.kernel_arg)
        image_arg = deploy["images"]["kernel"].get("image_arg")
        if image_arg is not None:
            self.assertEqual(shlex.split(image_arg),
                             ["-kernel", "{kernel}", "-append", cmdline])
        # The run step is the words it was built from.
        step = test["definitions"][0]["repository"]["run"]["steps"][0]
        words = shlex.split(step)
        if args.machine_slow:
            self.assertEqual(words.pop(0), "KSFT_MACHINE_SLOW=yes")
        self.assertEqual(words[0], f"{args.kbench_dir}/scripts/guest/lava_run.sh")
        tests = [w for i, w in enumerate(words) if words[i - 1] == "-t"]
        self.assertEqual(tests, args.test)

    # Found by this property: a kernel argument or init with a blank or a
    # quote went into QEMU's -append "..." as is, a --kbench-dir with a
    # blank into the run step unquoted; a --prompt that is no regular
    # expression was accepted.
    @example(pairs=[("--kernel-arg", "a b")])
    @example(pairs=[("--init", "'")])
    @example(pairs=[("--kbench-dir", " ")])
    @example(pairs=[("--prompt", "(")])
    @prop(pairs=st.lists(st.tuples(
        st.sampled_from(TEXT_OPTIONS + NUMBER_OPTIONS),
        st.text(max_size=12)), max_size=4))
    def test_any_values(self, pairs: List[Tuple[str, str]]) -> None:
        argv: List[str] = []
        for opt, value in pairs:
            argv += [f"{opt}={value}"]
        self.check_job(argv)


class ClosedPipe(unittest.TestCase):
    def run_into_closed_pipe(self, argv: List[str]) -> int:
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run([sys.executable] + argv, stdout=w,
                           stderr=subprocess.PIPE, check=False, text=True,
                           cwd=SCRIPTS)
        os.close(w)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(p.stderr, "")
        return p.returncode

    def test_lava_script_into_closed_pipe(self) -> None:
        self.assertIn(self.run_into_closed_pipe(
            ["-m", "kbtools.lava", os.path.join(RECORDED, "run_all.ktap")]),
            (0, 1))

    def test_lava_job_into_closed_pipe(self) -> None:
        if yaml is None:
            self.skipTest("PyYAML missing (Debian: python3-yaml)")
        self.assertEqual(self.run_into_closed_pipe(
            [os.path.join(SCRIPTS, "lava_job.py")] +
            LavaJobProperties.URLS), 0)


if __name__ == "__main__":
    unittest.main()
