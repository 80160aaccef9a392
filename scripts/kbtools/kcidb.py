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

import hashlib
import re
import statistics

from kbtools import ktap
from kbtools.results import INSN

PATH_SAFE = re.compile(r"[A-Za-z0-9_]")
ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")
COMPONENT_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
SCHEMA_MAJOR, SCHEMA_MINOR = 5, 3


class ExportError(Exception):
    """Results that cannot become a valid KCIDB document."""


def encode_component(name):
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


def decode_component(comp):
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


def test_path(program, row=None):
    parts = ["kbench", encode_component(program)]
    if row is not None:
        parts.append(encode_component(row))
    return ".".join(parts)


def parse_path(path):
    """(program, row or None) of a path made by test_path()."""
    parts = path.split(".")
    if len(parts) not in (2, 3) or parts[0] != "kbench":
        raise ExportError(f"'{path}' is not a kbench test path")
    names = [decode_component(p) for p in parts[1:]]
    return names[0], (names[1] if len(names) == 2 else None)


def make_id(origin, *parts):
    """ORIGIN:digest, stable for the same parts."""
    h = hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()
    return f"{origin}:{h[:24]}"


def check_origin(origin):
    if not ORIGIN_RE.match(origin or ""):
        raise ExportError(f"origin '{origin}' must match [a-z0-9_]+")
    return origin


def median_of(values):
    return statistics.median(values) if values else None


def _status_of(row_status):
    return {"ok": "PASS", "fail": "FAIL", "skip": "SKIP"}[row_status]


def _is_timing(row):
    return row.unit is not None and bool(row.values("median"))


