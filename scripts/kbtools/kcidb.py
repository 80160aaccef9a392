# SPDX-License-Identifier: GPL-2.0
"""kbench results as a KCIDB I/O document (schema v5).

Mapping, per result directory (one booted kernel, one or more repetitions):
- one ``checkout``: the kernel's source (git hash and tree when the run
  recorded them, e.g. from the test kernel's build; otherwise the running
  kernel's release), one ``build``: the image the tests ran on;
- every check (a row without a unit: ok / fail / skip, or a program that
  crashed: error) becomes a test with status PASS / FAIL / SKIP / ERROR,
  a skip keeping its reason in ``comment``;
- every timing row becomes a test with status DONE and ``number`` = the
  median over repetitions (the row's median when there is one), with its
  unit; spread and repetitions go in ``misc``.

Test paths are ``kbench.PROGRAM.ROW``. KCIDB allows only [a-zA-Z0-9_-]
in a path component, so a component is encoded reversibly: ``-`` becomes
``--`` and any other byte outside [a-zA-Z0-9_] becomes ``-HH`` (two
upper-case hex digits of its UTF-8 byte): ``fork@1.70MB`` is
``fork-401-2E70MB``.

Ids are ``ORIGIN:`` followed by a digest of what identifies the object
(the kernel, the run's start date and host, the test path), so exporting
the same results twice gives the same ids and two runs different ones.
"""

import argparse
import hashlib
import os
import re
import statistics
from dataclasses import dataclass
from enum import StrEnum
from typing import Dict, List, Optional, Sequence, Tuple, TypeVar

from kbtools import cli, ktap, results
from kbtools.results import (INSN, Header, Json, Row, Run, Status, Test,
                             members)

PATH_SAFE = re.compile(r"[A-Za-z0-9_]")
ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")
COMPONENT_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
SCHEMA_MAJOR, SCHEMA_MINOR = 5, 3


class ExportError(Exception):
    """Results that cannot become a valid KCIDB document."""


class KStatus(StrEnum):
    """A KCIDB test's status (DONE: a measurement, no verdict)."""
    PASS = "PASS"
    DONE = "DONE"
    SKIP = "SKIP"
    FAIL = "FAIL"
    ERROR = "ERROR"


def encode_component(name: object) -> str:
    """A kbench name as one KCIDB path component (reversible)."""
    if not isinstance(name, str) or not name:
        raise ExportError(f"empty or non-string name {name!r}")
    out = []
    for ch in name:
        if PATH_SAFE.match(ch):
            out.append(ch)
        elif ch == "-":
            out.append("--")
        else:
            out.extend(f"-{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def decode_component(comp: str) -> str:
    """Inverse of encode_component()."""
    if not COMPONENT_RE.match(comp):
        raise ExportError(f"'{comp}' is not a KCIDB path component")
    raw, i = bytearray(), 0
    while i < len(comp):
        ch = comp[i]
        if ch != "-":
            raw += ch.encode()
            i += 1
        elif comp[i + 1:i + 2] == "-":
            raw += b"-"
            i += 2
        else:
            hexpair = comp[i + 1:i + 3]
            if not re.fullmatch(r"[0-9A-F]{2}", hexpair):
                raise ExportError(f"bad escape in path component '{comp}'")
            raw.append(int(hexpair, 16))
            i += 3
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExportError(f"path component '{comp}' is not UTF-8") from e


def test_path(program: str, row: Optional[str] = None) -> str:
    parts = ["kbench", encode_component(program)]
    if row is not None:
        parts.append(encode_component(row))
    return ".".join(parts)


def parse_path(path: str) -> Tuple[str, Optional[str]]:
    """(program, row or None) of a path made by test_path()."""
    parts = path.split(".")
    if len(parts) not in (2, 3) or parts[0] != "kbench":
        raise ExportError(f"'{path}' is not a kbench test path")
    names = [decode_component(p) for p in parts[1:]]
    return names[0], (names[1] if len(names) == 2 else None)


def make_id(origin: str, *parts: object) -> str:
    """ORIGIN:digest, stable for the same parts."""
    h = hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()
    return f"{origin}:{h[:24]}"


def check_origin(origin: Optional[str]) -> str:
    if origin is None or not ORIGIN_RE.match(origin):
        raise ExportError(f"origin '{origin}' must match [a-z0-9_]+")
    return origin


ROW_STATUS = {Status.OK: KStatus.PASS, Status.FAIL: KStatus.FAIL,
              Status.SKIP: KStatus.SKIP}


def _rfc3339(date: Optional[str]) -> Optional[str]:
    """The run's date as KCIDB wants it, or None when it has none."""
    if date is None or not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d",
                                    date):
        return None
    return date if re.search(r"(Z|[+-]\d\d:\d\d)$", date) else date + "Z"


