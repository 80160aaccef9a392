# SPDX-License-Identifier: GPL-2.0
"""Property-based tests of scripts/compare.py and kbtools.results: any
JSON input gives a comparison or one line on stderr naming the file,
with exit status 2; never a traceback, never a hang. Plus the named
error cases (duplicate rows, non-finite numbers, wrong types, missing
keys, truncated files) and output into a closed pipe."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Sequence, Tuple

import fuzz_props
from fuzz_props import MISSING, SCRIPTS, example, prop, st

from kbtools import compare  # noqa: E402


def compare_main(argv: List[str]) -> int:
    """scripts/compare.py's main."""
    return compare.main(argv, "compare.py")


def valid_doc(test: str = "t", scale: float = 1.0) -> Dict[str, Any]:
    rows: List[Dict[str, Any]] = []
    for i, name in enumerate(("getpid", "getsid")):
        v = (i + 1) * scale
        rows.append({"name": name, "unit": "us", "status": "ok", "n": 100,
                     "mean": v, "median": v, "min": v * 0.9, "max": v * 2,
                     "stddev": v / 10, "rsd_pct": 10.0, "p99": v * 1.5})
    rows.append({"name": "skipped", "status": "skip", "reason": "no"})
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.18"}, "date": "2026-01-01T00:00:00Z",
            "cmdline": "./" + test, "params": {}, "rows": rows}


def one_line_error(testcase: unittest.TestCase, rc: int, err: str,
                   prog: str, paths: Sequence[str]) -> None:
    """Exit 2 with exactly one line on stderr, naming one of paths."""
    testcase.assertEqual(rc, 2, err)
    fuzz_props.assert_error(testcase, err, prog, paths)


@unittest.skipIf(MISSING, MISSING or "")
class CompareProperties(unittest.TestCase):
    def setUp(self) -> None:
        self.base, self.cand = fuzz_props.temp_paths(self, "base.json",
                                                     "cand.json")

    def compare(self, *extra: str) -> Tuple[int, str, str]:
        return fuzz_props.run_main(compare_main,
                                   list(extra) + [self.base, self.cand])

    def check(self, rc: int, out: str, err: str) -> None:
        if rc == 0:
            self.assertTrue(out)
            self.assertEqual(err, "")
        else:
            one_line_error(self, rc, err, "compare.py",
                           (self.base, self.cand))

    # Issue 22: a kernel member of another type and a row name that is
    # an object ended in a traceback, two rows of one name were compared
    # silently. Later: an error quoting a value with a line break spanned
    # two lines, a unit mismatch did not name the file; a lone surrogate
    # ("\ud800") in a name ended in a traceback (issue 34's audit).
    @example(edit=("replace", ("kernel",), ["x"]), fmt="text")
    @example(edit=("replace", ("rows", 0, "name"), {"a": 1}), fmt="text")
    @example(edit=("duplicate", ("rows", 0), None), fmt="json")
    @example(edit=("replace", ("rows", 1, "status"), "a\nb"), fmt="text")
    @example(edit=("replace", ("rows", 0, "unit"), "ms"), fmt="email")
    @example(edit=("replace", ("rows", 0, "name"), "\ud800"), fmt="text")
    @prop(edit=fuzz_props.edits(valid_doc()),
          fmt=st.sampled_from(["text", "email", "json"]))
    def test_mutated_document(self, edit: fuzz_props.Edit, fmt: str) -> None:
        fuzz_props.write_text(self.base, json.dumps(
            fuzz_props.edited(valid_doc(), edit)))
        fuzz_props.write_text(self.cand, json.dumps(valid_doc(scale=1.1)))
        self.check(*self.compare("-f", fmt))

    # Issue 22: NaN and numbers too large for a double.
    @example(breakage=("nonfinite", 265, "NaN"))
    @example(breakage=("nonfinite", 231, "1e999"))
    @prop(breakage=fuzz_props.breakages(valid_doc(scale=1.1)))
    def test_spoiled_text(self, breakage: fuzz_props.Breakage) -> None:
        fuzz_props.write_text(self.base, json.dumps(valid_doc()))
        fuzz_props.write_text(self.cand, fuzz_props.broken_json_text(
            valid_doc(scale=1.1), breakage))
        self.check(*self.compare())

    @prop(value=fuzz_props.json_values())
    def test_any_json(self, value: Any) -> None:
        fuzz_props.write_text(self.base, json.dumps(value))
        fuzz_props.write_text(self.cand, json.dumps(valid_doc()))
        self.check(*self.compare())


def write(path: str, doc: object) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))


