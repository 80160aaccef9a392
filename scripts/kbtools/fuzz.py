# SPDX-License-Identifier: GPL-2.0
"""Fuzzing: the libFuzzer harnesses of fuzz/ run for a time or a number
of inputs, and the property tests of the Python readers explored with
fresh random examples.

    kbench fuzz run [-o OUT] [-t SECONDS | -r RUNS] HARNESS...
                                        (fuzz/run.sh)
    kbench fuzz properties [-n EXAMPLES] [MODULE...]
                                        (fuzz/properties.sh)

make check runs both fixed: fuzz_short (fuzz/run.sh -r) and
python_properties (tests/run.sh, derandomized).
"""

import os
import re
import shutil
import sys
import tempfile
from typing import List, NamedTuple, Optional, Sequence

from kbtools import cli, paths, proc
from kbtools.output import msg

FUZZ = os.path.join(paths.TOP, "fuzz")
TESTS = os.path.join(paths.TOP, "tests")
# The longest input worth trying, per harness: an option value, a
# /proc/PID/status read, a few pages of cgroup text, a netlink datagram.
MAX_LEN = {"options": 256, "proc_stat": 4096, "cgroup": 16384}
MAX_LEN_OTHERS = 8192
FINDING = re.compile(r"ERROR:|runtime error:|deadly signal|Test unit written")
# The property tests run under Debian's python3, as make check runs them.
PYTHON = "/usr/bin/python3"

RUN_HELP = """\
Run each libFuzzer harness for a fixed time (or a fixed number of
runs); fail on the first crash, leak, timeout or out-of-memory and
leave the reproducer.

Usage: {prog} [-o OUT] [-t SECONDS | -r RUNS] HARNESS...
  -o OUT      where the harnesses were built (default fuzz/build)
  -t SECONDS  time per harness (default 30): exploration
  -r RUNS     RUNS inputs per harness with a fixed seed, from the
              committed seeds only: the same inputs every time (make
              check's regression run)
  HARNESS     options, proc_stat, cgroup, netlink
Each harness starts from the seeds in fuzz/corpus/HARNESS and (with -t)
what earlier runs kept in OUT/corpus/HARNESS (new inputs go there),
with the words of fuzz/HARNESS.dict when there is one. Prints
one line of figures per harness (executions, coverage, corpus). A
failure leaves OUT/artifacts/HARNESS-crash-SHA1 (or -leak-, -timeout-,
-oom-) and prints the command that reproduces it. Exit 0 when every
harness ran clean, 1 on a finding, 2 on bad usage.
"""

PROPERTIES_HELP = """\
Explore the property tests of the Python readers (tests/test_fuzz_*.py)
with fresh random examples, as fuzz/run.sh explores with the libFuzzer
harnesses. make check runs the same properties derandomized, a fixed
regression run (tests/run.sh python_properties).

Usage: {prog} [-n EXAMPLES] [MODULE...]
  -n EXAMPLES  examples per property (default 1000; report.py's
               properties a tenth), after the committed @example()s
  MODULE       test_fuzz_kcidb, ... (default: every test_fuzz_*.py)
A property that does not hold prints its smallest falsifying example
as an @example(...) line, named again at the end with the test it
belongs above: paste it there, fix what it shows, commit both; make
check then runs it first, every time. The log is fuzz/build/
properties.log. Exit 0 when every property held, 1 on a finding (or a
property skipped), 2 on bad usage or without hypothesis.
"""


# ---- the libFuzzer harnesses ------------------------------------------------

class Limits(NamedTuple):
    """How long a harness runs, from where, started how."""
    launch: List[str]
    options: List[str]
    corpora: List[str]


