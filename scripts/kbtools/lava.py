# SPDX-License-Identifier: GPL-2.0
"""Translate a run_all.sh KTAP stream and its --json results into LAVA
test cases: one test set per kbench program, one case per KTAP check
(pass/fail/skip), the row's median as the case's measurement.

  python3 -m kbtools.lava [--json DIR] [--exec] KTAP_FILE|-

Without --exec it prints the lava-test-set / lava-test-case commands as a
shell script; with --exec (inside a LAVA test shell) it runs them.

Cases of one program's set:
  CHECK                 every KTAP check; a timing row adds
                        --measurement MEDIAN --units UNIT
  CHECK.repK            with --repeat N > 1: repetition K's check and
                        median; CHECK then holds the worst result and the
                        median of the repetitions' medians
  PROGRAM               the runner's verdict on the program
  crashed, timeout,     failed cases for a program killed by a signal,
  truncated             timed out, or whose KTAP ended early
and the set "run_all" holds "ktap" (the stream is well-formed KTAP),
"truncated" when the stream ended before its plan or totals, and
"results" when the JSON is unreadable. Without --json, measurements come
from the programs' figure lines ("# NAME: unit=us ... median=...").
Exit status: 0 when every case passed or skipped, 1 when one failed,
2 on bad usage or unreadable input.

  python3 -m kbtools.lava --check-job TESTS.json LOG.yaml [--job JOB.yaml]

prints a finished job's results (LAVA's /api/v0.2/jobs/ID/tests/) as a
table and checks them, case by case, measurements and units included,
against the cases of the KTAP in the job's log (/api/v0.2/jobs/ID/logs/);
exit 1 on any difference. With the job's definition, a job run under
QEMU's -icount (lava_job.py --icount) is checked in instructions (insn).

  python3 -m kbtools.lava --emit-results DIR

prints each results file of a run's --json DIR into the job's log
between marker lines (lava_run.sh does, before the cases): LAVA's cases
carry one median per row, and the exact rule needs every repetition.
results_of_log() takes them back out of a job's log, byte for byte.
"""

import argparse
import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from typing import (Any, Dict, List, NamedTuple, Optional, Sequence, Set,
                    Tuple)

from kbtools import cli, ktap, output, packages, policy, results, stats


class LavaResult(StrEnum):
    """A lava-test-case result."""
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


# The name of its messages when run as python3 -m kbtools.lava (in a
# LAVA guest, by lava_run.sh).
PROG = "kbtools.lava"
RUNNER_SET = "run_all"
# What an icount run's measurements are, in compare's words.
ICOUNT_WORDS = "icount: figures are guest instructions per operation"
TITLE = re.compile(r"^selftests: kbench/[^:]+: (\S+)"
                   r"(?: \((?:(base|candidate), )?repetition (\d+) of (\d+)\))?$")
TITLE_COMMENT = re.compile(r"^# (selftests: kbench/.*)$")
# The kernel's console messages, interleaved with the stream on a serial
# console: "[   86.693185] netlink: ...".
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\] ")
# A row's figures as a program prints them: "# NAME: unit=us n=... median=..."
FIGURE_LINE = re.compile(r"^# (.+?): (unit=\S+(?: \S+=\S+)*)$")
# What a KTAP result counts as for LAVA: XFAIL is the expected outcome.
LAVA_RESULT = {ktap.Kind.PASS: LavaResult.PASS,
               ktap.Kind.XFAIL: LavaResult.PASS,
               ktap.Kind.SKIP: LavaResult.SKIP,
               ktap.Kind.FAIL: LavaResult.FAIL,
               ktap.Kind.XPASS: LavaResult.FAIL,
               ktap.Kind.ERROR: LavaResult.FAIL}
ROW_RESULT = {results.Status.OK: LavaResult.PASS,
              results.Status.SKIP: LavaResult.SKIP,
              results.Status.FAIL: LavaResult.FAIL}
NAME_OK = re.compile(r"^[-_.a-zA-Z0-9]+$")
# Readable spellings of characters LAVA refuses in names; any other one
# becomes '_'.
NAME_MAP = {"@": "_at_", "%": "pct", "+": "plus", "=": "-", ":": ".",
            "/": "_", " ": "_"}


def case_name(text: str) -> str:
    """TEXT as a LAVA test case or set name ([-_.a-zA-Z0-9]+)."""
    out = "".join(c if NAME_OK.match(c) else NAME_MAP.get(c, "_")
                  for c in text.strip())
    return out or "unnamed"