@unittest.skipIf(MISSING, MISSING or "")
class NamedErrors(unittest.TestCase):
    """Each kind of bad input is an error naming the file and the row."""

    def setUp(self) -> None:
        self.path, self.good = fuzz_props.temp_paths(self, "t.json",
                                                     "good.json")
        write(self.good, valid_doc())

    def error(self, doc: object) -> str:
        write(self.path, doc)
        rc, out, err = fuzz_props.run_main(compare_main,
                                           [self.good, self.path])
        one_line_error(self, rc, err, "compare.py", (self.path,))
        return err

    def test_duplicate_row(self) -> None:
        doc = valid_doc()
        doc["rows"].append(dict(doc["rows"][0]))
        self.assertIn("'getpid'", self.error(doc))

    def test_non_finite(self) -> None:
        text = json.dumps(valid_doc()).replace('"median": 2.0',
                                               '"median": 1e999')
        self.assertIn("'getsid'", self.error(text))
        for word in ("NaN", "Infinity"):
            text = json.dumps(valid_doc()).replace('"mean": 2.0',
                                                   f'"mean": {word}')
            self.error(text)
        # Too large for a double: parses as inf, outside the figures too.
        doc = valid_doc()
        doc["machine"] = {"cpus": 1}
        doc["rows"][0]["extra"] = [2]
        for old, new in (('"cpus": 1', '"cpus": 1e999'),
                         ('"extra": [2]', '"extra": [2e999]')):
            self.assertIn("non-finite" if "cpus" in old else "'getpid'",
                          self.error(json.dumps(doc).replace(old, new)))

    def test_wrong_types(self) -> None:
        for key, value in (("median", "2"), ("unit", 3), ("status", 1),
                           ("median", True), ("name", ["x"]),
                           ("repetitions", {"a": 1}), ("n", [1])):
            doc = valid_doc()
            doc["rows"][1][key] = value
            err = self.error(doc)
            if key != "name":
                self.assertIn("'getsid'", err)

    def test_repetition_of_wrong_type(self) -> None:
        doc = valid_doc()
        doc["rows"][0]["repetitions"] = [{"median": "fast"}]
        self.assertIn("'getpid'", self.error(doc))

    def test_missing_keys(self) -> None:
        for key in ("rows", "test"):
            doc = valid_doc()
            del doc[key]
            self.error(doc)
        doc = valid_doc()
        del doc["rows"][1]["name"]
        self.assertIn("row 2", self.error(doc))

    def test_nested_too_deeply(self) -> None:
        # json's decoder recurses: a RecursionError, not a traceback.
        self.assertIn("nested too deeply",
                      self.error("[" * 100000 + "]" * 100000))
        # Deep enough for the readers' own walks (800 levels: a
        # RecursionError after json read it), or deeper than kbench's
        # documents ever are (33).
        for depth in (800, 33):
            doc = json.dumps(valid_doc())[:-1] + ', "x": ' + \
                "[" * depth + "]" * depth + "}"
            self.assertIn("nested too deeply", self.error(doc))
        value = valid_doc()
        value["x"] = json.loads("[" * 31 + "]" * 31)
        write(self.path, value)
        self.assertEqual(fuzz_props.run_main(
            compare_main, [self.good, self.path])[0], 0)

    def test_lone_surrogate(self) -> None:
        # JSON's escape "\ud800" is no character: nothing could print it.
        doc = valid_doc()
        doc["rows"][1]["name"] = "\ud800"
        self.assertIn("lone surrogate", self.error(doc))
        doc = valid_doc()
        doc["kernel"]["\udfff"] = 1
        self.assertIn("lone surrogate", self.error(doc))

    def test_truncated(self) -> None:
        self.error(json.dumps(valid_doc())[:-7])
        self.error("")


class ClosedPipe(unittest.TestCase):
    """`compare.py A B | head -1` ends quietly (no hypothesis needed)."""

    def test_compare_into_closed_pipe(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for side, scale in (("a", 1.0), ("b", 1.2)):
                d = os.path.join(tmp, side)
                os.makedirs(d)
                for test in ("t%d" % i for i in range(40)):
                    write(os.path.join(d, test + ".json"),
                          valid_doc(test, scale))
                paths.append(d)
            p = subprocess.run(
                [sys.executable, os.path.join(SCRIPTS, "compare.py")] + paths
, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, check=False, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            r, w = os.pipe()
            os.close(r)
            p = subprocess.run(
                [sys.executable, os.path.join(SCRIPTS, "compare.py")] + paths,
                stdout=w, stderr=subprocess.PIPE, check=False, text=True)
            os.close(w)
            self.assertNotIn("Traceback", p.stderr)
            self.assertEqual(p.stderr, "")
            self.assertIn(p.returncode, (0, 1, 120, -13), p.stderr)


if __name__ == "__main__":
    unittest.main()
