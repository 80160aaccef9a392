# SPDX-License-Identifier: GPL-2.0
"""Property-based tests of scripts/kcidb.py and kbtools.kcidb: a
recorded run_all.sh --json directory (tests/data/kcidb/host) with one
results file mutated, spoiled or replaced, or its run_all.ktap replaced
by KTAP-like lines, exports or gives one line on stderr naming the input,
with exit status 2; never a traceback or a hang. Output into a closed
pipe ends quietly."""

import json
import os
import shutil
import subprocess
import sys
import unittest
from typing import List, Tuple

import fuzz_props
from fuzz_props import HERE, MISSING, SCRIPTS, example, prop

from kbtools import kcidb  # noqa: E402

RECORDED = os.path.join(HERE, "data", "kcidb", "host")
DOCS = fuzz_props.load_docs(RECORDED)
with open(os.path.join(RECORDED, "run_all.ktap"), encoding="utf-8") as _f:
    STREAM = _f.read().splitlines()


@unittest.skipIf(MISSING, MISSING or "")
class KcidbProperties(unittest.TestCase):
    def setUp(self) -> None:
        self.dir, self.out = fuzz_props.temp_paths(self, "run", "kcidb.json")

    def fresh_copy(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(RECORDED, self.dir)

    def export(self) -> None:
        rc, out, err = fuzz_props.run_main(
            kcidb.main, ["-o", self.out, self.dir], "kcidb.py")
        self.assertIn(rc, (0, 2), err)
        if rc == 0:
            self.assertEqual(err, "")
            with open(self.out, encoding="utf-8") as f:
                self.assertTrue(json.load(f)["tests"])
        else:
            line = fuzz_props.assert_error(self, err, "kcidb.py", [self.dir])
            # A KTAP line it cannot use is named by its line number.
            if "run_all.ktap" in line:
                self.assertRegex(line, r"run_all\.ktap: line \d+: ")

    # A row without its unit was reported without the file; a lone
    # surrogate ("\ud800") in a name ended in a traceback (issue 34's
    # audit).
    @example(case=("syscall_overhead.json", ("remove", ("rows", 0, "unit"),
                                             None)))
    @example(case=("syscall_overhead.json",
                   ("replace", ("rows", 0, "name"), "\ud800")))
    @prop(case=fuzz_props.file_and(DOCS, fuzz_props.edits))
    def test_mutated_results(self, case: Tuple[str, fuzz_props.Edit]
                             ) -> None:
        self.fresh_copy()
        name, edit = case
        fuzz_props.write_text(os.path.join(self.dir, name), json.dumps(
            fuzz_props.edited(DOCS[name], edit)))
        self.export()

    # Found by this property: 1e999 (read as infinity) outside the rows'
    # figures, in machine.cpus and in a row's "extra", reached the writer.
    @example(case=("syscall_overhead.json", ("nonfinite", 238, "1e999")))
    @example(case=("syscall_overhead.json", ("nonfinite", 891, "1e999")))
    @prop(case=fuzz_props.file_and(DOCS, fuzz_props.breakages))
    def test_spoiled_results(self, case: Tuple[str, fuzz_props.Breakage]
                             ) -> None:
        self.fresh_copy()
        name, breakage = case
        fuzz_props.write_text(os.path.join(self.dir, name),
                              fuzz_props.broken_json_text(DOCS[name],
                                                          breakage))
        self.export()

    @example(lines=["TAP version 13", "1..1",
                    "# selftests: kbench/t: t", "    TAP version 13",
                    "    1..1", "    ok 0 ", "ok 1 selftests: kbench/t: t"])
    @prop(lines=fuzz_props.ktap_lines())
    def test_any_run_all_ktap(self, lines: List[str]) -> None:
        self.fresh_copy()
        fuzz_props.write_text(os.path.join(self.dir, "run_all.ktap"),
                              "\n".join(lines) + "\n")
        self.export()

    # Issue 34: a test line without a name ("    ok 0 ") made kcidb.py
    # fail without naming the file or the line.
    @example(edits=[(2, "replace", "    ok 0 ")])
    @prop(edits=fuzz_props.line_edits(STREAM))
    def test_mutated_run_all_ktap(self, edits: List[fuzz_props.LineEdit]
                                  ) -> None:
        """The recorded stream with lines dropped, doubled or changed."""
        self.fresh_copy()
        fuzz_props.write_text(os.path.join(self.dir, "run_all.ktap"),
                              "\n".join(fuzz_props.edited_lines(
                                  STREAM, edits)) + "\n")
        self.export()


class ClosedPipe(unittest.TestCase):
    def test_export_into_closed_pipe(self) -> None:
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "kcidb.py"),
                            RECORDED], stdout=w, stderr=subprocess.PIPE,
                           check=False, text=True)
        os.close(w)
        self.assertEqual(p.stderr, "")
        self.assertEqual(p.returncode, 0)


if __name__ == "__main__":
    unittest.main()