@dataclass
class Record:
    """An object of a KCIDB document: its fields in the order KCIDB's
    documents list them, of which to_json() writes those that are set
    (not None)."""
    id: str
    origin: str

    def to_json(self) -> Json:
        return members(self, drop_none=True)


@dataclass
class Checkout(Record):
    comment: str
    git_commit_hash: Optional[str] = None
    tree_name: Optional[str] = None
    git_repository_url: Optional[str] = None


@dataclass
class Build(Record):
    checkout_id: str
    comment: str
    status: KStatus = KStatus.PASS
    architecture: Optional[str] = None


@dataclass
class Number:
    """A test's measurement (of a row with a unit)."""
    value: float
    unit: str


@dataclass
class Environment:
    """Where a test ran: the machine's name, and its figures in misc."""
    comment: str
    misc: Optional[Json] = None


@dataclass
class KTest(Record):
    """A KCIDB test: a program or one of its rows."""
    build_id: str
    path: str
    status: KStatus
    comment: Optional[str] = None
    number: Optional[Number] = None
    misc: Optional[Json] = None
    start_time: Optional[str] = None
    environment: Optional[Environment] = None


Shared = TypeVar("Shared", Checkout, Build)


class Exporter:
    """Builds one KCIDB document from any number of kbench runs."""

    def __init__(self, origin: str = "kbench",
                 checkout_info: Optional[Dict[str, str]] = None) -> None:
        self.origin = check_origin(origin)
        self.checkout_info = checkout_info or {}
        self.checkouts: Dict[str, Checkout] = {}
        self.builds: Dict[str, Build] = {}
        self.tests: Dict[str, KTest] = {}

    def _add(self, table: Dict[str, Shared], obj: Shared, what: str) -> None:
        old = table.get(obj.id)
        if old is not None and old != obj:
            raise ExportError(f"duplicate {what} id {obj.id}")
        table[obj.id] = obj

    def checkout_of(self, header: Header) -> Checkout:
        kernel = header.kernel
        info = dict(self.checkout_info)
        for key, value in (("git_commit_hash", kernel.git_commit_hash),
                           ("tree_name", kernel.tree_name),
                           ("git_repository_url",
                            kernel.git_repository_url)):
            if value is not None and key not in info:
                info[key] = value
        release = kernel.release or "unknown"
        commit = info.get("git_commit_hash")
        co = Checkout(make_id(self.origin, "checkout", release,
                              kernel.version, commit), self.origin,
                      f"Linux {release} {kernel.version or ''}".strip())
        if commit:
            if not re.fullmatch(r"[0-9a-f]{40}", commit):
                raise ExportError(f"git commit hash '{commit}' is not 40 "
                                  "hex digits")
            co.git_commit_hash = commit
        co.tree_name = info.get("tree_name") or None
        co.git_repository_url = info.get("git_repository_url") or None
        self._add(self.checkouts, co, "checkout")
        return co

    def build_of(self, header: Header, checkout: Checkout) -> Build:
        arch = (header.machine.arch or "").lower().replace("-", "_")
        build = Build(make_id(self.origin, "build", checkout.id, arch),
                      self.origin, checkout.id,
                      f"the kernel image of Linux "
                      f"{header.kernel.release or 'unknown'}")
        if re.fullmatch(r"[a-z0-9_]*", arch):
            build.architecture = arch
        self._add(self.builds, build, "build")
        return build

    def add_test(self, build: Build, run_key: str, path: str,
                 status: KStatus, *, comment: Optional[str] = None,
                 number: Optional[Number] = None,
                 misc: Optional[Json] = None, start: Optional[str] = None,
                 env: Optional[Environment] = None) -> KTest:
        if not re.fullmatch(r"[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*", path):
            raise ExportError(f"illegal test path '{path}'")
        test = KTest(make_id(self.origin, "test", build.id, run_key, path),
                     self.origin, build.id, path, status, comment or None,
                     number, misc or None, start or None, env)
        if test.id in self.tests:
            raise ExportError(f"duplicate test {path} in one run "
                              f"(id {test.id})")
        self.tests[test.id] = test
        return test

    def add_run(self, run: Run, ktap_doc: Optional[ktap.Document] = None,
                side: Optional[str] = None, key: str = "") -> None:
        """Add every test of one kbench Run (kbtools.results) and, when
        given, the checks of its KTAP stream (kbtools.ktap Document); of an
        A/B stream, only the results of SIDE (base or candidate). Runs are
        told apart by their dates, and by key too when given (boots of a
        deterministic guest, whose clock starts at one date in each)."""
        checks = program_checks(ktap_doc, side) if ktap_doc is not None \
            else {}
        programs = set(run.tests) | set(checks)
        for name in sorted(programs):
            test = run.tests.get(name)
            prog_checks, prog_status = checks.get(name) or ({}, None)
            header = test.header if test is not None else _any_header(run)
            if header is None:
                raise ExportError(f"{run.path}: no results file tells the "
                                  f"kernel {name} ran on")
            checkout = self.checkout_of(header)
            build = self.build_of(header, checkout)
            headers = test.headers if test is not None else []
            run_key = "|".join(str(h.date) for h in headers) or \
                str(run.path)
            run_key = f"{run_key}|{key}" if key else run_key
            start = _rfc3339(headers[0].date) if headers else None
            env = _environment(header)
            rows = test.rows if test is not None else {}
            status = prog_status or _program_status(rows, prog_checks)
            if side:
                # Both sides of an A/B run ran on one kernel: say which.
                env = Environment(f"{env.comment}, A/B {side}", env.misc)
            self.add_test(build, run_key, test_path(name), status,
                          start=start, env=env,
                          misc={"repetitions": len(headers)})
            for row in rows.values():
                try:
                    self._add_row(build, run_key, name, row, start, env,
                                  test)
                except ExportError as e:
                    raise ExportError(f"{run.path}: {e}") from e
            for check, (cstatus, reason) in prog_checks.items():
                if check in rows:
                    continue
                self.add_test(build, run_key, test_path(name, check),
                              cstatus, comment=reason, start=start, env=env)

    def _add_row(self, build: Build, run_key: str, program: str, row: Row,
                 start: Optional[str], env: Environment,
                 test: Optional[Test] = None) -> None:
        path = test_path(program, row.name)
        if row.status == Status.OK and row.unit is None and \
                row.values("median"):
            raise ExportError(f"{program}: row '{row.name}' has figures "
                              "but no unit")
        values = row.values("median")
        if row.status != Status.OK or row.unit is None or not values:
            self.add_test(build, run_key, path, ROW_STATUS[row.status],
                          comment=row.reason, start=start, env=env)
            return
        misc: Json = {"repetitions": len(values),
                      "medians": values,
                      "stat": "median of the repetitions' medians"}
        if len(values) >= 2:
            mean = statistics.mean(values)
            misc["cv_pct"] = statistics.stdev(values) / mean * 100 \
                if mean else None
        means = row.values("mean")
        if means:
            misc["means"] = means
        if row.note:
            misc["note"] = row.note
        number = Number(statistics.median(values), row.unit)
        scale = test.insn_per_unit(row.unit) if test is not None else None
        if scale is not None:
            # Exact mode: instructions, the virtual time kept beside.
            misc["virtual_time"] = members(number)
            misc["clock_mode"] = "icount"
            number = Number(number.value * scale, INSN)
        self.add_test(build, run_key, path, KStatus.DONE, number=number,
                      misc=misc, start=start, env=env)

    def document(self) -> Json:
        return {"version": {"major": SCHEMA_MAJOR, "minor": SCHEMA_MINOR},
                "checkouts": [c.to_json() for c in self.checkouts.values()],
                "builds": [b.to_json() for b in self.builds.values()],
                "tests": [t.to_json() for t in self.tests.values()]}


