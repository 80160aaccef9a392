# SPDX-License-Identifier: GPL-2.0
"""Read kbench results: one JSON file, a run_all.sh --json directory, or a
directory of repeated runs, into one Run of Tests of Rows, each row holding
its figures per repetition.

A file written by `run_all.sh --repeat N --json DIR` keeps the schema
"kbench-results/1" and adds keys: top-level "repeat" (N) and
"repetitions" (one header per repetition: date, end_date, cmdline,
params), and in every row "repetitions" (the row's figures of each
repetition, each with its own status) beside the summary figures.
merge_docs() writes that layout; load() reads both layouts.

    python3 -m kbtools.results merge OUT.json IN.json...
    python3 -m kbtools.results merge-dirs OUTDIR INDIR...
"""

import json
import math
import os
import sys
from typing import Any, Optional

from kbtools import stats
from kbtools.output import one_line, write_stdout

SCHEMA = "kbench-results/1"
STATUSES = ("ok", "skip", "fail")
# Figures a row may carry; each must be a finite number when present.
FIGURES = ("n", "mean", "median", "min", "max", "stddev", "rsd_pct",
           "p90", "p99", "p999")
# Header keys that differ from one repetition to the next.
REP_HEADER = ("date", "end_date", "cmdline", "params", "boot_id")
# Units of time, in ns. Under QEMU's instruction counter (machine.clock_mode
# "icount") a virtual ns is 2^-icount_shift instructions, so a figure in
# one of these units is a count of guest instructions: unit INSN.
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
INSN = "insn"
CLOCK_MODES = ("real", "icount")


class ResultError(Exception):
    """Input that is not kbench results; the message names file and row."""


class Row:
    """One row of a test: its identity and its figures per repetition."""

    def __init__(self, name, unit=None, status="ok", reason=None, note=None):
        self.name = name
        self.unit = unit
        self.status = status
        self.reason = reason
        self.note = note
        self.reps = []
        self.boots = []     # the boot_id of each repetition (or None)

    def values(self, stat="median"):
        """The row's `stat` figure of every repetition that measured it."""
        out = []
        for rep in self.reps:
            if rep.get("status", "ok") != "ok":
                continue
            v = rep.get(stat)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append(float(v))
        return out

    def boot_values(self, stat="median"):
        """The row's `stat` per boot: the median over the repetitions of
        each boot that measured it, boots in the order first seen (a
        repetition of unknown boot is a boot of its own)."""
        by_boot = {}
        for k, (rep, boot) in enumerate(zip(self.reps, self.boots)):
            v = rep.get(stat)
            if rep.get("status", "ok") != "ok" or isinstance(v, bool) or \
                    not isinstance(v, (int, float)):
                continue
            by_boot.setdefault(boot if boot is not None else k, []).append(
                float(v))
        return [stats.median(vs) for vs in by_boot.values()]

    def add_rep(self, rep, boot=None):
        """Add one repetition's figures (of the boot with that boot_id);
        the row's status is the worst."""
        status = rep.get("status", "ok")
        self.reps.append(rep)
        self.boots.append(boot)
        if status == "fail" or (status == "ok" and self.status == "skip"):
            self.status = status
            self.reason = rep.get("reason")
        if self.unit is None and rep.get("unit") is not None:
            self.unit = rep["unit"]

    def __repr__(self):
        return f"Row({self.name!r}, {self.status}, {len(self.reps)} reps)"


class Test:
    """One program's results: the first repetition's header and its rows."""

    def __init__(self, name, doc):
        self.name = name
        self.doc = doc
        self.headers = []
        self.rows = {}

    def clock_mode(self):
        """'icount' when QEMU's instruction counter drove the clocks of
        the run, else 'real'."""
        machine = self.doc.get("machine") or {}
        return "icount" if machine.get("clock_mode") == "icount" else "real"

    def insn_per_unit(self, unit):
        """Guest instructions per `unit` of an icount run's figures; None
        for a real clock or a unit that is not a time."""
        if self.clock_mode() != "icount" or unit not in NS_PER_UNIT:
            return None
        shift = (self.doc.get("machine") or {}).get("icount_shift", 0)
        return NS_PER_UNIT[unit] / 2 ** shift

    def __repr__(self):
        return f"Test({self.name!r}, {len(self.rows)} rows)"


