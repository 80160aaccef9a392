# SPDX-License-Identifier: GPL-2.0
"""Read kbench results: one JSON file, a run_all.sh --json directory, or a
directory of repeated runs, into one Run of Tests of Rows, each row holding
its figures per repetition (Repetition).

This is the one module that reads results: parse_doc() checks a JSON
document and turns it into these types, so that no other reader looks
a member up by its name; merge_docs() is the one writer, and writes
back what it read (members no reader knows included) with each row's
figures over its repetitions (Summary).

A file written by `run_all.sh --repeat N --json DIR` keeps the schema
"kbench-results/1" and adds keys: top-level "repeat" (N) and
"repetitions" (one header per repetition: date, end_date, cmdline,
params), and in every row "repetitions" (the row's figures of each
repetition, each with its own status) beside the summary figures.
merge_docs() writes that layout; load() reads both layouts.

    python3 -m kbtools.results merge OUT.json IN.json...
    python3 -m kbtools.results merge-dirs OUTDIR INDIR...
"""

import dataclasses
import json
import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from kbtools import stats
from kbtools.output import one_line, write_stdout

SCHEMA = "kbench-results/1"


class Status(StrEnum):
    """A row's or a repetition's status."""
    OK = "ok"
    SKIP = "skip"
    FAIL = "fail"


class ClockMode(StrEnum):
    """What drove the clocks of a run (machine.clock_mode)."""
    REAL = "real"
    ICOUNT = "icount"


STATUSES: Tuple[Status, ...] = tuple(Status)
CLOCK_MODES: Tuple[ClockMode, ...] = tuple(ClockMode)
# Figures a row may carry; each must be a finite number when present.
# mode and mode_share: the most common per-operation value and the share
# of the samples (0..1) that hold it, of rows timed one operation at a
# time (under icount an instruction count; kbtools.exact judges by it).
FIGURES = ("n", "mean", "median", "min", "max", "stddev", "rsd_pct",
           "p90", "p99", "p999", "mode", "mode_share")
# Header keys that differ from one repetition to the next.
REP_HEADER = ("date", "end_date", "cmdline", "params", "boot_id")
# Units of time, in ns. Under QEMU's instruction counter (machine.clock_mode
# "icount") a virtual ns is 2^-icount_shift instructions, so a figure in
# one of these units is a count of guest instructions: unit INSN.
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
INSN = "insn"

# A JSON object as read or as written.
Json = Dict[str, Any]


class ResultError(Exception):
    """Input that is not kbench results; the message names file and row."""


def members(obj: Any, drop_none: bool = False) -> Json:
    """A dataclass instance as a JSON object: its fields in their order,
    each named as its metadata's "json" says or else as itself; an Enum
    as its value, a dataclass as its members. With drop_none, the fields
    that are None are left out."""
    out: Json = {}
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if v is None and drop_none:
            continue
        if isinstance(v, Enum):
            v = v.value
        elif dataclasses.is_dataclass(v):
            v = members(v, drop_none)
        out[f.metadata.get("json", f.name)] = v
    return out


@dataclass
class Repetition:
    """One repetition's figures of a row. doc is the JSON object it was
    read from: merge_docs() writes it back as it is, members that no
    reader knows included."""
    status: Status = Status.OK
    reason: Optional[str] = None
    unit: Optional[str] = None
    figures: Dict[str, float] = field(default_factory=dict)  # of FIGURES
    extra: Optional[Json] = None
    doc: Json = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Json) -> "Repetition":
        """The repetition of a JSON object (checked by _check_figures:
        its figures are finite numbers)."""
        return cls(Status(doc.get("status", Status.OK)),
                   _str_or_none(doc.get("reason")),
                   _str_or_none(doc.get("unit")),
                   {k: float(doc[k]) for k in FIGURES if _number(doc.get(k))},
                   doc["extra"] if isinstance(doc.get("extra"), dict)
                   else None, doc)

    @classmethod
    def of(cls, status: Status = Status.OK, reason: Optional[str] = None,
           **figures: float) -> "Repetition":
        """A repetition made here, not read (its doc holds what it says)."""
        doc: Json = dict(figures)
        if status != Status.OK:
            doc.update(status=status.value, reason=reason)
        return cls.from_json(doc)


