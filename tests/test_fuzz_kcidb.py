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
import tempfile
import unittest

import fuzz_props
from fuzz_props import HERE, MISSING, SCRIPTS, fuzz_settings, given, st

import kcidb as kcidb_cli  # noqa: E402

RECORDED = os.path.join(HERE, "data", "kcidb", "host")


def programs():
    return sorted(f for f in os.listdir(RECORDED) if f.endswith(".json"))


@unittest.skipIf(MISSING, MISSING or "")
class KcidbProperties(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, "run")
        self.out = os.path.join(self.tmp.name, "kcidb.json")

    def fresh_copy(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(RECORDED, self.dir)

    def export(self):
        rc, out, err = fuzz_props.run_main(
            kcidb_cli.main, ["-o", self.out, self.dir])
        self.assertIn(rc, (0, 2), err)
        if rc == 0:
            self.assertEqual(err, "")
            with open(self.out, encoding="utf-8") as f:
                self.assertTrue(json.load(f)["tests"])
        else:
            lines = err.strip("\n").split("\n")
            self.assertEqual(len(lines), 1, err)
            self.assertTrue(lines[0].startswith("kcidb.py: "), err)
            self.assertIn(self.dir, lines[0], err)

    def load(self, name):
        with open(os.path.join(self.dir, name), encoding="utf-8") as f:
            return json.load(f)

    @fuzz_settings()
    @given(st.data())
    def test_mutated_results(self, data):
        self.fresh_copy()
        name = data.draw(st.sampled_from(programs()))
        doc = fuzz_props.mutate(data, self.load(name))
        fuzz_props.write_text(os.path.join(self.dir, name), json.dumps(doc))
        self.export()

    @fuzz_settings()
    @given(st.data())
    def test_spoiled_results(self, data):
        self.fresh_copy()
        name = data.draw(st.sampled_from(programs()))
        fuzz_props.write_text(os.path.join(self.dir, name),
                              fuzz_props.broken_json_text(
                                  data, self.load(name)))
        self.export()

    @fuzz_settings()
    @given(fuzz_props.ktap_lines())
    def test_any_run_all_ktap(self, lines):
        self.fresh_copy()
        fuzz_props.write_text(os.path.join(self.dir, "run_all.ktap"),
                              "\n".join(lines) + "\n")
        self.export()

    @fuzz_settings()
    @given(st.data())
    def test_mutated_run_all_ktap(self, data):
        """The recorded stream with lines dropped, doubled or changed."""
        self.fresh_copy()
        path = os.path.join(self.dir, "run_all.ktap")
        with open(path, encoding="utf-8") as f:
            lines = fuzz_props.mutate_lines(data, f.read().splitlines())
        fuzz_props.write_text(path, "\n".join(lines) + "\n")
        self.export()


class ClosedPipe(unittest.TestCase):
    def test_export_into_closed_pipe(self):
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