def _any_header(run: Run) -> Optional[Header]:
    for t in run.tests.values():
        return t.header
    return None


# The members of "machine" a test's environment keeps.
ENVIRONMENT = ("arch", "cpus", "guest", "machine_slow", "clock_mode",
               "icount_shift")


def _environment(header: Header) -> Environment:
    m = header.machine
    misc = {k: v for k, v in members(m, drop_none=True).items()
            if k in ENVIRONMENT}
    return Environment(f"{m.hostname or 'host'}"
                       + (f" ({m.guest} guest)" if m.guest else ""),
                       misc or None)


# A program's checks from its KTAP: {check: (status, reason or None)}.
Checks = Dict[str, Tuple[KStatus, Optional[str]]]


def _program_status(rows: Dict[str, Row], checks: Checks) -> KStatus:
    if any(r.status == Status.FAIL for r in rows.values()) or \
            any(s == KStatus.FAIL for s, _ in checks.values()):
        return KStatus.FAIL
    if rows or checks:
        return KStatus.PASS
    return KStatus.SKIP


PROGRAM_TITLE = re.compile(r"^selftests: kbench/([^:]+): (\S+)"
                           r"(?: \((?:(base|candidate), )?repetition)?")
# Worse ones last: repetitions of a check keep the worst.
RANK = {KStatus.PASS: 0, KStatus.SKIP: 1, KStatus.FAIL: 2, KStatus.ERROR: 3}