def _number(v: object) -> bool:
    """A JSON number (true and false are no numbers)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _str_or_none(v: object) -> Optional[str]:
    return v if isinstance(v, str) else None


@dataclass(repr=False)
class Row:
    """One row of a test: its identity and its figures per repetition."""
    name: str
    unit: Optional[str] = None
    status: Status = Status.OK
    reason: Optional[str] = None
    note: Optional[str] = None
    reps: List[Repetition] = field(default_factory=list)
    # The boot_id of each repetition (or None).
    boots: List[Optional[str]] = field(default_factory=list)

    def values(self, stat: str = "median") -> List[float]:
        """The row's `stat` figure of every repetition that measured it."""
        return [rep.figures[stat] for rep in self.reps
                if rep.status == Status.OK and stat in rep.figures]

    def boot_values(self, stat: str = "median") -> List[float]:
        """The row's `stat` per boot: the median over the repetitions of
        each boot that measured it, boots in the order first seen (a
        repetition of unknown boot is a boot of its own)."""
        return [stats.median(vs) for vs in self.boot_reps(stat)]

    def boot_groups(self, stat: str = "median") -> List[List["Repetition"]]:
        """The row's repetitions that measured `stat`, grouped by boot
        (boots in the order first seen, repetitions in run order within
        each; a repetition of unknown boot is a boot of its own)."""
        by_boot: Dict[object, List[Repetition]] = {}
        for k, (rep, boot) in enumerate(zip(self.reps, self.boots)):
            if rep.status == Status.OK and stat in rep.figures:
                by_boot.setdefault(boot if boot is not None else k,
                                   []).append(rep)
        return list(by_boot.values())

    def boot_reps(self, stat: str = "median") -> List[List[float]]:
        """The row's `stat` of each repetition, grouped by boot
        (boot_groups)."""
        return [[rep.figures[stat] for rep in group]
                for group in self.boot_groups(stat)]

    def add_rep(self, rep: Repetition, boot: Optional[str] = None) -> None:
        """Add one repetition's figures (of the boot with that boot_id);
        the row's status is the worst."""
        self.reps.append(rep)
        self.boots.append(boot)
        if rep.status == Status.FAIL or (rep.status == Status.OK and
                                         self.status == Status.SKIP):
            self.status = rep.status
            self.reason = rep.reason
        if self.unit is None and rep.unit is not None:
            self.unit = rep.unit

    def __repr__(self) -> str:
        return f"Row({self.name!r}, {self.status}, {len(self.reps)} reps)"


@dataclass
class Kernel:
    """A document's "kernel": uname's, and the source's when the run
    recorded it (None: absent)."""
    sysname: Optional[str] = None
    release: Optional[str] = None
    version: Optional[str] = None
    git_commit_hash: Optional[str] = None
    tree_name: Optional[str] = None
    git_repository_url: Optional[str] = None


@dataclass
class Machine:
    """A document's "machine" (None: absent)."""
    arch: Optional[str] = None
    hostname: Optional[str] = None
    cpus: Optional[int] = None
    guest: Optional[str] = None
    machine_slow: Optional[bool] = None
    clock_mode: Optional[ClockMode] = None
    icount_shift: Optional[int] = None
    # How the exact guest was made deterministic (the VM runner's words).
    icount_settings: Optional[str] = None


@dataclass
class Header:
    """What readers use of a document's header, typed; doc is the whole
    header as read (its rows left out)."""
    kernel: Kernel = field(default_factory=Kernel)
    machine: Machine = field(default_factory=Machine)
    cmdline: Optional[str] = None
    clock: Optional[str] = None
    params: Json = field(default_factory=dict)
    doc: Json = field(default_factory=dict)


@dataclass
class RepHeader:
    """When one repetition ran, and in which boot; doc is its header as
    read, which merge_docs() writes back."""
    date: Optional[str] = None
    end_date: Optional[str] = None
    boot_id: Optional[str] = None
    doc: Json = field(default_factory=dict)


@dataclass
class RowRecord:
    """A row as one document holds it: reps are its "repetitions", or
    its own figures as the one repetition."""
    name: str
    status: Status
    unit: Optional[str]
    reason: Optional[str]
    note: Optional[str]
    reps: List[Repetition]


@dataclass
class Document:
    """One checked results file: its program, header, the headers of
    its repetitions and its rows."""
    path: str
    test: str
    header: Header
    repeat: Optional[int]
    repetitions: List[RepHeader]
    rows: List[RowRecord]