def _rfc3339(date):
    """The run's date as KCIDB wants it, or None when it has none."""
    if not isinstance(date, str) or not re.match(
            r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", date):
        return None
    return date if re.search(r"(Z|[+-]\d\d:\d\d)$", date) else date + "Z"


class Exporter:
    """Builds one KCIDB document from any number of kbench runs."""

    def __init__(self, origin="kbench", checkout_info=None):
        self.origin = check_origin(origin)
        self.checkout_info = checkout_info or {}
        self.checkouts, self.builds, self.tests = {}, {}, {}

    def _add(self, table, obj, what):
        old = table.get(obj["id"])
        if old is not None and old != obj:
            raise ExportError(f"duplicate {what} id {obj['id']}")
        table[obj["id"]] = obj

    def checkout_of(self, doc):
        kernel = doc.get("kernel") or {}
        info = dict(self.checkout_info)
        for key in ("git_commit_hash", "tree_name", "git_repository_url"):
            if isinstance(kernel.get(key), str) and key not in info:
                info[key] = kernel[key]
        release = kernel.get("release") or "unknown"
        co = {"id": make_id(self.origin, "checkout", release,
                            kernel.get("version"),
                            info.get("git_commit_hash")),
              "origin": self.origin,
              "comment": f"Linux {release} {kernel.get('version') or ''}"
                         .strip()}
        if info.get("git_commit_hash"):
            if not re.fullmatch(r"[0-9a-f]{40}", info["git_commit_hash"]):
                raise ExportError("git commit hash "
                                  f"'{info['git_commit_hash']}' is not 40 "
                                  "hex digits")
            co["git_commit_hash"] = info["git_commit_hash"]
        for key in ("tree_name", "git_repository_url"):
            if info.get(key):
                co[key] = info[key]
        self._add(self.checkouts, co, "checkout")
        return co

    def build_of(self, doc, checkout):
        kernel = doc.get("kernel") or {}
        machine = doc.get("machine") or {}
        arch = str(machine.get("arch") or "").lower().replace("-", "_")
        build = {"id": make_id(self.origin, "build", checkout["id"], arch),
                 "origin": self.origin, "checkout_id": checkout["id"],
                 "comment": f"the kernel image of Linux "
                            f"{kernel.get('release') or 'unknown'}",
                 "status": "PASS"}
        if re.fullmatch(r"[a-z0-9_]*", arch):
            build["architecture"] = arch
        self._add(self.builds, build, "build")
        return build

    def add_test(self, build, run_key, path, status, *, comment=None,
                 number=None, misc=None, start=None, env=None):
        if not re.fullmatch(r"[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*", path):
            raise ExportError(f"illegal test path '{path}'")
        test = {"id": make_id(self.origin, "test", build["id"], run_key,
                              path),
                "origin": self.origin, "build_id": build["id"],
                "path": path, "status": status}
        if comment:
            test["comment"] = comment
        if number is not None:
            test["number"] = number
        if misc:
            test["misc"] = misc
        if start:
            test["start_time"] = start
        if env:
            test["environment"] = env
        if test["id"] in self.tests:
            raise ExportError(f"duplicate test {path} in one run "
                              f"(id {test['id']})")
        self.tests[test["id"]] = test
        return test

    def add_run(self, run, ktap_doc=None, side=None):
        """Add every test of one kbench Run (kbtools.results) and, when
        given, the checks of its KTAP stream (kbtools.ktap Document); of an
        A/B stream, only the results of SIDE (base or candidate)."""
        checks = program_checks(ktap_doc, side) if ktap_doc is not None \
            else {}
        programs = set(run.tests) | set(checks)
        for name in sorted(programs):
            test = run.tests.get(name)
            prog_checks, prog_status = checks.get(name, ({}, None))
            doc = test.doc if test is not None else _any_doc(run)
            if doc is None:
                raise ExportError(f"{run.path}: no results file tells the "
                                  f"kernel {name} ran on")
            checkout = self.checkout_of(doc)
            build = self.build_of(doc, checkout)
            headers = test.headers if test is not None else []
            run_key = "|".join(str(h.get("date")) for h in headers) or \
                str(run.path)
            start = _rfc3339(headers[0].get("date")) if headers else None
            env = _environment(doc)
            rows = test.rows if test is not None else {}
            status = prog_status or _program_status(rows, prog_checks)
            if side:
                # Both sides of an A/B run ran on one kernel: say which.
                env = dict(env, comment=f"{env['comment']}, A/B {side}")
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

    def _add_row(self, build, run_key, program, row, start, env,
                 test=None):
        path = test_path(program, row.name)
        if row.status == "ok" and row.unit is None and row.values("median"):
            raise ExportError(f"{program}: row '{row.name}' has figures "
                              "but no unit")
        if row.status == "ok" and _is_timing(row):
            values = row.values("median")
            misc = {"repetitions": len(values),
                    "medians": values,
                    "stat": "median of the repetitions' medians"}
            if len(values) >= 2:
                misc["cv_pct"] = statistics.stdev(values) / \
                    statistics.mean(values) * 100 if statistics.mean(values) \
                    else None
            means = row.values("mean")
            if means:
                misc["means"] = means
            if row.note:
                misc["note"] = row.note
            number = {"value": median_of(values), "unit": row.unit}
            scale = test.insn_per_unit(row.unit) if test is not None \
                else None
            if scale is not None:
                # Exact mode: instructions, the virtual time kept beside.
                misc["virtual_time"] = dict(number)
                misc["clock_mode"] = "icount"
                number = {"value": number["value"] * scale,
                          "unit": INSN}
            self.add_test(build, run_key, path, "DONE", number=number,
                          misc=misc, start=start, env=env)
            return
        self.add_test(build, run_key, path, _status_of(row.status),
                      comment=row.reason, start=start, env=env)

    def document(self):
        return {"version": {"major": SCHEMA_MAJOR, "minor": SCHEMA_MINOR},
                "checkouts": list(self.checkouts.values()),
                "builds": list(self.builds.values()),
                "tests": list(self.tests.values())}


def _any_doc(run):
    for t in run.tests.values():
        return t.doc
    return None


def _environment(doc):
    machine = doc.get("machine") or {}
    misc = {k: machine[k] for k in ("arch", "cpus", "guest", "machine_slow",
                                    "clock_mode", "icount_shift")
            if machine.get(k) is not None}
    env = {"comment": f"{machine.get('hostname') or 'host'}"
                      + (f" ({machine['guest']} guest)"
                         if machine.get("guest") else "")}
    if misc:
        env["misc"] = misc
    return env


def _program_status(rows, checks):
    statuses = [r.status for r in rows.values()] + \
        [s for s, _ in checks.values()]
    if "fail" in statuses or "FAIL" in statuses:
        return "FAIL"
    if rows or checks:
        return "PASS"
    return "SKIP"


PROGRAM_TITLE = re.compile(r"^selftests: kbench/([^:]+): (\S+)"
                           r"(?: \((?:(base|candidate), )?repetition)?")


def program_checks(doc, side=None):
    """{program: ({check: (STATUS, reason)}, program STATUS or None)} from
    a run_all.sh KTAP stream (of an A/B stream, SIDE's programs only);
    repetitions of a check keep the worst. A check without a name is a
    ktap.LineError naming the stream's file and line."""
    rank = {"PASS": 0, "SKIP": 1, "FAIL": 2, "ERROR": 3}
    out = {}
    for res in doc.results:
        m = PROGRAM_TITLE.match(res.name)
        if not m or (side is not None and m.group(3) != side):
            continue
        prog = m.group(2)
        checks, status = out.get(prog, ({}, None))
        mine = _ktap_status(res, program=True)
        if status is None or rank[mine] > rank[status]:
            status = mine
        if res.child is not None:
            for r in res.child.results:
                if not r.name:
                    raise ktap.LineError(
                        res.child, r.line, f"test line without a name: "
                        f"{r.text!r} (a KCIDB test path needs one)")
                new = (_ktap_status(r), r.reason or None)
                old = checks.get(r.name)
                if old is None or rank[new[0]] > rank[old[0]]:
                    checks[r.name] = new
        out[prog] = (checks, status)
    return out


def _ktap_status(res, program=False):
    if res.directive == "SKIP":
        return "SKIP"
    if res.ok:
        return "PASS"
    # A program killed by the runner (timeout, crash) did not judge the
    # kernel: that is an error of the run, not a failed check.
    if program and ("TIMEOUT" in res.comment or
                    re.search(r"exit=(?!1\b)\d+", res.comment)):
        return "ERROR"
    return "ERROR" if res.directive == "error" else "FAIL"
