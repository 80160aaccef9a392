# SPDX-License-Identifier: GPL-2.0
"""Fuzzing: the libFuzzer harnesses of fuzz/, each built twice (ASan+UBSan,
and MSan), explored for a time or replayed over the committed seeds, and
the property tests of the Python readers explored with fresh random
examples.

    kbench fuzz run [-o OUT] [-t SECONDS | --replay] HARNESS...
                                        (fuzz/run.sh)
    kbench fuzz properties [-n EXAMPLES] [MODULE...]
                                        (fuzz/properties.sh)

make check runs both fixed: fuzz_short (fuzz/run.sh --replay: every
committed seed once, no mutation) and python_properties (tests/run.sh,
derandomized).
"""

import os
import re
import sys
from typing import List, NamedTuple, Sequence, Tuple

from kbtools import cli, packages, paths, proc
from kbtools.output import msg

FUZZ = os.path.join(paths.TOP, "fuzz")
TESTS = os.path.join(paths.TOP, "tests")
# The longest input worth trying, per harness: an option value, a
# /proc/PID/status read, a few pages of cgroup text, a netlink datagram.
MAX_LEN = {"options": 256, "proc_stat": 4096, "cgroup": 16384}
MAX_LEN_OTHERS = 8192
FINDING = re.compile(r"ERROR:|WARNING: MemorySanitizer|runtime error:|"
                     r"deadly signal|Test unit written")
# The property tests run under Debian's python3, as make check runs them.
PYTHON = packages.DEBIAN_PYTHON


class Build(NamedTuple):
    """One build of every harness (fuzz/Makefile): its name in the
    output, and its place below OUT ("" for OUT itself)."""
    name: str
    subdir: str


BUILDS = (Build("ASan+UBSan", ""), Build("MSan", "msan"))