@dataclass(repr=False)
class Case:
    """One lava-test-case: name, result, optional measurement and units,
    and a note printed before it (a skip reason, a failure's cause)."""
    name: str
    result: LavaResult
    measurement: Optional[float] = None
    units: Optional[str] = None
    note: Optional[str] = None
    # The measurement's units per unit of the figure lines (1000 insn
    # per us under icount): the KTAP's rounding, scaled.
    scale: float = 1.0

    def command(self) -> List[str]:
        cmd = ["lava-test-case", self.name, "--result", self.result.value]
        if self.measurement is not None:
            cmd += ["--measurement", format_measurement(self.measurement),
                    "--units", case_name(self.units or "none")]
        return cmd

    def __repr__(self) -> str:
        return f"Case({self.name!r}, {self.result.value!r}, " \
               f"{self.measurement!r})"


@dataclass
class TestSet:
    """The cases of one test set, names made unique within it."""
    name: str
    cases: List[Case] = field(default_factory=list)
    _names: Set[str] = field(default_factory=set, repr=False)

    def add(self, name: str, result: LavaResult,
            measurement: Optional[float] = None, units: Optional[str] = None,
            scale: float = 1.0, note: Optional[str] = None) -> None:
        base = case_name(name)
        unique, k = base, 1
        while unique in self._names:
            k += 1
            unique = f"{base}.{k}"
        self._names.add(unique)
        self.cases.append(Case(unique, result, measurement, units, note,
                               scale))


def format_measurement(value: float) -> str:
    """A plain decimal LAVA stores (no exponent)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def worst(outcomes: Sequence[LavaResult]) -> LavaResult:
    """fail over pass over skip."""
    if LavaResult.FAIL in outcomes:
        return LavaResult.FAIL
    return LavaResult.PASS if LavaResult.PASS in outcomes else LavaResult.SKIP


@dataclass
class Appearance:
    """One run of one program in the stream: its runner result line (None
    when the stream ended first) and its nested document."""
    program: str
    side: str
    rep: int
    result: Optional[ktap.Result]
    child: Optional[ktap.Document]


def _parse_title(title: str) -> Optional[Tuple[str, str, int]]:
    """(program, side, repetition) of a runner's result line."""
    m = TITLE.match(title.strip())
    if not m:
        return None
    return m.group(1), m.group(2) or "base", int(m.group(3) or 1)


def appearances(doc: ktap.Document) -> List[Appearance]:
    """Every program run of a run_all.sh stream, in order, including one
    whose result line never came."""
    out = []
    for r in doc.results:
        parsed = _parse_title(r.name)
        if parsed:
            out.append(Appearance(*parsed, r, r.child))
    closed = {id(r.child) for r in doc.results if r.child is not None}
    open_children = [c for c in doc.children if id(c) not in closed]
    titles = [m.group(1) for _, text in doc.lines
              for m in [TITLE_COMMENT.match(text)] if m]
    if len(titles) > len(out):
        parsed = _parse_title(titles[len(out)])
        if parsed:
            child = open_children[-1] if open_children else None
            out.append(Appearance(*parsed, None, child))
    return out


def _checks(doc: ktap.Document, prefix: str = ""
            ) -> List[Tuple[str, ktap.Result]]:
    """(name, result) of every check of DOC, nested ones as PARENT.NAME."""
    out = []
    for r in doc.results:
        name = prefix + (r.name or str(r.number))
        if r.child is not None:
            out += _checks(r.child, name + ".")
        out.append((name, r))
    return out


def _complete(doc: Optional[ktap.Document]) -> bool:
    """DOC has its version, plan and as many results as planned, and so
    have its nested documents."""
    if doc is None or not doc.version or doc.plan is None or \
            len(doc.results) != doc.plan:
        return False
    if any(msg.startswith("nested document not closed") or
           msg.startswith("bail out") for _, msg in doc.problems):
        return False
    return all(_complete(c) for c in doc.children)


def _ending(app: Appearance) -> Optional[Tuple[str, str]]:
    """(case name, note) for a program that did not end normally."""
    if app.result is None:
        return "truncated", "the stream ended while the program ran"
    comment = app.result.comment
    if comment.upper().startswith("TIMEOUT"):
        return "timeout", comment
    m = re.match(r"exit=(\d+)$", comment)
    if m and int(m.group(1)) > 128:
        return "crashed", f"{comment} (signal {int(m.group(1)) - 128})"
    if app.result.directive != ktap.Directive.SKIP and \
            not _complete(app.child):
        return "truncated", "the program's KTAP ended before its plan"
    return None