class Run:
    """The results of one side of a comparison: label and tests by name."""

    def __init__(self, label, path=None):
        self.label = label
        self.path = path
        self.tests = {}

    def repetitions(self):
        """The largest number of repetitions any test of the run has."""
        return max((len(t.headers) for t in self.tests.values()), default=0)

    def __repr__(self):
        return f"Run({self.label!r}, {sorted(self.tests)})"


def _reject_constant(name):
    raise ValueError(f"non-finite number {name}")


# Deeper than any kbench document (a row's repetition's members are at 5):
# the readers walk documents recursively.
MAX_DEPTH = 32


def text_problem(doc: Any) -> Optional[str]:
    """Why DOC cannot be read as kbench JSON (nested deeper than
    MAX_DEPTH, or a string holding a lone surrogate: an escape such as
    "\\ud800" that is no character), or None."""
    todo = [(doc, 0)]
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


def _check_figures(path, where, fig):
    for key in FIGURES:
        if key not in fig or fig[key] is None:
            continue
        v = fig[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ResultError(f"{path}: {where}: '{key}' is not a number")
        if not math.isfinite(v):
            raise ResultError(f"{path}: {where}: '{key}' is not finite")


def _check_row(path, i, row):
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
    for key in ("unit", "reason", "note"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise ResultError(f"{path}: {where}: '{key}' is not a string")
    _check_figures(path, where, row)
    for key, value in row.items():
        if key != "repetitions" and not _finite(value):
            raise ResultError(f"{path}: {where}: '{key}' is not finite")
    reps = row.get("repetitions")
    if reps is None:
        return
    if not isinstance(reps, list) or not reps:
        raise ResultError(f"{path}: {where}: 'repetitions' is not a list")
    for k, rep in enumerate(reps, 1):
        if not isinstance(rep, dict):
            raise ResultError(f"{path}: {where}: repetition {k} is not an "
                              f"object")
        if rep.get("status", "ok") not in STATUSES:
            raise ResultError(f"{path}: {where}: repetition {k}: bad status")
        _check_figures(path, f"{where}: repetition {k}", rep)
        if not _finite(rep):
            raise ResultError(f"{path}: {where}: repetition {k} holds a "
                              f"non-finite number")


# Header members readers use, and the JSON type each must have if present.
HEADER_TYPES = {"kernel": dict, "machine": dict, "params": dict,
                "date": str, "end_date": str, "cmdline": str,
                "repeat": int, "repetitions": list, "boot_id": str}
TYPE_NAMES = {dict: "an object", str: "a string", int: "an integer",
              list: "a list"}


def _finite(value):
    """No float in value (nested lists and objects too) is infinite: a
    number too large for a double (1e999) parses as one."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _check_header(path, doc):
    # The rows' figures are checked row by row, with the row's name.
    for key, value in doc.items():
        if key != "rows" and not _finite(value):
            raise ResultError(f"{path}: '{key}' holds a non-finite number")
    for key, kind in HEADER_TYPES.items():
        v = doc.get(key)
        if v is not None and (not isinstance(v, kind) or isinstance(v, bool)):
            raise ResultError(f"{path}: '{key}' is not {TYPE_NAMES[kind]}")
    for i, rep in enumerate(doc.get("repetitions") or [], 1):
        if not isinstance(rep, dict):
            raise ResultError(f"{path}: repetition header {i} is not an "
                              f"object")
    machine = doc.get("machine") or {}
    mode = machine.get("clock_mode", "real")
    if mode not in CLOCK_MODES:
        raise ResultError(f"{path}: machine.clock_mode '{one_line(str(mode))}'"
                          f" is not one of {', '.join(CLOCK_MODES)}")
    shift = machine.get("icount_shift", 0)
    if isinstance(shift, bool) or not isinstance(shift, int) or \
            not 0 <= shift <= 10:
        raise ResultError(f"{path}: machine.icount_shift is not an integer "
                          f"from 0 to 10")


def check_doc(path, doc):
    """Raise ResultError unless doc is a well-formed kbench results doc."""
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise ResultError(f"{path} is not a kbench results file (no 'rows' "
                          f"list)")
    if not isinstance(doc.get("test"), str) or not doc["test"]:
        raise ResultError(f"{path} is not a kbench results file (no 'test' "
                          f"name)")
    schema = doc.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise ResultError(f"{path}: schema '{schema}' is not {SCHEMA}")
    _check_header(path, doc)
    seen = set()
    for i, row in enumerate(doc["rows"], 1):
        _check_row(path, i, row)
        if row["name"] in seen:
            raise ResultError(f"{path}: row '{row['name']}' appears twice")
        seen.add(row["name"])


def load_doc(path):
    """The checked kbench document at path."""
    doc = read_json(path)
    check_doc(path, doc)
    return doc


def _rep_figures(row):
    """One repetition's figures of a row written without repetitions."""
    return {k: v for k, v in row.items() if k not in ("name", "note", "unit")}


def _headers(doc):
    reps = doc.get("repetitions")
    if isinstance(reps, list) and reps:
        return list(reps)
    return [{k: doc.get(k) for k in REP_HEADER if k in doc}]


def add_doc(run, path, doc):
    """Add the document's rows to run, as further repetitions if its test
    is there already."""
    test = run.tests.get(doc["test"])
    if test is None:
        header = {k: v for k, v in doc.items() if k != "rows"}
        test = run.tests[doc["test"]] = Test(doc["test"], header)
    headers = _headers(doc)
    test.headers += headers
    boots = [h.get("boot_id") if isinstance(h, dict) else None
             for h in headers]
    for raw in doc["rows"]:
        row = test.rows.get(raw["name"])
        if row is None:
            row = test.rows[raw["name"]] = Row(
                raw["name"], raw.get("unit"), raw.get("status", "ok"),
                raw.get("reason"), raw.get("note"))
        elif raw.get("unit") != row.unit and raw.get("unit") is not None \
                and row.unit is not None:
            raise ResultError(f"{path}: row '{row.name}': unit "
                              f"'{raw.get('unit')}', earlier '{row.unit}'")
        reps = raw.get("repetitions") or [_rep_figures(raw)]
        if not row.reps:
            row.status = "skip"
        # A row's repetitions are the document's, in order, when it has
        # one for each; else their boots are unknown.
        rep_boots = boots if len(boots) == len(reps) else [None] * len(reps)
        for rep, boot in zip(reps, rep_boots):
            row.add_rep(rep, boot if isinstance(boot, str) else None)


def _json_files(path):
    return sorted(f for f in os.listdir(path)
                  if f.endswith(".json") and os.path.isfile(
                      os.path.join(path, f)))


def _rep_dirs(path):
    return sorted(d for d in os.listdir(path)
                  if not d.startswith(".")
                  and os.path.isdir(os.path.join(path, d))
                  and _json_files(os.path.join(path, d)))


def default_label(path):
    base = os.path.basename(os.path.normpath(path))
    return base[:-5] if base.endswith(".json") else base


def load(path, label=None):
    """Load a results file, a --json directory, or a directory whose
    subdirectories are repetitions of one run, into a Run."""
    run = Run(label or default_label(path), path)
    if os.path.isfile(path):
        add_doc(run, path, load_doc(path))
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
        add_doc(run, p, load_doc(p))
    return run


def select_tests(runs, names):
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


def summarize(reps):
    """Summary figures of a row over its repetitions: median and
    percentiles are the median of the repetitions' figures, mean the mean,
    min/max the extremes, n the total number of samples, stddev the pooled
    sample standard deviation of all samples."""
    ok = [r for r in reps if r.get("status", "ok") == "ok"]
    out = {}
    if not ok:
        return out

    def col(key):
        return [float(r[key]) for r in ok
                if isinstance(r.get(key), (int, float))]

    ns, means, sds = col("n"), col("mean"), col("stddev")
    if len(ns) == len(ok):
        out["n"] = int(sum(ns))
    if means:
        out["mean"] = stats.mean(means)
    if col("min"):
        out["min"] = min(col("min"))
    if col("max"):
        out["max"] = max(col("max"))
    for key in ("median", "p90", "p99", "p999"):
        if col(key):
            out[key] = stats.median(col(key))
    if len(ns) == len(means) == len(sds) == len(ok) and sum(ns) > 1:
        sd = stats.pooled_stddev(ns, means, sds)
        out["stddev"] = sd
        if out["mean"]:
            out["rsd_pct"] = sd / out["mean"] * 100
    med = col("median")
    if len(med) >= 2:
        out["cv_pct"] = stats.cv_pct(med)
    return out


def merge_docs(docs):
    """One repeated document from the documents of N repetitions of one
    program, in run order; the first repetition gives the header."""
    if not docs:
        raise ResultError("nothing to merge")
    test = docs[0]["test"]
    for d in docs[1:]:
        if d["test"] != test:
            raise ResultError(f"cannot merge '{d['test']}' into '{test}'")
    out = {k: v for k, v in docs[0].items()
           if k not in ("rows", "repeat", "repetitions")}
    out["repeat"] = 0
    out["repetitions"] = []
    rows = {}
    for d in docs:
        out["repeat"] += int(d.get("repeat", 1))
        out["repetitions"] += _headers(d)
        for raw in d["rows"]:
            entry = rows.setdefault(raw["name"], {
                "name": raw["name"], "unit": raw.get("unit"),
                "note": raw.get("note"), "reps": []})
            entry["reps"] += raw.get("repetitions") or [_rep_figures(raw)]
    out["end_date"] = docs[-1].get("end_date", out.get("end_date"))
    out["rows"] = [_merged_row(e) for e in rows.values()]
    return out


def _merged_row(entry):
    reps = entry["reps"]
    statuses = [r.get("status", "ok") for r in reps]
    status = ("fail" if "fail" in statuses
              else "ok" if "ok" in statuses else "skip")
    row = {"name": entry["name"], "status": status}
    reason = next((r.get("reason") for r in reps
                   if r.get("status", "ok") == status and r.get("reason")),
                  None)
    if reason:
        row["reason"] = reason
    if entry["unit"] is not None:
        row["unit"] = entry["unit"]
    row.update(summarize(reps))
    extra = next((r["extra"] for r in reps if isinstance(r.get("extra"), dict)),
                 None)
    if extra is not None:
        row["extra"] = extra
    if entry["note"]:
        row["note"] = entry["note"]
    row["repetitions"] = reps
    return row


def write_text(path, text):
    """Write text to path ("-": standard output) whole or not at all: a
    reader never sees a half-written file."""
    if path == "-":
        write_stdout(text)
        return
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path, doc):
    write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")


def merge_files(out, inputs):
    write_json(out, merge_docs([load_doc(p) for p in inputs]))


def merge_dirs(outdir, indirs):
    """DIR/PROG.json of every program found in the input directories, each
    merged over the directories that hold it, in the order given."""
    os.makedirs(outdir, exist_ok=True)
    names = []
    for d in indirs:
        for f in _json_files(d) if os.path.isdir(d) else []:
            if f not in names:
                names.append(f)
    for f in names:
        inputs = [os.path.join(d, f) for d in indirs
                  if os.path.isfile(os.path.join(d, f))]
        merge_files(os.path.join(outdir, f), inputs)
    return names


def main(argv=None):
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