@dataclass(repr=False)
class Test:
    """One program's results: the first document's header, the headers
    of its repetitions and its rows."""
    name: str
    header: Header = field(default_factory=Header)
    headers: List[RepHeader] = field(default_factory=list)
    rows: Dict[str, Row] = field(default_factory=dict)

    def clock_mode(self) -> ClockMode:
        """ICOUNT when QEMU's instruction counter drove the clocks of
        the run, else REAL."""
        return self.header.machine.clock_mode or ClockMode.REAL

    def insn_per_unit(self, unit: Optional[str]) -> Optional[float]:
        """Guest instructions per `unit` of an icount run's figures; None
        for a real clock or a unit that is not a time."""
        if self.clock_mode() != ClockMode.ICOUNT or unit not in NS_PER_UNIT:
            return None
        return NS_PER_UNIT[unit] / (1 << (self.header.machine.icount_shift
                                          or 0))

    def __repr__(self) -> str:
        return f"Test({self.name!r}, {len(self.rows)} rows)"


@dataclass(repr=False)
class Run:
    """The results of one side of a comparison: label and tests by name."""
    label: str
    path: Optional[str] = None
    tests: Dict[str, Test] = field(default_factory=dict)

    def repetitions(self) -> int:
        """The largest number of repetitions any test of the run has."""
        return max((len(t.headers) for t in self.tests.values()), default=0)

    def __repr__(self) -> str:
        return f"Run({self.label!r}, {sorted(self.tests)})"


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-finite number {name}")


# Deeper than any kbench document (a row's repetition's members are at 5):
# the readers walk documents recursively.
MAX_DEPTH = 32


def text_problem(doc: object) -> Optional[str]:
    """Why DOC cannot be read as kbench JSON (nested deeper than
    MAX_DEPTH, or a string holding a lone surrogate: an escape such as
    "\\ud800" that is no character), or None."""
    todo: List[Tuple[object, int]] = [(doc, 0)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return f"{value[:40]!r} holds a lone surrogate, which is " \
                       f"no character"
        elif isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                return "nested too deeply"
            items = list(value.items()) if isinstance(value, dict) else \
                [(None, v) for v in value]
            for key, v in items:
                todo += [(key, depth + 1), (v, depth + 1)]
    return None


def read_json(path: str) -> Any:
    """Parse the JSON file at path; NaN and Infinity are errors, and so
    are what text_problem() finds."""
    problem: Optional[str]
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_constant=_reject_constant)
    except OSError as e:
        raise ResultError(f"cannot read {path}: {e.strerror}") from e
    except ValueError as e:
        raise ResultError(f"{path} is not valid JSON: {e}") from e
    except RecursionError:
        doc, problem = None, "nested too deeply"
    else:
        problem = text_problem(doc)
    if problem:
        raise ResultError(f"{path} is not kbench JSON: {problem}")
    return doc


def _finite_number(v: float) -> bool:
    """A number a double holds (an integer may be too large for one)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _check_figures(path: str, where: str, fig: Json) -> None:
    for key in FIGURES:
        if key not in fig or fig[key] is None:
            continue
        v = fig[key]
        if not _number(v):
            raise ResultError(f"{path}: {where}: '{key}' is not a number")
        if not _finite_number(v):
            raise ResultError(f"{path}: {where}: '{key}' is not finite")


def _check_strings(path: str, where: str, obj: Json,
                   keys: Sequence[str]) -> None:
    for key in keys:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ResultError(f"{path}: {where}: '{key}' is not a string")


def _read_rep(path: str, where: str, k: int, rep: object) -> Repetition:
    if not isinstance(rep, dict):
        raise ResultError(f"{path}: {where}: repetition {k} is not an "
                          f"object")
    if rep.get("status", "ok") not in STATUSES:
        raise ResultError(f"{path}: {where}: repetition {k}: bad status")
    _check_figures(path, f"{where}: repetition {k}", rep)
    _check_strings(path, f"{where}: repetition {k}", rep, ("unit", "reason"))
    if not _finite(rep):
        raise ResultError(f"{path}: {where}: repetition {k} holds a "
                          f"non-finite number")
    return Repetition.from_json(rep)


def _rep_figures(row: Json) -> Json:
    """One repetition's figures of a row written without repetitions."""
    return {k: v for k, v in row.items() if k not in ("name", "note", "unit")}