def _verdict(app: Appearance) -> Tuple[LavaResult, Optional[str]]:
    if app.result is None:
        return LavaResult.FAIL, "no result line"
    return LAVA_RESULT[app.result.kind], app.result.comment or None


def _rep_median(row: Optional[results.Row], rep: int, nreps: int
                ) -> Optional[float]:
    """Repetition REP's median of ROW, when its repetitions are aligned."""
    if row is None or len(row.reps) != nreps:
        return None
    fig = row.reps[rep - 1]
    if fig.status != results.Status.OK:
        return None
    return fig.figures.get("median")


def _summary_median(row: Optional[results.Row]) -> Optional[float]:
    vals = row.values("median") if row is not None else []
    return stats.median(vals) if vals else None


class Measured(NamedTuple):
    """A case's measurement, its units (None, None: none) and how many of
    them a unit of the row's figures is."""
    measurement: Optional[float]
    units: Optional[str]
    scale: float = 1.0


def _measured(row: Optional[results.Row], value: Optional[float],
              test: Optional[results.Test] = None) -> Measured:
    """The row's measurement VALUE: in instructions (units insn) for a
    run under QEMU's instruction counter, else in the row's unit."""
    if value is None or row is None:
        return Measured(None, None)
    scale = test.insn_per_unit(row.unit) if test is not None else None
    if scale is not None:
        return Measured(value * scale, results.INSN, scale)
    return Measured(value, row.unit)


# A row's figures on its figure line: {"unit": "us", "median": "0.2", ...}.
FigureLine = Dict[str, str]


def ktap_figures(doc: Optional[ktap.Document]) -> Dict[str, FigureLine]:
    """{row name: {key: value}} of the figure lines of one program's KTAP
    (the rows that carry a unit)."""
    out = {}
    for _, text in doc.lines if doc is not None else []:
        m = FIGURE_LINE.match(text)
        if m:
            out[m.group(1)] = dict(w.split("=", 1) for w in m.group(2).split())
    return out


def _ktap_rows(apps: Sequence[Appearance]) -> Dict[str, results.Row]:
    """Rows of the program's figure lines, one repetition per run: the
    measurements when there is no JSON (a LAVA log, a stream alone)."""
    rows: Dict[str, results.Row] = {}
    for app in apps:
        for name, fig in ktap_figures(app.child).items():
            row = rows.setdefault(name, results.Row(name, fig.get("unit")))
            try:
                row.add_rep(results.Repetition.of(median=float(fig["median"])))
            except (KeyError, ValueError):
                row.add_rep(results.Repetition.of(results.Status.FAIL,
                                                  "no median"))
    return rows


def _program_set(name: str, apps: Sequence[Appearance],
                 test: Optional[results.Test]) -> TestSet:
    """The test set of one program from its runs and its results (or,
    without them, its figure lines)."""
    tset = TestSet(case_name(name))
    nreps = len(apps)
    rows = test.rows if test is not None else _ktap_rows(apps)
    per_check: Dict[str, List[Tuple[LavaResult, str]]] = {}
    for app in apps:
        checks = _checks(app.child) if app.child is not None else []
        for check, r in checks:
            res = LAVA_RESULT[r.kind]
            per_check.setdefault(check, []).append((res, r.reason))
            if nreps > 1:
                row = rows.get(check)
                m = _measured(row, _rep_median(row, app.rep, nreps), test)
                tset.add(f"{check}.rep{app.rep}", res, *m,
                         note=r.reason or None)
    for check, seen in per_check.items():
        row = rows.get(check)
        reasons = sorted({why for _, why in seen if why})
        tset.add(check, worst([res for res, _ in seen]),
                 *_measured(row, _summary_median(row), test),
                 note="; ".join(reasons) or None)
    for rname, row in rows.items():
        if rname not in per_check:
            tset.add(rname, ROW_RESULT[row.status],
                     *_measured(row, _summary_median(row), test),
                     note=row.reason)
    verdicts = [_verdict(a) for a in apps]
    tset.add(name, worst([v for v, _ in verdicts]),
             note="; ".join(n for _, n in verdicts if n) or None)
    for app in apps:
        end = _ending(app)
        if end:
            where = f" (repetition {app.rep})" if nreps > 1 else ""
            tset.add(end[0], LavaResult.FAIL, note=end[1] + where)
    return tset


