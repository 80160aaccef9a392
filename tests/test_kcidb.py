# SPDX-License-Identifier: GPL-2.0
"""Tests of the KCIDB exporter (scripts/kcidb.py, kbtools/kcidb.py).

The documents are validated with the kcidb-io package itself. Without it
these tests are skipped, saying so; tests/run.sh's kcidb step installs it
into a venv and sets KBENCH_REQUIRE_KCIDB_IO=1, which makes its absence
an error rather than a skip.
"""

import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from typing import Any, Callable, Dict, Set, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import kcidb, ktap, results  # noqa: E402

try:
    import kcidb_io
except ImportError:
    kcidb_io = None

DATA = os.path.join(HERE, "data", "kcidb")
HOST = os.path.join(DATA, "host")
HOST2 = os.path.join(DATA, "host2")
AB = os.path.join(DATA, "ab")


def need_kcidb_io(test: unittest.TestCase) -> None:
    if kcidb_io is None:
        if os.environ.get("KBENCH_REQUIRE_KCIDB_IO") == "1":
            raise AssertionError("the kcidb-io package is not importable")
        test.skipTest("kcidb-io is not installed (pip install kcidb-io)")


def row_names(path: str) -> Set[str]:
    """Every program and row name of a recorded run (JSON and KTAP)."""
    names: Set[str] = set()
    run = results.load(path)
    for t in run.tests.values():
        names.add(t.name)
        names.update(t.rows)
    with open(os.path.join(path, "run_all.ktap"), encoding="utf-8") as f:
        doc = ktap.parse(f.read())
    for prog, (checks, _) in kcidb.program_checks(doc).items():
        names.add(prog)
        names.update(checks)
    return names


class PathMapping(unittest.TestCase):
    def test_every_recorded_name_round_trips(self) -> None:
        names = row_names(HOST) | row_names(HOST2)
        self.assertGreater(len(names), 50)
        for name in names:
            comp = kcidb.encode_component(name)
            self.assertRegex(comp, r"^[a-zA-Z0-9_-]+$")
            self.assertEqual(kcidb.decode_component(comp), name)

    def test_awkward_names(self) -> None:
        for name in ("fork@1.70MB", "a-b", "a--b", "-", "x_y", "é µs",
                     "a.b.c", "-2E", "100%"):
            comp = kcidb.encode_component(name)
            self.assertEqual(kcidb.decode_component(comp), name, comp)
        self.assertEqual(kcidb.encode_component("fork@1.70MB"),
                         "fork-401-2E70MB")

    def test_distinct_names_stay_distinct(self) -> None:
        a = kcidb.encode_component("a.b")
        b = kcidb.encode_component("a-2Eb")
        self.assertNotEqual(a, b)

    def test_path_round_trip(self) -> None:
        p = kcidb.test_path("proc_create", "clone@1GiB")
        self.assertEqual(kcidb.parse_path(p), ("proc_create", "clone@1GiB"))
        self.assertEqual(kcidb.parse_path("kbench.taskstats"),
                         ("taskstats", None))

    def test_bad_components_rejected(self) -> None:
        for bad in ("a.b", "a-", "a-G0", "a-2", "", "a b"):
            with self.assertRaises(kcidb.ExportError, msg=bad):
                kcidb.decode_component(bad)
        with self.assertRaises(kcidb.ExportError):
            kcidb.encode_component("")
        with self.assertRaises(kcidb.ExportError):
            kcidb.parse_path("ltp.sem01")