def _read_row(path: str, i: int, row: object) -> RowRecord:
    if not isinstance(row, dict):
        raise ResultError(f"{path}: row {i} is not an object")
    name = row.get("name")
    if not isinstance(name, str) or not name:
        raise ResultError(f"{path}: row {i} has no name")
    where = f"row '{name}'"
    status = row.get("status", "ok")
    if status not in STATUSES:
        raise ResultError(f"{path}: {where}: status '{status}' is not one "
                          f"of {', '.join(STATUSES)}")
    _check_strings(path, where, row, ("unit", "reason", "note"))
    _check_figures(path, where, row)
    for key, value in row.items():
        if key != "repetitions" and not _finite(value):
            raise ResultError(f"{path}: {where}: '{key}' is not finite")
    reps = row.get("repetitions")
    if reps is not None and (not isinstance(reps, list) or not reps):
        raise ResultError(f"{path}: {where}: 'repetitions' is not a list")
    return RowRecord(name, Status(status), row.get("unit"), row.get("reason"),
                     row.get("note"),
                     [_read_rep(path, where, k, rep)
                      for k, rep in enumerate(reps, 1)] if reps else
                     [Repetition.from_json(_rep_figures(row))])


# Header members readers use, and the JSON type each must have if present.
HEADER_TYPES = {"kernel": dict, "machine": dict, "params": dict,
                "date": str, "end_date": str, "cmdline": str,
                "repeat": int, "repetitions": list, "boot_id": str,
                "clock": str}
TYPE_NAMES = {dict: "an object", str: "a string", int: "an integer",
              list: "a list", bool: "true or false"}
# Members of "kernel" and "machine", and their JSON types.
KERNEL_TYPES = {"sysname": str, "release": str, "version": str,
                "git_commit_hash": str, "tree_name": str,
                "git_repository_url": str}
MACHINE_TYPES = {"arch": str, "hostname": str, "cpus": int, "guest": str,
                 "machine_slow": bool, "icount_settings": str}


def _finite(value: object) -> bool:
    """No float in value (nested lists and objects too) is infinite: a
    number too large for a double (1e999) parses as one."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _check_types(path: str, where: str, obj: Json,
                 types: Mapping[str, type]) -> None:
    """Every member of obj named in types has its JSON type, or null."""
    for key, kind in types.items():
        v = obj.get(key)
        if v is not None and (not isinstance(v, kind) or
                              (isinstance(v, bool) and kind is not bool)):
            raise ResultError(f"{path}: '{where}{key}' is not "
                              f"{TYPE_NAMES[kind]}")


def _read_machine(path: str, machine: Json) -> Machine:
    mode = machine.get("clock_mode", "real")
    if mode not in CLOCK_MODES:
        raise ResultError(f"{path}: machine.clock_mode '{one_line(str(mode))}'"
                          f" is not one of {', '.join(CLOCK_MODES)}")
    shift = machine.get("icount_shift", 0)
    if not isinstance(shift, int) or isinstance(shift, bool) or \
            not 0 <= shift <= 10:
        raise ResultError(f"{path}: machine.icount_shift is not an integer "
                          f"from 0 to 10")
    _check_types(path, "machine.", machine, MACHINE_TYPES)
    return Machine(machine.get("arch"), machine.get("hostname"),
                   machine.get("cpus"), machine.get("guest"),
                   machine.get("machine_slow"),
                   ClockMode(mode) if "clock_mode" in machine else None,
                   machine.get("icount_shift"), machine.get("icount_settings"))


def _read_kernel(path: str, kernel: Json) -> Kernel:
    _check_types(path, "kernel.", kernel, KERNEL_TYPES)
    return Kernel(kernel.get("sysname"), kernel.get("release"),
                  kernel.get("version"), kernel.get("git_commit_hash"),
                  kernel.get("tree_name"), kernel.get("git_repository_url"))


def _read_header(path: str, doc: Json) -> Header:
    # The rows' figures are checked row by row, with the row's name.
    for key, value in doc.items():
        if key != "rows" and not _finite(value):
            raise ResultError(f"{path}: '{key}' holds a non-finite number")
    _check_types(path, "", doc, HEADER_TYPES)
    kernel = _read_kernel(path, doc.get("kernel") or {})
    machine = _read_machine(path, doc.get("machine") or {})
    return Header(kernel, machine, doc.get("cmdline"), doc.get("clock"),
                  doc.get("params") or {},
                  {k: v for k, v in doc.items() if k != "rows"})


def _read_rep_headers(path: str, doc: Json) -> List[RepHeader]:
    """The headers of the document's repetitions: its "repetitions", or
    its own header as the one repetition's."""
    reps = doc.get("repetitions")
    if not reps:
        reps = [{k: doc.get(k) for k in REP_HEADER if k in doc}]
    out = []
    for i, rep in enumerate(reps, 1):
        if not isinstance(rep, dict):
            raise ResultError(f"{path}: repetition header {i} is not an "
                              f"object")
        _check_types(path, f"repetitions.{i}.", rep,
                     {k: HEADER_TYPES[k] for k in REP_HEADER})
        out.append(RepHeader(rep.get("date"), rep.get("end_date"),
                             rep.get("boot_id"), rep))
    return out