def _stream_test(name: str, apps: Sequence[Appearance],
                 icount_shift: int) -> results.Test:
    """A program's results from its figure lines alone, of a run whose
    clocks QEMU's instruction counter drove (the JSON says so; a LAVA
    log does not)."""
    machine = results.Machine(clock_mode=results.ClockMode.ICOUNT,
                              icount_shift=icount_shift)
    return results.Test(name, results.Header(machine=machine),
                        rows=_ktap_rows(apps))


def translate(doc: ktap.Document, run: Optional[results.Run] = None,
              icount_shift: Optional[int] = None) -> List[TestSet]:
    """The test sets of a parsed run_all.sh stream DOC, with the
    measurements of RUN (a kbtools.results.Run, or None: then the
    figure lines', in instructions when ICOUNT_SHIFT is QEMU's -icount
    shift of the run)."""
    by_program: Dict[str, List[Appearance]] = {}
    for app in appearances(doc):
        key = app.program if app.side == "base" else \
            f"{app.program}.{app.side}"
        by_program.setdefault(key, []).append(app)
    sets = []
    for key, apps in by_program.items():
        test = run.tests.get(apps[0].program) if run is not None else None
        if run is None and icount_shift is not None:
            test = _stream_test(apps[0].program, apps, icount_shift)
        if apps[0].side != "base":
            test = None
        sets.append(_program_set(key, apps, test))
    runner = TestSet(RUNNER_SET)
    problems = ktap.check(doc)
    runner.add("ktap", LavaResult.FAIL if problems else LavaResult.PASS,
               note="; ".join(problems[:5]) or None)
    if doc.version is None or doc.plan is None or \
            len(doc.results) != doc.plan or doc.totals is None:
        runner.add("truncated", LavaResult.FAIL,
                   note=f"{len(doc.results)} of "
                        f"{doc.plan if doc.plan is not None else '?'} "
                        f"program results, totals line "
                        f"{'present' if doc.totals else 'missing'}")
    sets.append(runner)
    return sets


def commands(sets: Sequence[TestSet]
             ) -> List[Tuple[Optional[str], List[str]]]:
    """(note or None, argv) of every command reporting SETS."""
    out: List[Tuple[Optional[str], List[str]]] = []
    for tset in sets:
        out.append((None, ["lava-test-set", "start", tset.name]))
        for case in tset.cases:
            note = f"{tset.name}/{case.name}: {case.result}: {case.note}" \
                if case.note else None
            out.append((note, case.command()))
        out.append((None, ["lava-test-set", "stop"]))
    return out


def shell_script(sets: Sequence[TestSet]) -> str:
    """The commands as a shell script, notes as comments."""
    lines = []
    for note, argv in commands(sets):
        if note:
            lines.append("# " + note.replace("\n", " "))
        lines.append(" ".join(shlex.quote(a) for a in argv))
    return "\n".join(lines) + "\n"


def run_commands(sets: Sequence[TestSet], prog: str = PROG) -> int:
    """Run the commands, the notes on stdout (the LAVA log) first; the
    number of commands that failed (said on stderr under prog)."""
    failed = 0
    for note, argv in commands(sets):
        if note:
            print(f"kbench: {note}", flush=True)
        try:
            rc = subprocess.run(argv, check=False).returncode
        except OSError as e:
            print(f"{prog}: {argv[0]}: {e.strerror}", file=sys.stderr)
            rc = 1
        if rc:
            print(f"{prog}: '{shlex.join(argv)}' exited {rc}",
                  file=sys.stderr)
            failed += 1
    return failed


def any_failed(sets: Sequence[TestSet]) -> bool:
    return any(c.result == LavaResult.FAIL for s in sets for c in s.cases)


def target_lines(entries: object) -> List[str]:
    """The guest's lines of a LAVA job log (its 'target' entries), less
    their line ends and the kernel's console messages."""
    if not isinstance(entries, list):
        raise ValueError("not a LAVA job log (a list of entries)")
    out = []
    for e in entries:
        if not isinstance(e, dict) or e.get("lvl") != "target":
            continue
        msg = e.get("msg")
        if not isinstance(msg, str):
            continue
        line = msg.rstrip("\r\n")
        if not KERNEL_LINE.match(line):
            out.append(line)
    return out


def stream_of_log(entries: object) -> str:
    """The run_all.sh stream in a LAVA job log (its 'target' lines, less
    the kernel's console messages), from its first top-level version line
    to its top-level totals line."""
    out: List[str] = []
    inside = False
    for line in target_lines(entries):
        if not inside and ktap.VERSION.match(line):
            inside = True
        if inside:
            out.append(line)
            if line.startswith("# Totals:"):
                break
    return "\n".join(out) + "\n" if out else ""


