# SPDX-License-Identifier: GPL-2.0
"""kbtools.exact and compare's icount path: rows measured under QEMU's
instruction counter are judged in instructions per operation, one boot
per side, by their class (exact, near, noisy); never against a real
clock."""

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import compare, exact, results  # noqa: E402


def compare_main(argv):
    """scripts/compare.py's main."""
    return compare.main(argv, "compare.py")


def doc(rows, mode="icount", boot="b1", test="syscall_overhead",
        arch="x86_64"):
    """One repetition; rows: (name, median in us)."""
    machine = {"arch": arch, "guest": "tcg", "clock_mode": mode}
    if mode == "icount":
        machine["icount_shift"] = 0
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.12"}, "machine": machine,
            "date": "2026-11-25T00:00:00Z", "cmdline": "./" + test,
            "boot_id": boot, "params": {},
            "rows": [{"name": n, "status": "ok", "unit": "us", "n": 100,
                      "median": v, "mean": v} for n, v in rows]}


# What A/A runs across boots showed of a null system call.
EXACT = {"class": "exact", "spread_pct": 0.0003, "boots": 8}


class Rule(unittest.TestCase):
    def test_one_instruction_reads_slower_on_an_exact_row(self):
        base = [329.0965, 329.0965]
        cand = [330.0960, 330.0965]
        self.assertEqual(exact.decide(base, cand, EXACT)[:2],
                         ("exact", "slower"))
        self.assertEqual(exact.decide(cand, base, EXACT)[:2],
                         ("exact", "faster"))

    def test_identical_repetitions_read_same(self):
        self.assertEqual(exact.decide([329.0965] * 2, [329.0965] * 2, EXACT),
                         ("exact", "same", None))

    def test_a_fraction_of_an_instruction_is_within_the_floor(self):
        cls, verdict, note = exact.decide([100.0, 100.0], [100.3, 100.3],
                                          EXACT)
        self.assertEqual((cls, verdict), ("exact", "same"))
        self.assertIn("margin", note)

    def test_a_row_no_a_a_run_has_seen_is_at_best_near(self):
        # Each side repeats itself to the instruction, but nothing shows
        # that the row repeats across boots: 0.1% of 3163 is its margin.
        self.assertEqual(exact.decide([3163.1] * 2, [3162.5] * 2)[:2],
                         ("near", "same"))
        self.assertEqual(exact.decide([3163.1] * 2, [3167.0] * 2)[:2],
                         ("near", "slower"))

    def test_taskstats_ioctl_moves_between_boots(self):
        # CI's A/A: each boot's repetitions agreed within 0.25
        # instructions, the boots did not (the row reads the accounting
        # of 200 other tasks); A/A runs now class it near.
        known = exact.calibration()["x86_64"]["taskstats:ioctl"]
        self.assertEqual(known["class"], "near")
        self.assertEqual(exact.decide([3163.105] * 2, [3162.5] * 2,
                                      known)[:2], ("near", "same"))

    def test_near_row_needs_its_spread_plus_the_floor(self):
        base = [37300.0, 37400.0]           # 0.27% spread
        self.assertEqual(exact.decide(base, [37450.0, 37500.0])[:2],
                         ("near", "same"))
        self.assertEqual(exact.decide(base, [37600.0, 37650.0])[:2],
                         ("near", "slower"))

    def test_wide_rows_are_noisy_and_left_to_statistics(self):
        self.assertEqual(exact.decide([1e5, 1.2e5], [1e5, 1.1e5])[:2],
                         ("noisy", "pending"))

    def test_a_row_that_differs_between_boots_is_never_exact(self):
        # Identical within each boot, yet A/A boots showed it move.
        same = [398.101, 398.101]
        known = {"class": "noisy", "spread_pct": 4.27}
        self.assertEqual(exact.decide(same, [415.101] * 2, known)[:2],
                         ("noisy", "pending"))
        # Twice the boots' 0.8% plus 0.1%: 17 instructions in 1000.
        near = {"class": "near", "spread_pct": 0.8}
        self.assertEqual(exact.decide([1000.0] * 2, [1016.0] * 2, near)[:2],
                         ("near", "same"))
        self.assertEqual(exact.decide([1000.0] * 2, [1018.0] * 2, near)[:2],
                         ("near", "slower"))

    def test_calibration_file(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        path = os.path.join(tmp.name, "c.json")
        # A file of one setup, as written before arm64: x86_64's.
        with open(path, "w") as f:
            json.dump({"runs": [], "rows": {"t:r": {"class": "near"}}}, f)
        self.assertEqual({"x86_64": {"t:r": {"class": "near"}}},
                         exact.calibration(path))
        with open(path, "w") as f:
            json.dump({"setups": {"aarch64": {"runs": [], "rows": {
                "t:r": {"class": "exact"}}}}}, f)
        self.assertEqual({"aarch64": {"t:r": {"class": "exact"}}},
                         exact.calibration(path))
        self.assertEqual({}, exact.calibration(path + ".missing"))
        for setup in ("x86_64", "aarch64"):
            self.assertIn("syscall_overhead:getppid",
                          exact.calibration()[setup])

    def test_classes_are_looked_up_per_setup(self):
        """One lookup, keyed by what the runs' headers say (their
        architecture): a row exact on x86_64 is unknown on a setup whose
        A/A runs have not seen it, and two setups give the worse."""
        def header(arch):
            return results.parse_doc("d", doc([], arch=arch)).header
        x86, arm = header("x86_64"), header("aarch64")
        table = {"x86_64": {"t:r": {"class": "exact", "spread_pct": 0.0,
                                    "boots": 8},
                            "t:n": {"class": "near", "spread_pct": 0.3,
                                    "boots": 8}},
                 "aarch64": {"t:n": {"class": "exact", "spread_pct": 0.0,
                                     "boots": 4}}}
        with mock.patch.object(exact, "calibration", return_value=table):
            self.assertEqual("exact", exact.known([x86, x86], "t",
                                                  "r")["class"])
            self.assertIsNone(exact.known([arm, arm], "t", "r"))
            self.assertIsNone(exact.known([x86, arm], "t", "r"))
            self.assertEqual({"class": "near", "spread_pct": 0.3,
                              "boots": 4},
                             exact.known([x86, arm], "t", "n"))
            self.assertIsNone(exact.known([header(None)], "t", "r"))
            self.assertIsNone(exact.known([], "t", "r"))

    def test_one_repetition_shows_no_spread(self):
        self.assertIn("2 per side", exact.too_few([1.0], [1.0, 1.0]))
        self.assertIsNone(exact.too_few([1.0, 1.0], [1.0, 1.0]))


class Calibration(unittest.TestCase):
    """bench/guest_modes.py classes --merge: new A/A runs add to the
    evidence of the classes file, never erase it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *names):
        return os.path.join(self.tmp.name, *names)

    def a_a(self, name, base_us, cand_us, arch="x86_64", cand_arch=None):
        """An A/A of one boot a side: getppid at these medians."""
        for side, us, boot, a in (("base", base_us, "b1", arch),
                                  ("candidate", cand_us, "b2",
                                   cand_arch or arch)):
            os.makedirs(self.path(name, side))
            results.write_json(self.path(name, side, "syscall_overhead.json"),
                               doc([("getppid", us)], boot=boot, arch=a))
        return self.path(name)

    def classes(self, *args):
        return subprocess.run(
            [sys.executable, os.path.join(HERE, "..", "bench",
                                          "guest_modes.py"), "classes",
             *args], capture_output=True, text=True)

    def test_a_row_that_moves_in_a_new_run_is_no_longer_exact(self):
        earlier = {"about": "-", "runs": ["aa4"], "rows": {
            "syscall_overhead:getppid": {"class": "exact",
                                         "spread_pct": 0.0003, "boots": 4},
            "pmqtest:latency_pair0": {"class": "exact", "spread_pct": 0.0,
                                      "boots": 4}}}
        with open(self.path("old.json"), "w") as f:
            json.dump(earlier, f)
        run = self.a_a("aa6", 3.163105, 3.156352)
        out = self.classes("--merge", self.path("old.json"), "-o",
                           self.path("new.json"), run)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("new.json")) as f:
            new = json.load(f)["setups"]["x86_64"]
        self.assertEqual(new["runs"], ["aa4", "aa6"])
        row = new["rows"]["syscall_overhead:getppid"]
        self.assertEqual((row["class"], row["boots"]), ("near", 6))
        self.assertAlmostEqual(row["spread_pct"], 0.2135, places=3)
        self.assertEqual(new["rows"]["pmqtest:latency_pair0"],
                         earlier["rows"]["pmqtest:latency_pair0"])

    def test_runs_of_another_architecture_are_a_setup_of_their_own(self):
        x86 = self.a_a("aa-x86", 0.329097, 0.329097)
        out = self.classes("-o", self.path("c.json"), x86)
        self.assertEqual(out.returncode, 0, out.stderr)
        arm = self.a_a("aa-arm", 0.457500, 0.457500, "aarch64")
        out = self.classes("--merge", self.path("c.json"), "-o",
                           self.path("c.json"), arm)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            setups = json.load(f)["setups"]
        self.assertEqual(["aarch64", "x86_64"], sorted(setups))
        self.assertEqual((["aa-arm"], ["aa-x86"]),
                         (setups["aarch64"]["runs"], setups["x86_64"]["runs"]))
        self.assertEqual("exact", setups["aarch64"]["rows"][
            "syscall_overhead:getppid"]["class"])
        # An A/A whose boots ran on two architectures is no A/A.
        mixed = self.a_a("aa-mixed", 0.3, 0.3, "x86_64", "aarch64")
        out = self.classes(mixed)
        self.assertEqual(out.returncode, 2)
        self.assertIn("not the boots of one setup", out.stderr)

    def test_a_file_that_is_not_a_classes_file_is_refused(self):
        run = self.a_a("aa", 1.0, 1.0)
        bad_row = {"runs": [], "rows": {"t:r": {"class": "exactish",
                                                 "spread_pct": 0, "boots": 2}}}
        for text in ("[1]", "{", json.dumps({"rows": {}}),
                     json.dumps(bad_row)):
            with open(self.path("bad.json"), "w") as f:
                f.write(text)
            out = self.classes("--merge", self.path("bad.json"), run)
            self.assertEqual(out.returncode, 2, text)
            self.assertIn("not a classes file", out.stderr)
            self.assertNotIn("Traceback", out.stderr)


class Wiring(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_dir(self, label, reps):
        """DIR/syscall_overhead.json from docs, merged as the A/B does."""
        d = os.path.join(self.tmp.name, label)
        os.makedirs(d)
        merged = results.merge_docs([results.parse_doc(label, r)
                                     for r in reps]) \
            if len(reps) > 1 else reps[0]
        results.write_json(os.path.join(d, "syscall_overhead.json"), merged)
        return d

    def entries(self, base, cand):
        return {e.name: e for e in compare.compare(
            results.load(base), [results.load(cand)])}

    def test_an_ab_of_one_boot_each_gives_exact_verdicts(self):
        rows = [("getppid", 0.3290965), ("getpid", 0.3070965),
                ("fork", 376.0)]
        cand = [("getppid", 0.330096), ("getpid", 0.3070965),
                ("fork", 380.0)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        c = self.run_dir("cand", [doc(cand, boot="b2"),
                                  doc([("getppid", 0.330096),
                                       ("getpid", 0.3070965),
                                       ("fork", 395.0)], boot="b2")])
        e = self.entries(b, c)
        self.assertEqual((e["getppid"].verdict, e["getppid"].row_class),
                         ("slower", "exact"))
        self.assertAlmostEqual(e["getppid"].delta, 0.9995, places=3)
        self.assertEqual(e["getppid"].unit, "insn")
        self.assertEqual(e["getpid"].verdict, "same")
        # fork spreads 3.9% on one side: noisy, and one boot is no sample.
        self.assertEqual((e["fork"].row_class, e["fork"].verdict),
                         ("noisy", "no-verdict"))
        self.assertIn("boots per side", e["fork"].note)

    def test_text_and_json_say_exact(self):
        rows = [("getppid", 0.3290965)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        c = self.run_dir("cand", [doc([("getppid", 0.330096)]),
                                  doc([("getppid", 0.330096)])])
        for fmt, want in (("text", "slower (exact)"), ("email",
                                                        "+1.000 insn")):
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(compare_main(["-f", fmt, b, c]), 0)
            self.assertIn(want, out.getvalue())
            self.assertIn("icount", out.getvalue())
        out = io.StringIO()
        with redirect_stdout(out):
            compare_main(["-f", "json", b, c])
        row = json.loads(out.getvalue())["rows"][0]
        self.assertEqual((row["clock"], row["class"], row["unit"]),
                         ("icount", "exact", "insn"))
        self.assertIn("Instructions do not show", json.loads(
            out.getvalue())["method"])

    def test_a_skipped_row_of_an_icount_run_says_icount(self):
        rep = doc([("getppid", 0.3290965)])
        rep["rows"].append({"name": "getsid", "status": "skip",
                            "reason": "not here"})
        b = self.run_dir("base", [rep, rep])
        c = self.run_dir("cand", [rep, rep])
        e = self.entries(b, c)["getsid"]
        self.assertEqual((e.verdict.value, e.clock.value),
                         ("skipped", "icount"))

    def test_icount_is_never_compared_with_a_real_clock(self):
        rows = [("getppid", 0.33)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        c = self.run_dir("cand", [doc(rows, "real"), doc(rows, "real")])
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(compare_main([b, c]), 2)
        self.assertIn("instructions cannot be compared with time",
                      err.getvalue())
        self.assertEqual(len(err.getvalue().splitlines()), 1)

    def test_repetitions_are_grouped_by_boot(self):
        d = self.run_dir("r", [doc([("fork", 1.0)], boot="x"),
                               doc([("fork", 3.0)], boot="x"),
                               doc([("fork", 10.0)], boot="y")])
        row = results.load(d).tests["syscall_overhead"].rows["fork"]
        self.assertEqual(row.boot_values(), [2.0, 10.0])
        self.assertEqual(row.values(), [1.0, 3.0, 10.0])

    def test_a_bad_clock_mode_is_an_error_naming_the_file(self):
        bad = doc([("getppid", 0.33)])
        bad["machine"]["clock_mode"] = "sundial"
        d = self.run_dir("bad", [bad])
        with self.assertRaisesRegex(results.ResultError,
                                    "bad/syscall_overhead.json: machine"):
            results.load(d)


if __name__ == "__main__":
    unittest.main()


class Labels(unittest.TestCase):
    """KCIDB and LAVA carry icount figures as instructions."""

    def test_kcidb_and_lava_say_insn(self):
        from kbtools import kcidb, lava
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        d = os.path.join(tmp.name, "run")
        os.makedirs(d)
        results.write_json(os.path.join(d, "syscall_overhead.json"),
                           results.merge_docs([
                               results.parse_doc("r1", doc([("getppid",
                                                             0.3291)])),
                               results.parse_doc("r2", doc([("getppid",
                                                             0.3291)]))]))
        run = results.load(d)
        test = run.tests["syscall_overhead"]
        row = test.rows["getppid"]
        got = lava._measured(row, 0.3291, test)
        self.assertEqual(("insn", 329.1), (got.units,
                                           round(got.measurement, 1)))
        self.assertEqual("us", lava._measured(row, 0.3291).units)
        ex = kcidb.Exporter()
        ex.add_run(run)
        tests = {t["path"]: t for t in ex.document()["tests"]}
        got = tests["kbench.syscall_overhead.getppid"]
        self.assertEqual("insn", got["number"]["unit"])
        self.assertAlmostEqual(329.1, got["number"]["value"])
        self.assertEqual({"value": 0.3291, "unit": "us"},
                         got["misc"]["virtual_time"])
        self.assertEqual("icount", got["environment"]["misc"]["clock_mode"])


class Validate(unittest.TestCase):
    def test_the_command_it_runs(self):
        from kbtools import validate
        args = validate.parse_args(["--tree", "/t", "--base", "a",
                                    "--candidate", "b", "-t",
                                    "syscall_overhead:getppid", "--json",
                                    "/o"], "validate.py")
        cmd = validate.command(args, "/img/a", "/img/b")
        self.assertEqual(["--kernel", "/img/a", "--vs-kernel", "/img/b",
                          "--icount", "-t", "syscall_overhead", "--json",
                          "/o"], cmd)
        args.real = True
        self.assertNotIn("--icount", validate.command(args, "a", "b"))