def parse_doc(path: str, doc: object) -> Document:
    """The Document of parsed JSON; ResultError unless it is a well-formed
    kbench results document (the message names path, and the row)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise ResultError(f"{path} is not a kbench results file (no 'rows' "
                          f"list)")
    if not isinstance(doc.get("test"), str) or not doc["test"]:
        raise ResultError(f"{path} is not a kbench results file (no 'test' "
                          f"name)")
    schema = doc.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise ResultError(f"{path}: schema '{schema}' is not {SCHEMA}")
    header = _read_header(path, doc)
    rep_headers = _read_rep_headers(path, doc)
    rows: List[RowRecord] = []
    seen = set()
    for i, raw in enumerate(doc["rows"], 1):
        row = _read_row(path, i, raw)
        if row.name in seen:
            raise ResultError(f"{path}: row '{row.name}' appears twice")
        seen.add(row.name)
        rows.append(row)
    return Document(path, doc["test"], header, doc.get("repeat"),
                    rep_headers, rows)


def load_doc(path: str) -> Document:
    """The checked kbench document at path."""
    return parse_doc(path, read_json(path))


def add_doc(run: Run, doc: Document) -> None:
    """Add the document's rows to run, as further repetitions if its test
    is there already."""
    test = run.tests.get(doc.test)
    if test is None:
        test = run.tests[doc.test] = Test(doc.test, doc.header)
    test.headers += doc.repetitions
    boots = [h.boot_id for h in doc.repetitions]
    for raw in doc.rows:
        row = test.rows.get(raw.name)
        if row is None:
            row = test.rows[raw.name] = Row(raw.name, raw.unit, raw.status,
                                            raw.reason, raw.note)
        elif raw.unit != row.unit and raw.unit is not None \
                and row.unit is not None:
            raise ResultError(f"{doc.path}: row '{row.name}': unit "
                              f"'{raw.unit}', earlier '{row.unit}'")
        if not row.reps:
            row.status = Status.SKIP
        # A row's repetitions are the document's, in order, when it has
        # one for each; else their boots are unknown.
        rep_boots = boots if len(boots) == len(raw.reps) else \
            [None] * len(raw.reps)
        for rep, boot in zip(raw.reps, rep_boots):
            row.add_rep(rep, boot)


def _json_files(path: str) -> List[str]:
    return sorted(f for f in os.listdir(path)
                  if f.endswith(".json") and os.path.isfile(
                      os.path.join(path, f)))


def _rep_dirs(path: str) -> List[str]:
    return sorted(d for d in os.listdir(path)
                  if not d.startswith(".")
                  and os.path.isdir(os.path.join(path, d))
                  and _json_files(os.path.join(path, d)))


def default_label(path: str) -> str:
    base = os.path.basename(os.path.normpath(path))
    return base[:-5] if base.endswith(".json") else base


def load(path: str, label: Optional[str] = None) -> Run:
    """Load a results file, a --json directory, or a directory whose
    subdirectories are repetitions of one run, into a Run."""
    run = Run(label or default_label(path), path)
    if os.path.isfile(path):
        add_doc(run, load_doc(path))
        return run
    if not os.path.isdir(path):
        raise ResultError(f"{path}: no such file or directory")
    files = _json_files(path)
    subdirs = _rep_dirs(path)
    if not files and {"base", "candidate"} <= set(subdirs):
        raise ResultError(f"{path} holds an A/B run: compare "
                          f"{os.path.join(path, 'base')} with "
                          f"{os.path.join(path, 'candidate')}")
    if files:
        paths = [os.path.join(path, f) for f in files]
    else:
        paths = [os.path.join(path, d, f) for d in subdirs
                 for f in _json_files(os.path.join(path, d))]
    if not paths:
        raise ResultError(f"{path} holds no kbench results (.json) file")
    for p in paths:
        add_doc(run, load_doc(p))
    return run


def select_tests(runs: Sequence[Run], names: Sequence[str]) -> None:
    """Keep only the tests @names in every run of @runs; a name that no
    run holds is an error (a typo must not compare nothing)."""
    known = {t for run in runs for t in run.tests}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ResultError(f"no test {', '.join(map(repr, unknown))} in "
                          f"these runs (they hold: "
                          f"{', '.join(sorted(known)) or 'nothing'})")
    for run in runs:
        run.tests = {n: t for n, t in run.tests.items() if n in names}


@dataclass
class Summary:
    """A row's figures over its repetitions (see summarize()); medians
    is the number of repetitions with a median, rep_low and rep_high the
    extremes of those medians (with two or more)."""
    n: Optional[int] = None
    mean: Optional[float] = None
    min: Optional[float] = None
    max: Optional[float] = None
    median: Optional[float] = None
    p90: Optional[float] = None
    p99: Optional[float] = None
    p999: Optional[float] = None
    stddev: Optional[float] = None
    rsd_pct: Optional[float] = None
    cv_pct: Optional[float] = None
    medians: int = 0
    rep_low: Optional[float] = None
    rep_high: Optional[float] = None

    def to_json(self) -> Json:
        """The figures a merged row carries, in the order it has them:
        cv_pct (null with a zero mean) once there are two medians."""
        out: Json = {}
        for key, v in (("n", self.n), ("mean", self.mean),
                       ("min", self.min), ("max", self.max),
                       ("median", self.median), ("p90", self.p90),
                       ("p99", self.p99), ("p999", self.p999),
                       ("stddev", self.stddev), ("rsd_pct", self.rsd_pct)):
            if v is not None:
                out[key] = v
        if self.medians >= 2:
            out["cv_pct"] = self.cv_pct
        return out


def summarize(reps: Sequence[Repetition]) -> Summary:
    """Summary figures of a row over its repetitions: median and
    percentiles are the median of the repetitions' figures, mean the mean,
    min/max the extremes, n the total number of samples, stddev the pooled
    sample standard deviation of all samples."""
    ok = [r for r in reps if r.status == Status.OK]
    out = Summary()
    if not ok:
        return out

    def col(key: str) -> List[float]:
        return [r.figures[key] for r in ok if key in r.figures]

    ns, means, sds = col("n"), col("mean"), col("stddev")
    if len(ns) == len(ok):
        out.n = int(sum(ns))
    if means:
        out.mean = stats.mean(means)
    if col("min"):
        out.min = min(col("min"))
    if col("max"):
        out.max = max(col("max"))
    out.median = stats.median(col("median")) if col("median") else None
    out.p90 = stats.median(col("p90")) if col("p90") else None
    out.p99 = stats.median(col("p99")) if col("p99") else None
    out.p999 = stats.median(col("p999")) if col("p999") else None
    if len(ns) == len(means) == len(sds) == len(ok) and sum(ns) > 1:
        out.stddev = stats.pooled_stddev(ns, means, sds)
        if out.mean:
            out.rsd_pct = out.stddev / out.mean * 100
    med = col("median")
    out.medians = len(med)
    if len(med) >= 2:
        out.cv_pct = stats.cv_pct(med)
        out.rep_low, out.rep_high = min(med), max(med)
    return out


# merge_docs() is the one writer of results: it writes back what the
# documents hold, members no reader knows included, and the summary
# figures of each row over all their repetitions.

def merge_docs(docs: Sequence[Document]) -> Json:
    """One repeated document from the documents of N repetitions of one
    program, in run order; the first repetition gives the header."""
    if not docs:
        raise ResultError("nothing to merge")
    test = docs[0].test
    for d in docs[1:]:
        if d.test != test:
            raise ResultError(f"cannot merge '{d.test}' into '{test}'")
    out = {k: v for k, v in docs[0].header.doc.items()
           if k not in ("repeat", "repetitions")}
    out["repeat"] = sum(d.repeat if d.repeat is not None else 1
                        for d in docs)
    out["repetitions"] = [h.doc for d in docs for h in d.repetitions]
    rows: Dict[str, Tuple[RowRecord, List[Repetition]]] = {}
    for d in docs:
        for raw in d.rows:
            rows.setdefault(raw.name, (raw, []))[1].extend(raw.reps)
    last = docs[-1].header.doc
    out["end_date"] = last["end_date"] if "end_date" in last else \
        out.get("end_date")
    out["rows"] = [_merged_row(first, reps) for first, reps in rows.values()]
    return out


def _merged_row(first: RowRecord, reps: List[Repetition]) -> Json:
    """The row of a merged document: first is the row in the first
    document that has it, reps its repetitions in all of them."""
    statuses = [r.status for r in reps]
    status = (Status.FAIL if Status.FAIL in statuses
              else Status.OK if Status.OK in statuses else Status.SKIP)
    row: Json = {"name": first.name, "status": status.value}
    reason = next((r.reason for r in reps
                   if r.status == status and r.reason), None)
    if reason:
        row["reason"] = reason
    if first.unit is not None:
        row["unit"] = first.unit
    row.update(summarize(reps).to_json())
    extra = next((r.extra for r in reps if r.extra is not None), None)
    if extra is not None:
        row["extra"] = extra
    if first.note:
        row["note"] = first.note
    row["repetitions"] = [r.doc for r in reps]
    return row


def write_text(path: str, text: str) -> None:
    """Write text to path ("-": standard output) whole or not at all: a
    reader never sees a half-written file. A path that is no regular
    file (/dev/null, a pipe) is written into: replacing it would put a
    file where a root user's /dev/null was."""
    if path == "-":
        write_stdout(text)
        return
    if os.path.exists(path) and not os.path.isfile(path) and \
            not os.path.isdir(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path: str, doc: object) -> None:
    write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")