# ---- a run's results files through the job's log ------------------------------
#
# The console carries lines of text, and the kernel's messages may come
# between any two of them: each file goes as base64 lines (no '[', so
# never taken for a kernel message, nor one for them) between a line
# with its name, size and SHA-256 and a line that closes it, so that the
# host gets it back byte for byte or says which file did not come whole.
RESULTS_BEGIN = "kbench-results-begin"
RESULTS_END = "kbench-results-end"
B64_WIDTH = 76
B64_LINE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
RESULTS_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.json$")


def results_block(name: str, data: bytes) -> List[str]:
    """The lines that carry the file NAME holding DATA."""
    text = base64.b64encode(data).decode("ascii")
    return [f"{RESULTS_BEGIN} {name} {len(data)} "
            f"sha256={hashlib.sha256(data).hexdigest()}",
            *[text[i:i + B64_WIDTH] for i in range(0, len(text), B64_WIDTH)],
            f"{RESULTS_END} {name}"]


def results_text(json_dir: str) -> str:
    """The blocks of every results file (*.json) of a run's --json DIR,
    by name."""
    lines = []
    for name in sorted(os.listdir(json_dir)):
        path = os.path.join(json_dir, name)
        if RESULTS_NAME.match(name) and os.path.isfile(path):
            with open(path, "rb") as f:
                lines += results_block(name, f.read())
    return "\n".join(lines) + "\n" if lines else ""


def _block_file(begin: str, body: Sequence[str]) -> Tuple[str, bytes]:
    """(name, bytes) of one block, checked against its begin line."""
    words = begin.split()
    if len(words) != 4 or not RESULTS_NAME.match(words[1]) or \
            not words[2].isdigit() or not words[3].startswith("sha256="):
        raise ValueError(f"not a results block's first line: {begin!r}")
    name, size, digest = words[1], int(words[2]), words[3][7:]
    try:
        data = base64.b64decode("".join(body), validate=True)
    except ValueError:
        raise ValueError(f"{name}: its base64 lines do not decode") from None
    if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"{name}: {len(data)} bytes came through the log, "
                         f"not the {size} the guest sent (or other bytes)")
    return name, data


def results_of_log(entries: object) -> Dict[str, bytes]:
    """{file name: its bytes} of the results blocks in a LAVA job log;
    ValueError for a block that did not come whole (cut short, a line
    lost or changed), or a file sent twice. Lines that are not base64
    inside a block (LAVA's own) are passed over: the size and SHA-256
    tell whether anything of the file was lost."""
    out: Dict[str, bytes] = {}
    begin: Optional[str] = None
    body: List[str] = []
    for line in target_lines(entries):
        line = line.strip()
        if line.startswith(RESULTS_BEGIN + " "):
            if begin is not None:
                raise ValueError(f"{begin.split()[1]}: its block is not "
                                 f"closed before the next one")
            begin, body = line, []
        elif begin is not None and line.startswith(RESULTS_END):
            name, data = _block_file(begin, body)
            if line.split()[1:] != [name]:
                raise ValueError(f"{name}: its block is closed as "
                                 f"{line!r}")
            if name in out:
                raise ValueError(f"{name}: sent twice")
            out[name] = data
            begin = None
        elif begin is not None and B64_LINE.match(line):
            body.append(line)
    if begin is not None:
        raise ValueError(f"{begin.split()[1]}: the log ends inside its "
                         f"block")
    return out


def write_results(files: Dict[str, bytes], json_dir: str) -> None:
    """The files of results_of_log() written into JSON_DIR, as the run's
    --json DIR held them."""
    os.makedirs(json_dir, exist_ok=True)
    for name, data in files.items():
        if not RESULTS_NAME.match(name):
            raise ValueError(f"not a results file name: {name!r}")
        with open(os.path.join(json_dir, name), "wb") as f:
            f.write(data)


def keep_boot(entries: object, json_dir: str, ktap_path: str) -> None:
    """A boot's results from its LAVA job's log, laid out as a local
    boot leaves them (kbtools.series' boot directories): the results
    files in JSON_DIR, the run_all.sh stream at KTAP_PATH. ValueError
    when the log holds no stream or no results file, or one did not
    come whole."""
    files = results_of_log(entries)
    stream = stream_of_log(entries)
    if not stream:
        raise ValueError("no KTAP stream in the job's log")
    if not files:
        raise ValueError("no results files in the job's log (a guest "
                         "older than --emit-results, or run_all.sh wrote "
                         "none)")
    write_results(files, json_dir)
    results.write_text(ktap_path, stream)