def limits(harness: str, out: str, seconds: int, runs: Optional[int],
           scratch: str) -> Limits:
    """A fixed time from every kept input, or a fixed number of inputs
    with a fixed seed from the committed seeds alone (its new inputs go
    to scratch): the same run every time."""
    seeds = os.path.join(FUZZ, "corpus", harness)
    if runs is None:
        return Limits([], [f"-max_total_time={seconds}"],
                      [os.path.join(out, "corpus", harness), seeds])
    kept = os.path.join(scratch, harness)
    os.makedirs(kept, exist_ok=True)
    # Without address randomization too: with it the coverage of a fixed
    # seed still differed by a few features from run to run.
    return Limits(["setarch", os.uname().machine, "-R"],
                  [f"-runs={runs}", "-seed=1"], [kept, seeds])


def harness_command(harness: str, out: str, lim: Limits) -> List[str]:
    dictionary = os.path.join(FUZZ, f"{harness}.dict")
    words = [f"-dict={dictionary}"] if os.path.isfile(dictionary) else []
    return [*lim.launch, os.path.join(out, f"fuzz_{harness}"), *words,
            *lim.options, "-timeout=10", "-rss_limit_mb=2048",
            f"-max_len={MAX_LEN.get(harness, MAX_LEN_OTHERS)}",
            "-close_fd_mask=3",
            f"-artifact_prefix={os.path.join(out, 'artifacts', harness)}-",
            "-print_final_stats=1", *lim.corpora]


def figures(log: List[str]) -> str:
    """The figures of libFuzzer's last status line ("#N DONE cov: ...")
    as "N runs, cov: ..."."""
    status = [line for line in log if re.match(r"#[0-9]+", line)]
    if not status:
        return ""
    return re.sub(r"^#([0-9]+)\s+[A-Z]+\s+", r"\1 runs, ", status[-1])


def with_context(log: List[str], pattern: "re.Pattern[str]", after: int
                 ) -> List[str]:
    """The lines that match and `after` lines after each, groups apart
    parted by "--" (grep -A)."""
    keep: List[int] = []
    for n, line in enumerate(log):
        if pattern.search(line):
            keep += range(max(n, keep[-1] + 1 if keep else 0),
                          min(n + after + 1, len(log)))
    shown: List[str] = []
    for i, n in enumerate(keep):
        if i and n != keep[i - 1] + 1:
            shown.append("--")
        shown.append(log[n])
    return shown


