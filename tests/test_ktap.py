# SPDX-License-Identifier: GPL-2.0
"""Tests of scripts/kbtools/ktap.py and scripts/ktap_check.py: each
malformed stream must be rejected, each well-formed one accepted."""

import io
import os
import sys
import tempfile
import unittest
from typing import Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.path.insert(0, SCRIPTS)

from kbtools import ktap  # noqa: E402

STRICT = ("--no-fail", "--skip-reasons")


def nest(text: str, prefix: str = "    ") -> str:
    return "".join(prefix + line + "\n" for line in text.splitlines())


def run_check(text: str, *opts: str) -> Tuple[int, str]:
    """ktap_check.py's exit status and stderr for TEXT."""
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    err, old = io.StringIO(), sys.stderr
    sys.stderr = err
    try:
        return ktap.main(list(opts) + [path], "ktap_check.py"), err.getvalue()
    finally:
        sys.stderr = old
        os.unlink(path)


class Accepted(unittest.TestCase):
    """Streams the collection writes: all must pass the strict check."""

    def assertClean(self, text: str, *opts: str) -> None:
        rc, err = run_check(text, *opts)
        self.assertEqual(rc, 0, err)

    def test_program_with_totals(self) -> None:
        self.assertClean("TAP version 13\n1..4\n# a: unit=us n=1\nok 1 a\n"
                         "ok 2 b # SKIP no CAP_NET_ADMIN\n"
                         "ok 3 c # XFAIL known\n"
                         "ok 4 d #  all fine\n"
                         "# Totals: pass:2 fail:0 xfail:1 xpass:0 skip:1 "
                         "error:0\n", *STRICT)

    def test_runner_stream_both_nestings(self) -> None:
        inner = ("TAP version 13\n1..2\nok 1 x\nok 2 y # SKIP no knob\n"
                 "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0\n")
        for prefix in ("    ", "# "):
            text = ("TAP version 13\n1..1\n# selftests: kbench/d: p\n" +
                    nest(inner, prefix) + "ok 1 selftests: kbench/d: p\n"
                    "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n")
            self.assertClean(text, *STRICT)

    def test_bare_skip_explained_by_nested_plan(self) -> None:
        text = ("TAP version 13\n1..1\n" +
                nest("TAP version 13\n1..0 # SKIP no /proc/taskstats\n") +
                "ok 1 selftests: kbench/d: p # SKIP\n")
        self.assertClean(text, *STRICT)

    def test_parse_tree(self) -> None:
        doc = ktap.parse("TAP version 13\n1..1\n" +
                         nest("KTAP version 1\n1..1\nnot ok 1 y # error\n") +
                         "not ok 1 p # exit=1\n")
        self.assertEqual(doc.plan, 1)
        self.assertEqual(len(doc.children), 1)
        self.assertIs(doc.results[0].child, doc.children[0])
        self.assertEqual(doc.children[0].results[0].kind, "error")
        self.assertEqual(doc.results[0].kind, "fail")
        self.assertEqual(ktap.check(doc), [])