def on_this_machine(url: str) -> bool:
    """URL's host is this machine (localhost, 127.0.0.0/8, ::1): a lab
    that no proxy can reach."""
    import ipaddress
    import urllib.parse
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def direct_opener(jar: Optional[Any] = None) -> Any:
    """A urllib opener past the environment's proxy (http_proxy and the
    like: a proxy cannot reach this machine's 127.0.0.1), cookies kept
    in JAR (an http.cookiejar.CookieJar) when given."""
    import urllib.request
    handlers: List[urllib.request.BaseHandler] = [
        urllib.request.ProxyHandler({})]
    if jar is not None:
        handlers.append(urllib.request.HTTPCookieProcessor(jar))
    return urllib.request.build_opener(*handlers)


class Api:
    """A LAVA server's REST API (v0.2), called with an API token (never
    a password). Its errors are ValueError, naming the call."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.token = token
        # A lab on this machine directly; else as urlopen goes (through
        # the environment's proxy, if any).
        self.opener = direct_opener() if on_this_machine(url) else None

    def call(self, path: str, data: Optional[bytes] = None) -> bytes:
        import urllib.error
        import urllib.request
        req = urllib.request.Request(
            f"{self.url}/api/v0.2/{path}", data=data, headers={
                "Authorization": f"Token {self.token}",
                "Content-Type": "application/json"})
        open_url = self.opener.open if self.opener is not None else \
            urllib.request.urlopen
        try:
            with open_url(req, timeout=60) as r:
                return bytes(r.read())
        except (OSError, urllib.error.URLError) as e:
            raise ValueError(f"LAVA API {path}: {e}") from e

    def submit(self, definition: str) -> str:
        """The id of the job DEFINITION (YAML) made."""
        import json
        reply = json.loads(self.call("jobs/", json.dumps(
            {"definition": definition}).encode()))
        ids = reply.get("job_ids") if isinstance(reply, dict) else None
        if not ids or not str(ids[0]).isdigit():
            raise ValueError(f"LAVA did not take the job: {reply!r}")
        return str(ids[0])

    def job(self, jid: str) -> Dict[str, object]:
        """The job's record (state, health, ...)."""
        import json
        info = json.loads(self.call(f"jobs/{jid}/"))
        if not isinstance(info, dict):
            raise ValueError(f"LAVA API jobs/{jid}/: not a job: {info!r}")
        return info

    def log(self, jid: str) -> str:
        """The job's log as LAVA gives it (YAML, a list of entries)."""
        return self.call(f"jobs/{jid}/logs/").decode("utf-8", "replace")

    def cancel(self, jid: str) -> None:
        self.call(f"jobs/{jid}/cancel/")


class ApiCase(NamedTuple):
    """A case as LAVA's API holds it."""
    result: str
    measurement: Optional[float]
    unit: Optional[str]


# A case's place: (test set, case name).
CaseKey = Tuple[str, str]


def _api_case(t: object) -> Optional[Tuple[CaseKey, ApiCase]]:
    """((set, case), (result, measurement, unit)) of one LAVA test
    result, None for LAVA's own cases; ValueError when it is not one."""
    if not isinstance(t, dict):
        raise ValueError("not an object")
    meta = t.get("metadata") or {}
    if isinstance(meta, str):
        meta = {k.strip(): v.strip() for k, _, v in
                (line.partition(":") for line in meta.splitlines())}
    if not isinstance(meta, dict):
        raise ValueError("metadata is neither text nor an object")
    if str(meta.get("definition", "")).endswith("lava"):
        return None
    tset, name = meta.get("set") or "", t.get("name")
    result, m, unit = t.get("result"), t.get("measurement"), t.get("unit")
    if not isinstance(tset, str) or not isinstance(name, str) or \
            not isinstance(result, str) or \
            not isinstance(unit, (str, type(None))):
        raise ValueError("set, name, result or unit is not text")
    try:
        measurement = None if m is None or m == "" else float(m)
    except (TypeError, ValueError):
        raise ValueError(f"measurement {m!r} is not a number") from None
    return (tset, name), ApiCase(result, measurement, unit or None)


