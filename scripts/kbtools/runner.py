# SPDX-License-Identifier: GPL-2.0
"""kbench run on this host: run_all.sh's options (kbtools.options'
RUNNER), the packages and the build, the plan (kbtools.plan), each
program a subprocess (timeout --kill-after=10 SECS [PREFIX] ./PROG ARGS,
the real external program) with its KTAP nested as the kselftest runner
nests it, then the repetitions merged, the sides compared and the report
written by function calls. One KTAP stream on stdout (a copy in
DIR/run_all.ktap with --json), byte for byte as run_all.sh prints it;
run_all.sh hands a run on a host over to it.

Also the host's side of what a run ends with, shared with a guest's
(kbtools.vm, kbtools.ab): the checks of --repeat, --fail-above, --json
and --report, the comparison and the report as '# ' lines.
"""

import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from typing import BinaryIO, Dict, List, Mapping, Optional, Sequence, Tuple

from kbtools import (cli, collection, design, options, packages, paths,
                     plan, policy, proc, results)
from kbtools import compare as kbcompare
from kbtools.output import msg

# run_all.sh's usage text is the one copy: its here-document.
USAGE_START, USAGE_END = "usage() {\n\tcat <<EOF\n", "\nEOF\n}"
NESTS = ("indent", "hash")
# --repeat without N: as many as the design needs.
DESIGN = "design"
# The result of a program's exit status (timeout(1)'s 124, 137 after
# its SIGKILL).
EXIT_PASS, EXIT_SKIP = 0, 4
TIMEOUT_STATUSES = (124, 137)
# A guest's options without --kernel: what run_all.sh says of them.
GUEST_ONLY = {
    "--arch": "option '--arch' needs --kernel IMAGE (it picks the guest's "
              "architecture)",
    "--icount": "option '--icount' needs --kernel IMAGE (it is how the "
                "guest runs)"}


def usage(prog: str) -> str:
    """run_all.sh's usage text, naming prog."""
    with open(paths.script("run_all.sh"), encoding="utf-8") as f:
        text = f.read()
    start = text.index(USAGE_START) + len(USAGE_START)
    body = text[start:text.index(USAGE_END, start)] + "\n"
    return body.replace("$prog", prog)


# ---- options ----------------------------------------------------------------

@dataclass
class Args:
    """run_all.sh's options, checked."""
    tests: List[str] = field(default_factory=list)
    list_only: bool = False
    json_dir: str = ""
    repeat: Optional[int] = None      # None: one, or the design's
    design: bool = False              # --repeat without N
    vs_prefix: Optional[List[str]] = None
    vs_text: str = ""                 # --vs-prefix as given (its label)
    base_prefix: List[str] = field(default_factory=list)
    fail_above: str = ""
    report: str = ""
    full: bool = False
    timeout: Optional[int] = None
    nest: str = "indent"
    build: bool = True
    no_install: bool = False
    # KBENCH_MERGE=host: the host of a guest merges, compares, reports.
    host_merges: bool = False
    # Where KSELFTEST_<PROG>_ARGS come from.
    environ: Dict[str, str] = field(default_factory=lambda: dict(os.environ))


def parser(prog: str) -> cli.UsageParser:
    p = cli.UsageParser(prog=prog, help_text=usage(prog))
    options.add_arguments(p, [o.long for o in options.RUNNER],
                          {"--test": {"action": "append", "default": []},
                           "--repeat": {"const": DESIGN}})
    return p