def merge_files(out: str, inputs: Sequence[str]) -> None:
    write_json(out, merge_docs([load_doc(p) for p in inputs]))


def merge_dirs(outdir: str, indirs: Sequence[str]) -> List[str]:
    """DIR/PROG.json of every program found in the input directories, each
    merged over the directories that hold it, in the order given."""
    os.makedirs(outdir, exist_ok=True)
    names: List[str] = []
    for d in indirs:
        for f in _json_files(d) if os.path.isdir(d) else []:
            if f not in names:
                names.append(f)
    for f in names:
        inputs = [os.path.join(d, f) for d in indirs
                  if os.path.isfile(os.path.join(d, f))]
        merge_files(os.path.join(outdir, f), inputs)
    return names


# Where a guest's plan (KBENCH_MERGE=host, kbtools.plan) leaves each
# repetition's files for the host to merge: DIR/repetitions/SIDE/K/PROG.json.
REPETITIONS = "repetitions"


def merge_repetitions(outdir: str, sides: bool) -> bool:
    """The repetitions a guest left in OUTDIR/repetitions/ merged as
    run_all.sh merges them on a host: into OUTDIR, or with sides (an A/B
    in one boot) into OUTDIR/SIDE/; the repetitions then removed. False
    when there were none."""
    where = os.path.join(outdir, REPETITIONS)
    if not os.path.isdir(where):
        return False
    for side in sorted(os.listdir(where)):
        side_dir = os.path.join(where, side)
        ks = sorted((k for k in os.listdir(side_dir) if k.isdigit()),
                    key=int) if os.path.isdir(side_dir) else []
        if ks:
            merge_dirs(os.path.join(outdir, side) if sides else outdir,
                       [os.path.join(side_dir, k) for k in ks])
    shutil.rmtree(where)
    return True


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    usage = ("usage: python3 -m kbtools.results merge OUT.json IN.json...\n"
             "       python3 -m kbtools.results merge-dirs OUTDIR INDIR...")
    if len(argv) < 3 or argv[0] not in ("merge", "merge-dirs"):
        print(usage, file=sys.stderr)
        return 2
    try:
        if argv[0] == "merge":
            merge_files(argv[1], argv[2:])
        else:
            merge_dirs(argv[1], argv[2:])
    except (ResultError, OSError) as e:
        print(f"kbtools.results: {one_line(str(e))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