class Export(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def export(self, *args: str) -> Tuple[int, Any, str]:
        out = os.path.join(self.tmp, "out.json")
        err = io.StringIO()
        old = sys.stderr
        sys.stderr = err
        try:
            rc = kcidb.main(["-o", out, *args], "kcidb.py")
        finally:
            sys.stderr = old
        doc = None
        if rc == 0:
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        return rc, doc, err.getvalue()

    def test_recorded_runs_validate(self) -> None:
        need_kcidb_io(self)
        rc, doc, err = self.export("--validate", HOST, HOST2)
        self.assertEqual(rc, 0, err)
        kcidb_io.schema.LATEST.validate_exactly(doc)
        self.assertEqual(doc["version"]["major"], 5)

    def test_statuses_and_numbers(self) -> None:
        rc, doc, err = self.export(HOST)
        self.assertEqual(rc, 0, err)
        tests = {t["path"]: t for t in doc["tests"]}
        getsid = tests["kbench.syscall_overhead.getsid"]
        self.assertEqual(getsid["status"], "DONE")
        self.assertEqual(getsid["number"]["unit"], "us")
        run = results.load(HOST)
        want = run.tests["syscall_overhead"].rows["getsid"].values()[0]
        self.assertEqual(getsid["number"]["value"], want)
        skipped = tests["kbench.taskstats.ioctl"]
        self.assertEqual(skipped["status"], "SKIP")
        self.assertTrue(skipped["comment"])
        # A check known only from the KTAP stream is exported too.
        self.assertEqual(tests["kbench.taskstats.family_resolves"]["status"], "PASS")
        for t in doc["tests"]:
            self.assertIn(t["status"], ("PASS", "FAIL", "SKIP", "DONE",
                                        "ERROR"))
            if t["status"] == "DONE":
                self.assertIn("number", t)

    def test_same_results_same_ids(self) -> None:
        _, a, _ = self.export(HOST)
        _, b, _ = self.export(HOST)
        self.assertEqual([t["id"] for t in a["tests"]],
                         [t["id"] for t in b["tests"]])

    def test_different_runs_different_ids(self) -> None:
        _, a, _ = self.export(HOST)
        _, b, _ = self.export(HOST2)
        shared = {t["id"] for t in a["tests"]} & {t["id"] for t in b["tests"]}
        self.assertEqual(shared, set())

    def test_origin(self) -> None:
        rc, doc, _ = self.export("--origin", "my_ci", HOST)
        self.assertEqual(rc, 0)
        self.assertTrue(all(t["id"].startswith("my_ci:")
                            for t in doc["tests"]))
        rc, _, err = self.export("--origin", "My-CI", HOST)
        self.assertEqual(rc, 2)
        self.assertIn("origin", err)

    def test_git_commit(self) -> None:
        need_kcidb_io(self)
        rc, doc, err = self.export("--validate", "--git-commit", "a" * 40,
                                   "--tree-name", "mainline", HOST)
        self.assertEqual(rc, 0, err)
        self.assertEqual(doc["checkouts"][0]["git_commit_hash"], "a" * 40)
        rc, _, err = self.export("--git-commit", "abc", HOST)
        self.assertEqual(rc, 2)
        self.assertIn("40 hex", err)

    def copy_with(self, mutate: Callable[[Dict[str, Any]], None]) -> str:
        """A copy of HOST's syscall_overhead results, mutated."""
        d = os.path.join(self.tmp, "mut")
        os.makedirs(d)
        with open(os.path.join(HOST, "syscall_overhead.json"),
                  encoding="utf-8") as f:
            doc = json.load(f)
        mutate(doc)
        with open(os.path.join(d, "syscall_overhead.json"), "w",
                  encoding="utf-8") as f:
            json.dump(doc, f)
        return d

    def test_row_without_unit_fails(self) -> None:
        def drop_unit(doc: Dict[str, Any]) -> None:
            del doc["rows"][0]["unit"]
        rc, _, err = self.export(self.copy_with(drop_unit))
        self.assertEqual(rc, 2)
        self.assertIn("no unit", err)

    def test_duplicate_id_fails(self) -> None:
        rc, _, err = self.export(HOST, HOST)
        self.assertEqual(rc, 2)
        self.assertIn("duplicate", err)

    def test_illegal_path_fails(self) -> None:
        ex = kcidb.Exporter()
        co = ex.checkout_of(results.Header(
            kernel=results.Kernel(release="6.1")))
        build = ex.build_of(results.Header(
            machine=results.Machine(arch="x86_64")), co)
        with self.assertRaises(kcidb.ExportError):
            ex.add_test(build, "k", "kbench.fork@1", kcidb.KStatus.PASS)

    def test_invalid_document_never_written(self) -> None:
        need_kcidb_io(self)
        out = os.path.join(self.tmp, "out.json")
        orig = kcidb.Exporter.document

        def broken(exporter: kcidb.Exporter) -> Dict[str, Any]:
            doc = orig(exporter)
            doc["tests"][0]["status"] = "MAYBE"
            return doc
        with mock.patch.object(kcidb.Exporter, "document", broken):
            rc = kcidb.main(["--validate", "-o", out, HOST], "kcidb.py")
        self.assertEqual(rc, 2)
        self.assertFalse(os.path.exists(out))

    def test_missing_and_foreign_input(self) -> None:
        rc, _, err = self.export(os.path.join(self.tmp, "nope"))
        self.assertEqual(rc, 2)
        self.assertIn("no such", err)
        bad = os.path.join(self.tmp, "bad")
        os.makedirs(bad)
        with open(os.path.join(bad, "x.json"), "w", encoding="utf-8") as f:
            f.write("[1, 2]")
        rc, _, err = self.export(bad)
        self.assertEqual(rc, 2)

    def test_ab_directory_exports_both_sides(self) -> None:
        rc, doc, err = self.export(AB)
        self.assertEqual(rc, 0, err)
        sides = {t["environment"]["comment"].rsplit(" ", 1)[-1]
                 for t in doc["tests"]}
        self.assertEqual(sides, {"base", "candidate"})
        getpid = [t for t in doc["tests"]
                  if t["path"] == "kbench.syscall_overhead.getpid"]
        self.assertEqual(len(getpid), 2)
        self.assertNotEqual(getpid[0]["id"], getpid[1]["id"])
        self.assertTrue(all(t["misc"]["repetitions"] == 2 for t in getpid))

    def test_ab_recorded_validates(self) -> None:
        need_kcidb_io(self)
        rc, doc, err = self.export("--validate", AB)
        self.assertEqual(rc, 0, err)

    def test_crashed_program_is_error(self) -> None:
        d = os.path.join(self.tmp, "crash")
        shutil.copytree(HOST, d)
        path = os.path.join(d, "run_all.ktap")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = text.replace("ok 1 selftests: kbench/memcg_ks: memcg_ks",
                            "not ok 1 selftests: kbench/memcg_ks: memcg_ks"
                            " # exit=139")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        rc, doc, err = self.export(d)
        self.assertEqual(rc, 0, err)
        tests = {t["path"]: t for t in doc["tests"]}
        self.assertEqual(tests["kbench.memcg_ks"]["status"], "ERROR")

    def test_check_without_a_name(self) -> None:
        """Issue 34: a test line without a name ('    ok 0 ') in
        run_all.ktap, of a run or of an A/B run's side: one line naming
        the file and the line, exit status 2."""
        # Line 3 is the issue's: the nested stream begins with it.
        for run, line in ((HOST, 3), (AB, 10)):
            d = os.path.join(self.tmp, os.path.basename(run))
            shutil.copytree(run, d)
            path = os.path.join(d, "run_all.ktap")
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
            lines[line - 1] = "    ok 0 "
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            rc, _, err = self.export(d)
            self.assertEqual(rc, 2)
            self.assertEqual(err, f"kcidb.py: {path}: line {line}: test "
                                  f"line without a name: 'ok 0 ' (a KCIDB "
                                  f"test path needs one)\n")


if __name__ == "__main__":
    unittest.main()