class Rejected(unittest.TestCase):
    """One malformed stream each (issue 13): the check must fail."""

    def assertRejected(self, text: str, message: str, *opts: str) -> None:
        rc, err = run_check(text, *(opts or STRICT))
        self.assertEqual(rc, 1, f"accepted: {text!r}")
        self.assertIn(message, err)

    def test_totals_with_the_wrong_split(self) -> None:
        self.assertRejected("TAP version 13\n1..2\nok 1 a\nok 2 b\n"
                            "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:2 "
                            "error:0\n", "totals say pass:0, the results hold 2")

    def test_totals_with_the_wrong_sum(self) -> None:
        self.assertRejected("TAP version 13\n1..1\nok 1 a\n"
                            "# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 "
                            "error:0\n", "totals say pass:2")

    def test_malformed_totals(self) -> None:
        self.assertRejected("TAP version 13\n1..1\nok 1 a\n"
                            "# Totals: pass:1 fail:0\n", "malformed totals")

    def test_not_ok_nested_by_two_spaces(self) -> None:
        self.assertRejected("TAP version 13\n1..1\n  not ok 2 inner\nok 1 p\n",
                            "malformed result line: '  not ok 2 inner'")

    def test_not_ok_nested_by_a_tab(self) -> None:
        self.assertRejected("TAP version 13\n1..1\n\tnot ok 2 inner\nok 1 p\n",
                            "malformed result line: '\\tnot ok 2 inner'")

    def test_number_with_trailing_garbage(self) -> None:
        self.assertRejected("TAP version 13\n1..2\nok 1 a\nnot ok 2x\n",
                            "malformed result line: 'not ok 2x'")

    def test_result_in_the_wrong_case(self) -> None:
        self.assertRejected("TAP version 13\n1..2\nok 1 a\nNot OK 2\n",
                            "malformed result line: 'Not OK 2'")

    def test_malformed_lines_rejected_without_options(self) -> None:
        for line in ("not ok 2x", "Not OK 2", "  not ok 2", "\tnot ok 2",
                     "ok2", "OK 2 b"):
            rc, _ = run_check(f"TAP version 13\n1..2\nok 1 a\n{line}\n")
            self.assertEqual(rc, 1, line)

    def test_bail_out(self) -> None:
        self.assertRejected("TAP version 13\n1..2\nok 1 a\nBail out! disk\n"
                            "ok 2 b\n", "bail out")

    def test_bail_out_nested(self) -> None:
        self.assertRejected("TAP version 13\n1..1\n" +
                            nest("TAP version 13\n1..1\nBail out!\nok 1 x\n") +
                            "ok 1 p\n", "top/1: bail out")

    def test_nested_without_version_line(self) -> None:
        self.assertRejected("TAP version 13\n1..1\n" + nest("1..1\nok 1 x\n") +
                            "ok 1 p\n",
                            "top/1: output before the version line")

    def test_nested_not_closed_by_a_result(self) -> None:
        self.assertRejected("TAP version 13\n1..1\n" +
                            nest("TAP version 13\n1..1\nok 1 x\n") +
                            "stray text\nok 1 p\n", "not closed by a result")
        self.assertRejected("TAP version 13\n1..0\n" +
                            nest("TAP version 13\n1..1\nok 1 x\n"),
                            "not closed by a result")

    def test_nested_plan_mismatch(self) -> None:
        self.assertRejected("TAP version 13\n1..1\n" +
                            nest("TAP version 13\n1..2\nok 1 x\n") +
                            "ok 1 p\n", "top/1: plan says 2, 1 results")

    def test_plan_mismatch_and_numbering(self) -> None:
        rc, err = run_check("TAP version 13\n1..3\nok 1 a\nok 3 b\n")
        self.assertEqual(rc, 1)
        self.assertIn("numbered 3, expected 2", err)
        self.assertIn("plan says 3, 2 results", err)

    def test_no_plan_and_no_version(self) -> None:
        self.assertRejected("ok 1 a\n", "output before the version line")
        self.assertRejected("TAP version 13\nok 1 a\n", "no plan")

    def test_plan_after_results(self) -> None:
        self.assertRejected("TAP version 13\nok 1 a\n1..1\n",
                            "plan after results")

    def test_not_ok_at_any_level(self) -> None:
        text = ("TAP version 13\n1..1\n" +
                nest("TAP version 13\n1..1\nnot ok 1 y\n", "# ") +
                "ok 1 p\n")
        self.assertEqual(run_check(text)[0], 0)
        self.assertRejected(text, "top/1: not ok: y", "--no-fail")

    def test_skip_without_reason(self) -> None:
        self.assertRejected("TAP version 13\n1..1\nok 1 b # SKIP\n",
                            "SKIP without a reason", "--skip-reasons")
        self.assertRejected("TAP version 13\n1..0 # SKIP\n",
                            "SKIP without a reason", "--skip-reasons")
        # A nested document that does not say why does not explain it.
        self.assertRejected("TAP version 13\n1..1\n" +
                            nest("TAP version 13\n1..1\nok 1 x\n") +
                            "ok 1 p # SKIP\n", "SKIP without a reason",
                            "--skip-reasons")


class Where(unittest.TestCase):
    """Every message about a line of a file names the file and the line
    (issue 34), from one place: Document.where() and ktap.LineError."""

    TEXT = "TAP version 13\n1..2\n" + nest(
        "TAP version 13\n1..1\nok 1 x\n") + "ok 1 p\nnot ok 3x\n"

    def test_file_and_line(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.ktap")
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.TEXT)
            doc = ktap.read(path)
            self.assertEqual(ktap.check(doc), [
                f"{path}: line 7: top: malformed result line: 'not ok 3x'",
                f"{path}: line 1: top: plan says 2, 1 results"])
            child = doc.results[0].child
            assert child is not None
            self.assertEqual(str(ktap.LineError(child, 5, "why")),
                             f"{path}: line 5: why")
            self.assertEqual(child.results[0].text, "ok 1 x")
            err = io.StringIO()
            old, sys.stderr = sys.stderr, err
            try:
                self.assertEqual(ktap.main([path], "ktap_check.py"), 1)
            finally:
                sys.stderr = old
            for line in err.getvalue().splitlines():
                self.assertTrue(line.startswith(
                    f"ktap_check.py: {path}: line "), line)

    def test_a_string_has_lines_only(self) -> None:
        doc = ktap.parse(self.TEXT)
        self.assertEqual(ktap.check(doc)[0],
                         "line 7: top: malformed result line: 'not ok 3x'")
        self.assertEqual(str(ktap.LineError(doc, 2, "why")), "line 2: why")


if __name__ == "__main__":
    unittest.main()
