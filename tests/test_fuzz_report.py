# SPDX-License-Identifier: GPL-2.0
"""Property-based tests of scripts/report.py (the HTML report): a
recorded results file mutated, spoiled or replaced, in a run of its own
or as one side of a comparison, gives a page or an error on stderr that
names the input (and the usage hint), with exit status 2; never a
traceback or a hang. '-o -' into a closed pipe ends quietly. Drawing a
page takes matplotlib a second or two: these properties try a tenth of
KBENCH_FUZZ_EXAMPLES (at least 10)."""

import os
import shutil
import subprocess
import sys
import unittest
from typing import Any, Tuple

import fuzz_props
from fuzz_props import HERE, MISSING, SCRIPTS, prop, st

from kbtools import plots, report  # noqa: E402

RECORDED = os.path.join(HERE, "data", "report", "run")
# One small program's results: a page of it draws quickly.
PROGRAM = "syscall_overhead.json"
PROG = "report.py"
NO_MATPLOTLIB = None if plots.available() else \
    "matplotlib is missing (Debian: python3-matplotlib)"
DOC = fuzz_props.load_json(os.path.join(RECORDED, PROGRAM))


@unittest.skipIf(MISSING or NO_MATPLOTLIB, MISSING or NO_MATPLOTLIB or "")
class ReportProperties(unittest.TestCase):
    def setUp(self) -> None:
        self.base, self.cand, self.page = fuzz_props.temp_paths(
            self, "base", "cand", "page.html")

    def fresh(self, d: str) -> str:
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(os.path.join(RECORDED, PROGRAM), d)
        return os.path.join(d, PROGRAM)

    def report(self, *runs: str) -> None:
        if os.path.exists(self.page):
            os.unlink(self.page)
        rc, out, err = fuzz_props.run_main(report.main,
                                           ["-o", self.page] + list(runs),
                                           PROG)
        self.assertIn(rc, (0, 2), err)
        self.assertEqual(out, "")
        if rc == 0:
            self.assertEqual(err.strip("\n"), f"{PROG}: wrote {self.page}")
            with open(self.page, encoding="utf-8") as f:
                self.assertIn("</html>", f.read())
            return
        self.assertFalse(os.path.exists(self.page), err)
        fuzz_props.assert_error(self, err, PROG, runs, then=[
            f"Try '{PROG} -h' for more information."])

    @prop(share=10, deadline_s=60, spoiling=fuzz_props.spoilings(DOC))
    def test_one_run(self, spoiling: Tuple[str, Any]) -> None:
        fuzz_props.write_text(self.fresh(self.base),
                              fuzz_props.spoiled_text(DOC, spoiling))
        self.report(self.base)

    @prop(share=10, deadline_s=60, side=st.sampled_from(["base", "cand"]),
          spoiling=fuzz_props.spoilings(DOC))
    def test_comparison(self, side: str, spoiling: Tuple[str, Any]) -> None:
        path = self.fresh(self.base if side == "base" else self.cand)
        self.fresh(self.cand if side == "base" else self.base)
        fuzz_props.write_text(path, fuzz_props.spoiled_text(DOC, spoiling))
        self.report(self.base, self.cand)


@unittest.skipIf(NO_MATPLOTLIB, NO_MATPLOTLIB or "")
class ClosedPipe(unittest.TestCase):
    def test_page_into_closed_pipe(self) -> None:
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "report.py"),
                            "-o", "-", RECORDED], stdout=w,
                           stderr=subprocess.PIPE, check=False, text=True)
        os.close(w)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(p.returncode, 0)


if __name__ == "__main__":
    unittest.main()