def api_cases(tests: object) -> Dict[CaseKey, ApiCase]:
    """{(set, case): (result, measurement, unit)} of the objects of LAVA's
    /api/v0.2/jobs/ID/tests/ ('results' of its pages, or a list).
    ValueError names the first result that is not one."""
    if isinstance(tests, dict):
        tests = tests.get("results", [])
    if not isinstance(tests, list):
        raise ValueError("not LAVA test results (a list, or an object "
                         "with 'results')")
    out = {}
    for i, t in enumerate(tests):
        try:
            case = _api_case(t)
        except ValueError as e:
            raise ValueError(f"result {i + 1}: {e}") from None
        if case:
            out[case[0]] = case[1]
    return out


def compare_api(sets: Sequence[TestSet], got: Dict[CaseKey, ApiCase]
                ) -> List[str]:
    """Messages for every case of SETS that LAVA's GOT lacks or holds
    with another result or measurement, and for every case LAVA holds
    that SETS lacks."""
    problems = []
    want = {}
    for tset in sets:
        for c in tset.cases:
            want[(tset.name, c.name)] = c
    for key, c in want.items():
        if key not in got:
            problems.append(f"{key[0]}/{key[1]}: not in LAVA's results")
            continue
        result, measurement, _ = got[key]
        if result != c.result:
            problems.append(f"{key[0]}/{key[1]}: LAVA says {result}, the "
                            f"KTAP {c.result}")
        # The KTAP prints 4 decimals, LAVA keeps the JSON's figure.
        if c.measurement is not None and (measurement is None or abs(
                measurement - c.measurement) >
                1e-4 * c.scale + 1e-6 * c.measurement):
            problems.append(f"{key[0]}/{key[1]}: LAVA's measurement "
                            f"{measurement}, the KTAP's "
                            f"{format_measurement(c.measurement)}")
        unit = got[key].unit
        if c.measurement is not None and unit != case_name(c.units or
                                                           "none"):
            problems.append(f"{key[0]}/{key[1]}: LAVA's unit {unit}, the "
                            f"KTAP's {c.units}")
    for key in got:
        if key not in want:
            problems.append(f"{key[0]}/{key[1]}: in LAVA's results only")
    return problems


def table(got: Dict[CaseKey, ApiCase]) -> str:
    """LAVA's results as a table: set, case, result, median, unit."""
    rows = [("set", "case", "result", "median", "unit")]
    for (tset, name), (result, m, unit) in got.items():
        rows.append((tset, name, result,
                     format_measurement(m) if m is not None else "",
                     unit or ""))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  "
                   f"{r[2]:<{widths[2]}}  {r[3]:>{widths[3]}}  {r[4]}"
                   .rstrip() + "\n" for r in rows)


def _text(doc: object) -> object:
    """DOC, when results.text_problem() finds nothing in it (a lone
    surrogate could not be printed); ValueError otherwise."""
    problem = results.text_problem(doc)
    if problem:
        raise ValueError(problem)
    return doc


def job_icount_shift(job: object) -> Optional[int]:
    """The -icount shift of a qemu job definition (its context's
    extra_options, as lava_job.py --icount writes them); None when QEMU's
    instruction counter does not drive the guest."""
    context = job.get("context") if isinstance(job, dict) else None
    options = context.get("extra_options") if isinstance(context, dict) \
        else None
    for opt in options if isinstance(options, list) else []:
        m = re.match(r"^-icount\s+(\S+)$", str(opt).strip())
        if m:
            try:
                return policy.icount(m.group(1)).shift
            except ValueError as e:
                raise ValueError(f"the job's {opt!r}: {e}") from None
    return None


def measured_summary(got: Dict[CaseKey, ApiCase]) -> str:
    """How many cases carry a measurement, in which units; what a count
    of instructions is."""
    units: Dict[str, int] = {}
    for case in got.values():
        if case.measurement is not None:
            units[case.unit or "none"] = units.get(case.unit or "none", 0) + 1
    text = ", ".join(f"{n} in {u}" for u, n in sorted(units.items())) \
        or "none"
    if results.INSN in units:
        text += f" ({ICOUNT_WORDS})"
    return f"measurements: {text}"