RUN_HELP = """\
Run each libFuzzer harness, in both of its builds (ASan+UBSan, and MSan
in OUT/msan), for a fixed time, or replay the committed seeds; fail on
a crash, leak, uninitialized read, timeout or out-of-memory and say how
to reproduce it.

Usage: {prog} [-o OUT] [-t SECONDS | --replay] HARNESS...
  -o OUT      where the harnesses were built (default fuzz/build)
  -t SECONDS  time per harness and build (default 30): exploration
  --replay    run every committed seed of fuzz/corpus/HARNESS once, as
              it is, and nothing else: the same inputs on every machine
              and every build (make check's regression run)
  HARNESS     options, proc_stat, cgroup, netlink
Exploring, each harness starts from the seeds in fuzz/corpus/HARNESS and
what earlier runs kept in OUT/corpus/HARNESS (new inputs go there), with
the words of fuzz/HARNESS.dict when there is one, and prints one line of
figures per harness and build (executions, coverage, corpus). A finding
leaves OUT/artifacts/[msan-]HARNESS-crash-SHA1 (or -leak-, -timeout-,
-oom-) and prints the command that reproduces it. Replaying prints one
line per harness and build, the same on every machine when all is
clean; every seed that fails is named with its command. Exit 0 when
every harness ran clean, 1 on a finding, 2 on bad usage.
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

def binary(out: str, build: Build, harness: str) -> str:
    return os.path.join(out, build.subdir, f"fuzz_{harness}")


def log_path(out: str, build: Build, harness: str) -> str:
    return os.path.join(out, build.subdir, f"{harness}.log")


def seed_dir(harness: str) -> str:
    return os.path.join(FUZZ, "corpus", harness)


def seeds(harness: str) -> List[str]:
    """The committed seeds of a harness, in name order."""
    d = seed_dir(harness)
    return [os.path.join(d, f) for f in sorted(os.listdir(d))
            if os.path.isfile(os.path.join(d, f))]


def common_options(out: str, build: Build, harness: str) -> List[str]:
    """What every run of a harness is given: its limits, its output
    silenced, where a finding goes."""
    prefix = f"{build.subdir}-" if build.subdir else ""
    return ["-timeout=10", "-rss_limit_mb=2048", "-close_fd_mask=3",
            "-artifact_prefix="
            + os.path.join(out, "artifacts", f"{prefix}{harness}-")]


def explore_command(harness: str, out: str, build: Build,
                    seconds: int) -> List[str]:
    """A fixed time from every kept input and the seeds; new inputs are
    kept in OUT/corpus/HARNESS, which both builds share."""
    dictionary = os.path.join(FUZZ, f"{harness}.dict")
    words = [f"-dict={dictionary}"] if os.path.isfile(dictionary) else []
    return [binary(out, build, harness), *words,
            f"-max_total_time={seconds}",
            *common_options(out, build, harness),
            f"-max_len={MAX_LEN.get(harness, MAX_LEN_OTHERS)}",
            "-print_final_stats=1",
            os.path.join(out, "corpus", harness), seed_dir(harness)]


def replay_command(harness: str, out: str, build: Build,
                   files: Sequence[str]) -> List[str]:
    """Each file once, whole (no -max_len: libFuzzer would cut it), in
    the order given; no mutation."""
    return [binary(out, build, harness), *common_options(out, build, harness),
            *files]


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


def read_log(path: str) -> List[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def finding(what: str, binary_path: str, log_path_: str, rc: int
            ) -> List[str]:
    """What an exploring harness that exited non-zero found, and how to
    see it again."""
    log = read_log(log_path_)
    lines = with_context(log, FINDING, 20)[:40]
    lines.append(f"FAIL: {what}: libFuzzer exited {rc} (log: {log_path_})")
    artifacts = [m.group(1) for m in map(re.compile(
        r".*Test unit written to (.*)$").match, log) if m]
    if artifacts:
        lines.append(f"reproduce: {binary_path} {artifacts[-1]}")
    return lines


def check_harnesses(out: str, harnesses: Sequence[str]) -> None:
    """Every harness built (both builds) and seeded before any runs."""
    for h in harnesses:
        for build in BUILDS:
            path = binary(out, build, h)
            if not os.access(path, os.X_OK):
                raise cli.Failure(f"no harness {path} (make -C fuzz first)",
                                  2)
        if not os.path.isdir(seed_dir(h)) or not seeds(h):
            raise cli.Failure(f"no seed corpus {seed_dir(h)}", 2)


def explore(h: str, out: str, build: Build, seconds: int) -> bool:
    """One harness in one build for a time, its figures or its finding
    on stdout; whether it ran clean."""
    what = f"{h} ({build.name})"
    log = log_path(out, build, h)
    rc = proc.run(explore_command(h, out, build, seconds), log=log)
    if rc != 0:
        lines = finding(what, binary(out, build, h), log, rc)
    else:
        lines = [f"{what}: {figures(read_log(log))}: no crash"]
    print("\n".join(lines), flush=True)
    return rc == 0


def failed_seed(log: List[str], files: Sequence[str]) -> str:
    """The seed libFuzzer was running when it stopped ("Running: FILE"),
    or "" when it stopped before the first."""
    running = [line[len("Running: "):] for line in log
               if line.startswith("Running: ")]
    return running[-1] if running and running[-1] in files else ""


def replay(h: str, out: str, build: Build) -> bool:
    """Every seed of one harness once in one build: one line when all
    ran clean; else the first finding in full, every failing seed with
    the command that reproduces it. Whether all ran clean. A failing
    seed ends libFuzzer's process: the seeds after it run in the next."""
    what = f"{h} ({build.name})"
    log = log_path(out, build, h)
    files = seeds(h)
    rest = list(files)
    failing: List[Tuple[str, int]] = []
    lines: List[str] = []
    while rest:
        start = len(read_log(log)) if failing else 0
        rc = proc.run(replay_command(h, out, build, rest), log=log,
                      append=bool(failing))
        if rc == 0:
            break
        this = read_log(log)[start:]
        seed = failed_seed(this, rest)
        if not failing:
            lines += with_context(this, FINDING, 20)[:40]
        failing.append((seed, rc))
        if not seed:
            lines.append(f"FAIL: {what}: libFuzzer exited {rc} before a "
                         f"seed ran (log: {log})")
            break
        lines.append(f"FAIL: {what}: seed {os.path.basename(seed)}: "
                     f"libFuzzer exited {rc}")
        lines.append(f"reproduce: {binary(out, build, h)} {seed}")
        rest = rest[rest.index(seed) + 1:]
    verdict = (f"{len(failing)} failed (log: {log})" if failing
               else "clean")
    lines.append(f"{what}: {len(files)} seeds replayed: {verdict}")
    print("\n".join(lines), flush=True)
    return not failing


def run_main(argv: Sequence[str], prog: str = "kbench fuzz run") -> int:
    """fuzz/run.sh: 0 every harness ran clean, 1 a finding, 2 bad
    usage (a harness not built or without seeds included)."""
    ap = cli.UsageParser(prog=prog, help_text=RUN_HELP.format(prog=prog))
    ap.add_argument("-o", dest="out", default=os.path.join(FUZZ, "build"))
    ap.add_argument("-t", dest="seconds")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("harnesses", nargs="*")
    a = ap.parse_args(list(argv))
    if not a.harnesses:
        ap.error("no harness given")
    if a.replay and a.seconds is not None:
        ap.error("-t and --replay exclude each other (a replay runs each "
                 "seed once)")
    seconds = ap.count(a.seconds or "30", f"-t wants whole seconds, not "
                       f"'{a.seconds}'")
    if not os.path.isdir(a.out):
        ap.error(f"-o: no directory '{a.out}'")
    out = os.path.abspath(a.out)

    def body() -> int:
        check_harnesses(out, a.harnesses)
        os.makedirs(os.path.join(out, "artifacts"), exist_ok=True)
        clean = []
        for h in a.harnesses:
            if not a.replay:
                os.makedirs(os.path.join(out, "corpus", h), exist_ok=True)
            for build in BUILDS:
                clean.append(replay(h, out, build) if a.replay
                             else explore(h, out, build, seconds))
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