def finding(harness: str, binary: str, log_path: str, rc: int) -> List[str]:
    """What a harness that exited non-zero found, and how to see it
    again."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read().splitlines()
    lines = with_context(log, FINDING, 20)[:40]
    lines.append(f"FAIL: {harness}: libFuzzer exited {rc} (log: {log_path})")
    artifacts = [m.group(1) for m in map(re.compile(
        r".*Test unit written to (.*)$").match, log) if m]
    if artifacts:
        lines.append(f"reproduce: {binary} {artifacts[-1]}")
    return lines


def check_harnesses(out: str, harnesses: Sequence[str]) -> None:
    """Every harness built and seeded before any runs."""
    for h in harnesses:
        binary = os.path.join(out, f"fuzz_{h}")
        if not os.access(binary, os.X_OK):
            raise cli.Failure(f"no harness {binary} (make -C fuzz first)", 2)
        seeds = os.path.join(FUZZ, "corpus", h)
        if not os.path.isdir(seeds):
            raise cli.Failure(f"no seed corpus {seeds}", 2)


def run_harness(h: str, out: str, seconds: int, runs: Optional[int],
                scratch: str) -> bool:
    """One harness, its figures or its finding on stdout; whether it ran
    clean."""
    os.makedirs(os.path.join(out, "corpus", h), exist_ok=True)
    os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
    log = os.path.join(out, f"{h}.log")
    cmd = harness_command(h, out, limits(h, out, seconds, runs, scratch))
    rc = proc.run(cmd, log=log)
    if rc != 0:
        lines = finding(h, os.path.join(out, f"fuzz_{h}"), log, rc)
    else:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [f"{h}: {figures(f.read().splitlines())}: no crash"]
    print("\n".join(lines), flush=True)
    return rc == 0


def run_main(argv: Sequence[str], prog: str = "kbench fuzz run") -> int:
    """fuzz/run.sh: 0 every harness ran clean, 1 a finding, 2 bad
    usage (a harness not built or without seeds included)."""
    ap = cli.UsageParser(prog=prog, help_text=RUN_HELP.format(prog=prog))
    ap.add_argument("-o", dest="out", default=os.path.join(FUZZ, "build"))
    ap.add_argument("-t", dest="seconds", default="30")
    ap.add_argument("-r", dest="runs")
    ap.add_argument("harnesses", nargs="*")
    a = ap.parse_args(list(argv))
    if not a.harnesses:
        ap.error("no harness given")
    seconds = ap.count(a.seconds, f"-t wants whole seconds, not "
                       f"'{a.seconds}'")
    runs = None if a.runs is None else ap.count(
        a.runs, f"-r wants a number of runs, not '{a.runs}'")
    if not os.path.isdir(a.out):
        ap.error(f"-o: no directory '{a.out}'")
    out = os.path.abspath(a.out)

    def body() -> int:
        check_harnesses(out, a.harnesses)
        scratch = tempfile.mkdtemp(prefix="kbench-fuzz.")
        try:
            clean = [run_harness(h, out, seconds, runs, scratch)
                     for h in a.harnesses]
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return 0 if all(clean) else 1
    return cli.orchestrate(prog, body)


# ---- the property tests -----------------------------------------------------

def property_command(modules: Sequence[str]) -> List[str]:
    if modules:
        return [PYTHON, "-m", "unittest", "-v", *modules]
    return [PYTHON, "-m", "unittest", "discover", "-v", "-s", ".", "-p",
            "test_fuzz_*.py"]


def properties_verdict(log_path: str) -> int:
    """The falsifying examples found, and the verdict, from the log."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read().splitlines()
    found = [line for line in log if line.startswith("@example(")]
    if found:
        print("\nFalsifying examples: paste each above the test its "
              "comment names (tests/), make it pass, commit both:")
        print("\n".join(f"    {line}" for line in found))
    if not any(line.startswith("OK") for line in log):
        print(f"FAIL: a property does not hold (log: {log_path})")
        return 1
    if any("skipped" in line for line in log):
        print("FAIL: a property was skipped, so it explored nothing "
              f"(log: {log_path})")
        return 1
    return 0


def properties_main(argv: Sequence[str],
                    prog: str = "kbench fuzz properties") -> int:
    """fuzz/properties.sh: 0 every property held, 1 a finding or a
    property skipped, 2 bad usage or no hypothesis."""
    ap = cli.UsageParser(prog=prog,
                         help_text=PROPERTIES_HELP.format(prog=prog))
    ap.add_argument("-n", dest="examples", default="1000")
    ap.add_argument("modules", nargs="*")
    a = ap.parse_args(list(argv))
    examples = ap.count(a.examples, "-n wants a count of examples, not "
                        f"'{a.examples}'")
    for m in a.modules:
        if not (m.startswith("test_fuzz_")
                and os.path.isfile(os.path.join(TESTS, f"{m}.py"))):
            ap.error(f"no property module '{m}' (tests/test_fuzz_*.py)")
    if not proc.succeeds([PYTHON, "-c", "import hypothesis"]):
        msg(prog, f"{PYTHON} has no hypothesis (apt-get install "
            "python3-hypothesis)")
        return 2

    def body() -> int:
        log = os.path.join(FUZZ, "build", "properties.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        env = dict(os.environ, KBENCH_FUZZ_MODE="explore",
                   KBENCH_FUZZ_EXAMPLES=str(examples))
        sys.stdout.flush()
        proc.tee(property_command(a.modules), log, env=env, cwd=TESTS,
                 merge=True)
        return properties_verdict(log)
    return cli.orchestrate(prog, body)