def program_checks(doc: ktap.Document, side: Optional[str] = None
                   ) -> Dict[str, Tuple[Checks, Optional[KStatus]]]:
    """{program: ({check: (STATUS, reason)}, program STATUS or None)} from
    a run_all.sh KTAP stream (of an A/B stream, SIDE's programs only);
    repetitions of a check keep the worst. A check without a name is a
    ktap.LineError naming the stream's file and line."""
    out: Dict[str, Tuple[Checks, Optional[KStatus]]] = {}
    for res in doc.results:
        m = PROGRAM_TITLE.match(res.name)
        if not m or (side is not None and m.group(3) != side):
            continue
        prog = m.group(2)
        checks, status = out.get(prog) or ({}, None)
        mine = _ktap_status(res, program=True)
        if status is None or RANK[mine] > RANK[status]:
            status = mine
        if res.child is not None:
            for r in res.child.results:
                if not r.name:
                    raise ktap.LineError(
                        res.child, r.line, f"test line without a name: "
                        f"{r.text!r} (a KCIDB test path needs one)")
                new = (_ktap_status(r), r.reason or None)
                old = checks.get(r.name)
                if old is None or RANK[new[0]] > RANK[old[0]]:
                    checks[r.name] = new
        out[prog] = (checks, status)
    return out


def _ktap_status(res: ktap.Result, program: bool = False) -> KStatus:
    if res.directive == ktap.Directive.SKIP:
        return KStatus.SKIP
    if res.ok:
        return KStatus.PASS
    # A program killed by the runner (timeout, crash) did not judge the
    # kernel: that is an error of the run, not a failed check.
    if program and ("TIMEOUT" in res.comment or
                    re.search(r"exit=(?!1\b)\d+", res.comment)):
        return KStatus.ERROR
    return KStatus.ERROR if res.directive == ktap.Directive.ERROR \
        else KStatus.FAIL


# ---- the command (kbench kcidb, scripts/kcidb.py) ---------------------------

def parse_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Export kbench results as a KCIDB I/O document.")
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="run_all.sh --json directory or result file")
    p.add_argument("-o", "--output", default="-",
                   help="output file (default: standard output)")
    p.add_argument("--origin", default="kbench",
                   help="KCIDB origin, [a-z0-9_]+ (default: kbench)")
    p.add_argument("--git-commit", help="full commit hash of the kernel")
    p.add_argument("--tree-name", help="tree name (e.g. mainline, net-next)")
    p.add_argument("--repo-url", help="https:// URL of the kernel's repo")
    p.add_argument("--validate", action="store_true",
                   help="validate with the kcidb-io package before writing")
    return p.parse_args(list(argv))


def sides_of(path: str) -> List[str]:
    """The result directories held by PATH: itself, or base/ and
    candidate/ of an A/B directory."""
    ab = [os.path.join(path, s) for s in ("base", "candidate")]
    if os.path.isdir(path) and all(os.path.isdir(d) for d in ab) and \
            not any(f.endswith(".json") for f in os.listdir(path)):
        return ab
    return [path]


def load_ktap(path: str
              ) -> Tuple[Optional[ktap.Document], Optional[str]]:
    """(KTAP Document or None, side or None) for a result directory: its
    own run_all.ktap, or an A/B directory's, of which it is one side."""
    if not os.path.isdir(path):
        return None, None
    f, side = os.path.join(path, "run_all.ktap"), None
    if not os.path.isfile(f):
        side = os.path.basename(os.path.normpath(path))
        f = os.path.join(os.path.dirname(os.path.normpath(path)),
                         "run_all.ktap")
        if side not in ("base", "candidate") or not os.path.isfile(f):
            return None, None
    try:
        return ktap.read(f), side
    except OSError as e:
        raise ExportError(f"cannot read {f}: {e.strerror}") from e


def validate(doc: Json) -> None:
    try:
        import kcidb_io
    except ImportError as e:
        raise ExportError(
            "--validate needs the kcidb-io package (pip install kcidb-io)") \
            from e
    try:
        kcidb_io.schema.LATEST.validate_exactly(doc)
    except Exception as e:  # jsonschema's ValidationError and kin
        msg = str(e).splitlines()[0]
        raise ExportError(f"invalid KCIDB document: {msg}") from e


def export(args: argparse.Namespace) -> Json:
    info = {k: v for k, v in (("git_commit_hash", args.git_commit),
                              ("tree_name", args.tree_name),
                              ("git_repository_url", args.repo_url)) if v}
    ex = Exporter(args.origin, info)
    for path in args.dirs:
        for side in sides_of(path):
            stream, which = load_ktap(side)
            ex.add_run(results.load(side), stream, which)
    doc = ex.document()
    if not doc["tests"]:
        raise ExportError("no tests in the given results")
    if args.validate:
        validate(doc)
    return doc


@cli.task(errors=(ExportError, results.ResultError, ktap.LineError))
def main(argv: Sequence[str], prog: str) -> int:
    """kbench kcidb, scripts/kcidb.py: 0 written; 2 bad input or
    usage."""
    args = parse_args(argv, prog)
    doc = export(args)
    with cli.writing(args.output):
        results.write_json(args.output, doc)
    return 0