def check_job(tests_path: str, log_path: str,
              job_path: Optional[str] = None, prog: str = PROG) -> int:
    """Print LAVA's results of a kbench job as a table and compare them
    with the cases of the KTAP the job printed (in instructions when the
    job definition at JOB_PATH ran QEMU with -icount); 0 when they
    match, 1 when not (each mismatch said on stderr under prog);
    ValueError or OSError on a file it cannot read."""
    import json
    try:
        import yaml  # only the host side needs it
    except ImportError:
        raise ValueError("--check-job needs PyYAML: "
                         + packages.module_missing("yaml", "python3-yaml")
                         ) from None
    try:
        with open(tests_path, encoding="utf-8") as f:
            got = api_cases(_text(json.load(f)))
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{tests_path}: {e}") from None
    try:
        with open(log_path, encoding="utf-8") as f:
            text = stream_of_log(_text(yaml.safe_load(f) or []))
    except (ValueError, RecursionError, yaml.YAMLError) as e:
        raise ValueError(f"{log_path}: {e}") from None
    shift = None
    if job_path is not None:
        try:
            with open(job_path, encoding="utf-8") as f:
                shift = job_icount_shift(_text(yaml.safe_load(f)))
        except (ValueError, RecursionError, yaml.YAMLError) as e:
            raise ValueError(f"{job_path}: {e}") from None
    results.write_text("-", table(got))
    if not text:
        print(f"{prog}: no KTAP stream in the job's log {log_path}",
              file=sys.stderr)
        return 1
    problems = compare_api(translate(ktap.parse(text), icount_shift=shift),
                           got)
    for p in problems:
        # A name from the lab may hold a newline: one line per mismatch.
        p = p.replace("\n", "\\n").replace("\r", "\\r")
        print(f"{prog}: mismatch: {p}", file=sys.stderr)
    print(measured_summary(got))
    print(f"{len(got)} LAVA test cases, "
          f"{'all' if not problems else len(got) - len(problems)} "
          f"matching the job's KTAP")
    return 1 if problems else 0


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    """kbench lava cases, python3 -m kbtools.lava (lava_run.sh in a
    guest): 0 every case passed (or the job matched); 1 one failed (or a
    mismatch); 2 bad usage or input."""
    p = argparse.ArgumentParser(
        prog="python3 -m kbtools.lava" if prog == PROG else prog,
        description="Report a run_all.sh KTAP stream (and its --json "
                    "results) as LAVA test sets and cases.")
    p.add_argument("ktap", nargs="?",
                   help="the run_all.sh output, or - for stdin")
    p.add_argument("--json", metavar="DIR",
                   help="the run's --json directory (measurements)")
    p.add_argument("--exec", action="store_true", dest="execute",
                   help="run lava-test-set/lava-test-case (in a LAVA test "
                        "shell) instead of printing them")
    p.add_argument("--check-job", nargs=2, metavar=("TESTS.json", "LOG.yaml"),
                   help="compare a job's results (LAVA's /api/v0.2/jobs/ID/"
                        "tests/) with the KTAP in its log (.../logs/)")
    p.add_argument("--emit-results", metavar="DIR",
                   help="print each results file of a run's --json DIR "
                        "between marker lines (into the job's log)")
    p.add_argument("--job", metavar="JOB.yaml",
                   help="with --check-job: the job's definition (under "
                        "QEMU's -icount the figures are instructions)")
    args = p.parse_args(list(argv))
    if args.emit_results is not None:
        with cli.reading(args.emit_results):
            output.write_stdout(results_text(args.emit_results))
        return 0
    if args.check_job:
        try:
            tests, log = args.check_job
            return check_job(tests, log, args.job, prog)
        except (OSError, ValueError) as e:
            # One line: YAML's and JSON's messages may span several.
            print(f"{prog}: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
    if args.ktap is None:
        p.error("no KTAP stream given")
    if args.execute and not shutil.which("lava-test-case"):
        print(f"{prog}: lava-test-case not found: --exec runs inside "
              "a LAVA test shell (without it, the commands are printed)",
              file=sys.stderr)
        return 2
    with cli.reading(args.ktap):
        # A file's problems in the 'ktap' case name it and the line.
        doc = ktap.parse(sys.stdin.read()) if args.ktap == "-" else \
            ktap.read(args.ktap)
    run, bad_json = None, None
    if args.json and (os.path.isfile(args.json) or (
            os.path.isdir(args.json) and any(
                f.endswith(".json") for f in os.listdir(args.json)))):
        try:
            run = results.load(args.json)
        except results.ResultError as e:
            bad_json = str(e)
    sets = translate(doc, run)
    if bad_json:
        # The checks still count; unreadable figures are a failure.
        sets[-1].add("results", LavaResult.FAIL, note=bad_json)
    if args.execute:
        if run_commands(sets, prog):
            return 1
    else:
        output.write_stdout(shell_script(sets))
    return 1 if any_failed(sets) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], PROG))