def check_repeat(text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
        raise cli.Error(f"invalid --repeat '{text}': not a number above 0")
    return int(text)


def check_fail_above(text: str) -> str:
    if not re.fullmatch(r"[0-9]+([.][0-9]+)?", text):
        raise cli.Error(f"invalid --fail-above '{text}': not a percentage")
    return text


def check_report(report: str, json_dir: str) -> None:
    """--report FILE needs --json DIR and plots; checked before the run,
    not after it (no matplotlib: exit 4, as report.py)."""
    if not json_dir:
        raise cli.Error("--report needs --json DIR")
    if report.startswith("-"):
        raise cli.Error(f"invalid --report file '{report}'")
    from kbtools import plots  # matplotlib: only when a report is asked
    if not plots.available():
        raise cli.Failure(f"--report: {plots.install_hint()} "
                          f"({plots.MATPLOTLIB_ERROR})", 4)


def json_dir_of(text: str) -> str:
    """--json's directory, created, absolute; cli.Error when it cannot."""
    if not text or text.startswith("-"):
        raise cli.Error(f"invalid --json directory '{text}'")
    try:
        os.makedirs(text, exist_ok=True)
    except OSError as e:
        raise cli.Error(f"cannot create directory '{text}'") from e
    return os.path.abspath(text)


def command_words(option: str, text: str) -> List[str]:
    """A prefix command's words (split on white space, as run_all.sh
    reads them); cli.Error when its command is not found."""
    words = text.split()
    if words and shutil.which(words[0]) is None:
        raise cli.Error(f"{option}: command '{words[0]}' not found")
    return words


def tests_of(values: Sequence[str], known: bool = True) -> List[str]:
    """-t's values, each a name or a comma list; cli.Error on an empty
    name, and on an unknown one unless known is False (the names were
    checked already)."""
    out: List[str] = []
    for value in values:
        for t in value.split(","):
            if not t:
                raise cli.Error(f"empty test name in '{value}'")
            out.append(t)
    if out and known:
        collection.check_tests(out)
    return out


def parse(argv: Sequence[str], prog: str, known: bool = True) -> Args:
    """run_all.sh's options, checked in its order; cli.Error on bad
    usage, SystemExit(0) after --help. known=False: -t's names were
    checked already (tests_of)."""
    for word in argv:
        if word.split("=", 1)[0] in GUEST_ONLY:
            raise cli.Error(GUEST_ONLY[word.split("=", 1)[0]])
    ns = parser(prog).parse_args(list(argv))
    a = Args(tests=tests_of(ns.test, known), list_only=ns.list,
             full=ns.full,
             build=not ns.no_build, no_install=ns.no_install)
    if ns.nest is not None:
        if ns.nest not in NESTS:
            raise cli.Error(f"invalid --nest style '{ns.nest}' (use indent "
                            "or hash)")
        a.nest = ns.nest
    if ns.timeout is not None:
        if not re.fullmatch(r"[0-9]+", ns.timeout):
            raise cli.Error(f"invalid timeout '{ns.timeout}': not a number "
                            "of seconds")
        a.timeout = int(ns.timeout)
    if ns.repeat == DESIGN:
        a.design = True
    elif ns.repeat is not None:
        a.repeat = check_repeat(ns.repeat)
    if ns.vs_prefix is not None:
        a.vs_text = ns.vs_prefix
        a.vs_prefix = command_words("--vs-prefix", ns.vs_prefix)
        if not a.vs_prefix:
            raise cli.Error("empty --vs-prefix command")
        a.base_prefix = command_words("--base-prefix", ns.base_prefix or "")
        a.design = a.design or a.repeat is None
    elif ns.base_prefix is not None:
        raise cli.Error("--base-prefix needs --vs-prefix (it wraps the base "
                        "side)")
    if ns.fail_above is not None:
        if a.vs_prefix is None:
            raise cli.Error("--fail-above needs --vs-prefix or --vs-kernel "
                            "(or use scripts/compare.py)")
        a.fail_above = check_fail_above(ns.fail_above)
    if ns.json is not None:
        a.json_dir = json_dir_of(ns.json)
    a.report = ns.report or ""
    a.host_merges = os.environ.get("KBENCH_MERGE") == "host"
    return a


# ---- the run ----------------------------------------------------------------

class Stream:
    """The run's KTAP: stdout, and its copy in DIR/run_all.ktap."""

    def __init__(self, out: BinaryIO, copy: str = ""):
        self.out = out
        self.copy: Optional[BinaryIO] = open(copy, "wb") if copy else None

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()
        if self.copy is not None:
            self.copy.write(data)
            self.copy.flush()

    def line(self, text: str) -> None:
        self.write(text.encode() + b"\n")

    def close(self) -> None:
        if self.copy is not None:
            self.copy.close()
            self.copy = None


class Nester:
    """A program's KTAP nested under its result line: every line behind
    '# ' (hash, as run_kselftest.sh), or indented by 4 with a
    '# Subtest: TITLE' line after its version line (indent, KTAP v1)."""

    def __init__(self, stream: Stream, nest: str, title: str):
        self.stream = stream
        self.hash = nest == "hash"
        self.title = title.encode()
        self.subtest_done = False

    def __call__(self, line: bytes) -> None:
        line = line.rstrip(b"\n")
        if self.hash:
            self.stream.write(b"# " + line + b"\n")
            return
        self.stream.write(b"    " + line + b"\n")
        if not self.subtest_done and re.match(rb"K?TAP version", line):
            self.stream.write(b"    # Subtest: " + self.title + b"\n")
            self.subtest_done = True


def result_line(step: plan.Step, rc: int) -> Tuple[str, str]:
    """The step's KTAP result line and its kind (pass, skip, fail)."""
    if rc == EXIT_PASS:
        return f"ok {step.n} {step.title}", "pass"
    if rc == EXIT_SKIP:
        return f"ok {step.n} {step.title} # SKIP", "skip"
    if rc in TIMEOUT_STATUSES:
        return (f"not ok {step.n} {step.title} # TIMEOUT {step.timeout} "
                "seconds"), "fail"
    return f"not ok {step.n} {step.title} # exit={rc}", "fail"


def run_step(step: plan.Step, stream: Stream, nest: str) -> int:
    """One program run, its output nested into the stream; its exit
    status as the shell gives it (128 + N for a signal)."""
    if step.json:
        os.makedirs(os.path.dirname(step.json), exist_ok=True)
    rc = proc.each_line(step.command(), Nester(stream, nest, step.title),
                        cwd=os.path.join(paths.TOP, step.test))
    return 128 - rc if rc < 0 else rc


def design_lines(a: Args, tests: Sequence[str], prog: str) -> List[str]:
    """The design's lines (said on stderr now, as '# ' lines in the
    stream), setting a.repeat when the design decides it."""
    if a.host_merges:
        if a.design and a.repeat is None:
            raise cli.Error("KBENCH_MERGE=host needs --repeat N (the host "
                            "works out the design)")
        return []
    if not a.design and (a.vs_prefix is None or a.list_only):
        return []
    n, lines = design.plan(tests, a.repeat)
    for line in lines:
        msg(prog, line)
    if a.repeat is None:
        a.repeat = n
    return lines


def request(a: Args, programs: Sequence[str], scratch: str) -> plan.Request:
    """The plan's request: the options, the tests' settings timeouts
    and this process's environment."""
    factor = a.environ.get("KBENCH_TIMEOUT_FACTOR", "1")
    if not re.fullmatch(r"[1-9][0-9]{0,3}", factor):
        raise cli.Error("KBENCH_TIMEOUT_FACTOR must be a whole number from "
                        f"1, not '{factor}'")
    tests = {p.split(":", 1)[0] for p in programs}
    return plan.Request(
        tuple(programs), a.repeat or 1, a.vs_prefix is not None,
        tuple(a.vs_prefix or ()), tuple(a.base_prefix), a.full, a.timeout,
        int(factor), {t: policy.settings_timeout(os.path.join(paths.TOP, t))
                      for t in tests},
        a.json_dir, scratch, a.host_merges, a.environ)


# The scratch directory of a guest's run (its JSON of repetitions
# without --json): the guest's /tmp, a throwaway of its own.
GUEST_SCRATCH = "/tmp/kbench-run"


def guest_plan(argv: Sequence[str], environ: Mapping[str, str],
               programs: Sequence[str], json_dir: str, prog: str) -> str:
    """The plan file that a guest's scripts/guest/run_plan.sh runs
    (kbtools.plan.to_file): run_all.sh's options argv (the repetitions
    resolved), the guest's environment (its timeout factor,
    KSELFTEST_<PROG>_ARGS), the host merging the repetitions, json_dir
    the --json directory as the guest sees it ("" none); with --list,
    the listing (plan.listing_file). cli.Error on bad usage. The host
    resolved -t into programs already: its names are not looked up
    again (make list once a boot, and make on a host that runs none)."""
    a = parse(argv, prog, known=False)
    if a.list_only:
        return plan.listing_file(programs)
    a.environ = dict(environ)
    a.host_merges = True
    a.json_dir = json_dir
    p = plan.make(request(a, programs, GUEST_SCRATCH))
    return plan.to_file(p, a.nest, os.path.join(json_dir, "run_all.ktap")
                        if json_dir else "")


def say_lines(text: str, ktap: str = "") -> None:
    """Lines after the guest's stream as KTAP comments ('# '), on stdout
    and at the end of the run's KTAP copy when there is one."""
    lines = "".join(f"# {ln}\n" for ln in text.splitlines())
    sys.stdout.write(lines)
    sys.stdout.flush()
    if ktap and os.path.isfile(ktap):
        with open(ktap, "a", encoding="utf-8") as f:
            f.write(lines)


def compare(dirs: Sequence[str], labels: str, fail_above: str, prog: str,
            ktap: str = "", calibration: Optional[str] = None,
            where: Optional[str] = None) -> int:
    """The sides' results compared (kbtools.compare, as compare.py
    compares them; calibration, where: its --calibration FILE, --where
    FILE), its table as '# ' lines: 0; 1 a row beyond fail_above (said
    on stderr); 2 when they cannot be compared."""
    limit = float(fail_above) if fail_above else None
    try:
        c = kbcompare.comparison(kbcompare.Request(
            dirs, labels.split(","), fail_above_pct=limit,
            calibration=calibration, where=where))
    except results.ResultError as e:
        msg(prog, f"could not compare the results: {e}")
        return 2
    say_lines(c.text, ktap)
    for line in c.over_lines(limit) if limit is not None else ():
        msg(prog, line)
    return 1 if c.over else 0


def report(out: str, results_dir: str, ktap: str = "") -> bool:
    """The HTML report of results_dir into out (kbtools.report, as
    report.py writes it); said as a '# ' line (why not, when it
    cannot be written)."""
    from kbtools import report as kbreport  # matplotlib: only when asked
    try:
        kbreport.write(out, [results_dir])
    except (kbreport.ReportError, cli.Error, cli.Failure) as e:
        say_lines(f"report: {e}", ktap)
        return False
    say_lines(f"report: {out}", ktap)
    return True


def candidate_label(vs_prefix: str) -> str:
    """The candidate's label: its command (compare.py splits labels at
    commas), 'candidate' when that would read 'base'."""
    label = vs_prefix.replace(",", ";")
    return "candidate" if label == "base" else label


def conclude(compared: str, vs_prefix: str, fail_above: str,
             report_file: str, results_dir: str, prog: str,
             ktap: str = "") -> int:
    """How a run ends, on a host or for a guest: the sides in compared
    compared ("" none), the report of results_dir into report_file (""
    none), each said as '# ' lines; 0, or 1 when one of them failed or a
    row is beyond fail_above."""
    status = 0
    if compared:
        if compare([os.path.join(compared, s) for s in plan.SIDES],
                   "base," + candidate_label(vs_prefix), fail_above, prog,
                   ktap):
            status = 1
    if report_file and not report(report_file, results_dir, ktap):
        msg(prog, f"could not write the report {report_file}")
        status = 1
    return status


def finish(a: Args, p: plan.Plan, prog: str, ktap: str) -> int:
    """After the runs: the repetitions merged (cli.Failure when they
    cannot be), then conclude()."""
    for m in p.merges:
        try:
            results.merge_dirs(m.out, m.inputs)
        except (results.ResultError, OSError) as e:
            raise cli.Failure("could not merge the repetitions' results "
                              f"into {m.out}: {e}") from e
    return conclude(p.compared, a.vs_text, a.fail_above,
                    a.report, a.json_dir, prog, ktap)


def run_plan(a: Args, p: plan.Plan, lines: Sequence[str], stream: Stream
             ) -> Dict[str, int]:
    """The KTAP header, every step and its result; the count of each
    kind of result."""
    counts = {"pass": 0, "fail": 0, "skip": 0}
    stream.line("TAP version 13")
    stream.line(f"1..{len(p.steps)}")
    for line in lines:
        stream.line(f"# {line}")
    for step in p.steps:
        stream.line(f"# {step.title}")
        rc = run_step(step, stream, a.nest)
        text, kind = result_line(step, rc)
        stream.line(text)
        counts[kind] += 1
    return counts


def run(a: Args, prog: str) -> int:
    """The run of these options on this host: 0 all passed or skipped,
    1 a program failed (or the comparison, the report), 4 packages
    missing; cli.Error, cli.Failure as orchestrate() ends on them."""
    if a.build:
        rc = packages.set_up("run_all.sh", a.no_install)
        if rc:
            return rc
    if a.report:
        check_report(a.report, a.json_dir)
    tests = a.tests or collection.tests()
    lines = design_lines(a, tests, prog)
    if a.build:
        collection.make_all(tests)
    programs = collection.programs(tests)
    if a.list_only:
        sys.stdout.write("".join(p + "\n" for p in programs))
        return 0
    scratch = tempfile.mkdtemp(prefix="kbench-run.")
    ktap = os.path.join(a.json_dir, "run_all.ktap") if a.json_dir else ""
    stream = Stream(sys.stdout.buffer, ktap)
    try:
        p = plan.make(request(a, programs, scratch))
        counts = run_plan(a, p, lines, stream)
        stream.close()
        status = finish(a, p, prog, ktap) or (1 if counts["fail"] else 0)
        say_lines(f"Totals: pass:{counts['pass']} fail:{counts['fail']} "
                  f"xfail:0 xpass:0 skip:{counts['skip']} error:0", ktap)
        return status
    except proc.Interrupted as e:
        print("Bail out! interrupted", file=sys.stderr)
        e.said = True
        raise
    finally:
        stream.close()
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: Sequence[str], prog: str = "kbench run",
         environ: Optional[Mapping[str, str]] = None) -> int:
    """kbench run on this host (run_all.sh hands over to it); the
    programs' KSELFTEST_<PROG>_ARGS from environ (this process's by
    default)."""
    def body() -> int:
        a = parse(argv, prog)
        if environ is not None:
            a.environ = dict(environ)
        return run(a, prog)
    return cli.orchestrate(prog, body)


def run_logged(argv: Sequence[str], prog: str, log: str,
               err_log: str = "",
               environ: Optional[Mapping[str, str]] = None) -> int:
    """kbench run ARGV in this process for another task (a benchmark, a
    screenshot), its KTAP into log, its messages into err_log (else
    stderr); its exit status. A signal stops the task too
    (proc.Interrupted)."""
    with open(log, "w", encoding="utf-8") as out, \
            open(err_log or os.devnull, "w", encoding="utf-8") as err, \
            contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err if err_log else sys.stderr):
        rc = main(argv, prog, environ)
    if rc == cli.EXIT_INTERRUPTED:
        stop = proc.Interrupted(signal.SIGTERM)
        stop.said = True
        raise stop
    return rc
