# SPDX-License-Identifier: GPL-2.0
"""kbtools.exact and compare's icount path: rows measured under QEMU's
instruction counter are judged in instructions per operation, one boot
per side, by their class (exact, near, noisy); never against a real
clock."""

import dataclasses
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
import unittest.mock
from contextlib import redirect_stderr, redirect_stdout
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import calibration, compare, exact, policy, results  # noqa: E402,E501
import needs  # noqa: E402
import support  # noqa: E402


def compare_main(argv: List[str]) -> int:
    """scripts/compare.py's main."""
    return compare.main(argv, "compare.py")


def doc(rows: Sequence[Tuple[str, float]], mode: str = "icount",
        boot: str = "b1", test: str = "syscall_overhead",
        arch: str = "x86_64", settings: Optional[str] = None,
        release: str = "6.12") -> Dict[str, Any]:
    """One repetition; rows: (name, median in us); settings: the exact
    guest's (machine.icount_settings), none by default; release: the
    kernel's uname -r."""
    machine: Dict[str, Any] = {"arch": arch, "guest": "tcg", "clock_mode": mode}
    if mode == "icount":
        machine["icount_shift"] = 0
    if settings is not None:
        machine["icount_settings"] = settings
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": release}, "machine": machine,
            "date": "2026-11-25T00:00:00Z", "cmdline": "./" + test,
            "boot_id": boot, "params": {},
            "rows": [{"name": n, "status": "ok", "unit": "us", "n": 100,
                      "median": v, "mean": v} for n, v in rows]}


def known(boot_range: float, median: float = 329.0965, boots: int = 2,
          range_: Optional[float] = None) -> exact.Known:
    """What boots of the base's kernel showed of a row."""
    rng = boot_range if range_ is None else range_
    return exact.Known(exact.class_of(boot_range, median, rng), boot_range,
                       rng, median, boots)


# A null system call that repeated itself to the instruction in A/A boots.
EXACT = known(0.001)


class Rule(unittest.TestCase):
    def test_one_instruction_reads_slower_on_an_exact_row(self) -> None:
        base = [329.0965, 329.0965]
        cand = [330.0960, 330.0965]
        self.assertEqual(exact.decide(base, cand, EXACT)[:2],
                         ("exact", "slower"))
        self.assertEqual(exact.decide(cand, base, EXACT)[:2],
                         ("exact", "faster"))
        self.assertEqual(exact.decide(base, cand, EXACT).margin, 0.5)

    def test_identical_repetitions_read_same(self) -> None:
        self.assertEqual(exact.decide([329.0965] * 2, [329.0965] * 2, EXACT),
                         ("exact", "same", None, 0.5))

    def test_a_fraction_of_an_instruction_is_within_the_floor(self) -> None:
        d = exact.decide([100.0, 100.0], [100.3, 100.3], known(0.0, 100.0))
        self.assertEqual((d.cls, d.verdict), ("exact", "same"))
        self.assertIn("margin of 0.500", d.note or "")

    def test_a_row_no_calibration_has_seen_is_left_to_the_boot_rule(self) -> None:
        # Each side repeats itself to the instruction, but nothing shows
        # that the row repeats across boots of this kernel.
        self.assertEqual(exact.decide([3163.1] * 2, [3167.0] * 2, None)[:2],
                         ("exact", "pending"))

    def test_the_margin_is_twice_the_boots_range(self) -> None:
        # 3 instructions apart over the base's boots at the same place in
        # the run: 6 is not a change, 7 is.
        row = known(3.0, 1000.0)
        self.assertEqual(row.cls, "near")
        self.assertEqual(exact.decide([1e3, 1e3 + 2], [1e3 + 6, 1e3 + 8],
                                      row)[:2], ("near", "same"))
        self.assertEqual(exact.decide([1e3, 1e3 + 2], [1e3 + 7.1, 1e3 + 9],
                                      row)[:2], ("near", "slower"))

    def test_a_row_that_is_not_exact_takes_a_share_of_itself(self) -> None:
        # fork, 30 instructions apart in two boots: two boots agree by
        # chance; 0.5% of 400,000 is its margin.
        fork = known(30.0, 400000.0)
        self.assertEqual(fork.margin(), 2000.0)
        self.assertEqual(exact.decide([4e5] * 2, [4e5 + 1999] * 2,
                                      fork)[1], "same")
        self.assertEqual(exact.decide([4e5] * 2, [4e5 + 2001] * 2,
                                      fork)[1], "slower")

    def test_repetitions_are_paired_by_their_place_in_the_run(self) -> None:
        # getpgid of the caller's pid: the second run of the program has
        # a pid one IDR level up (17 instructions more), in every boot.
        idr = known(0.0, 398.1, range_=17.0)
        base, cand = [398.1, 415.1], [399.1, 416.1]
        self.assertEqual(exact.decide(base, cand, idr)[:2],
                         ("exact", "slower"))
        # Unpaired (other repetition counts), the whole range counts.
        self.assertEqual(exact.decide(base, cand + [416.1], idr)[:2],
                         ("exact", "same"))

    def test_a_wide_calibrated_row_is_flagged_beyond_its_margin(self) -> None:
        # Debian 6.12's clone: x0.626 against a base whose boots spread
        # 3.2% (2100 of 66700 instructions): 4200 is the margin.
        clone = known(2100.0, 66700.0)
        self.assertEqual(clone.cls, "noisy")
        self.assertEqual(exact.decide([66684.0] * 2, [42479.0] * 2,
                                      clone)[:2], ("noisy", "faster"))
        self.assertEqual(exact.decide([66684.0] * 2, [63000.0] * 2,
                                      clone)[:2], ("noisy", "same"))

    def test_classes_from_boots(self) -> None:
        self.assertEqual(exact.class_of(0.001, 329.0), "exact")
        # 0.2 instructions of 329: 600 ppm, not exact.
        self.assertEqual(exact.class_of(0.2, 329.0), "near")
        # 10 ppm of fork is 4 instructions: exact, with a margin of 8.
        self.assertEqual(exact.class_of(4.0, 400000.0), "exact")
        self.assertEqual(known(4.0, 400000.0).margin(), 8.0)
        self.assertEqual(exact.class_of(4.1, 400000.0), "near")
        self.assertEqual(exact.class_of(2100.0, 66700.0), "noisy")

    def test_known_of_boots(self) -> None:
        k = exact.known_of([[398.1, 415.1], [398.1, 415.1], [398.1, 415.2]])
        assert k is not None
        self.assertEqual((k.boots, round(k.boot_range, 3), round(k.range, 3)),
                         (3, 0.1, 17.1))
        self.assertIsNone(exact.known_of([[398.1, 415.1]]))
        again = exact.Known.from_json(k.to_json())
        self.assertEqual((again.cls, again.boots), (k.cls, k.boots))
        with self.assertRaises(ValueError):
            exact.Known.from_json(dict(k.to_json(), **{"class": "exactish"}))

    def test_the_same_boots_class_the_row_from_its_repetitions(self) -> None:
        self.assertEqual(exact.within_boot([329.0965] * 2,
                                           [330.0965] * 2)[:2],
                         ("exact", "slower"))
        base = [37300.0, 37400.0]           # 0.27% spread
        self.assertEqual(exact.within_boot(base, [37450.0, 37500.0])[:2],
                         ("near", "same"))
        self.assertEqual(exact.within_boot(base, [37600.0, 37650.0])[:2],
                         ("near", "slower"))
        self.assertEqual(exact.within_boot([1e5, 1.2e5], [1e5, 1.1e5])[:2],
                         ("noisy", "pending"))

    def test_prior_file(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        path = os.path.join(tmp.name, "c.json")
        # A file of one setup, as written before arm64: x86_64's.
        with open(path, "w") as f:
            json.dump({"runs": [], "aa": {"false": 0, "trials": 9,
                                          "boots": 4, "what": "w"},
                       "rows": {"t:r": {"class": "near"}}}, f)
        self.assertEqual({"t:r": {"class": "near"}}, exact.load_classes(
            path)["setups"]["x86_64"]["rows"])
        self.assertIn("0 false verdicts in 9", exact.aa_error("x86_64", path))
        with open(path, "w") as f:
            json.dump({"setups": {"aarch64": {"runs": [], "rows": {
                "t:r": {"class": "exact"}}}}}, f)
        self.assertEqual(["aarch64"],
                         list(exact.load_classes(path)["setups"]))
        self.assertIn("no A/A record", exact.aa_error("aarch64", path))
        with self.assertRaises(OSError):
            exact.load_classes(path + ".missing")
        for setup in ("x86_64", "aarch64"):
            self.assertIn("syscall_overhead:getppid",
                          exact.load_classes()["setups"][setup]["rows"])
        self.assertIn("A/A runs on x86_64: ", exact.aa_error(
            kernel="6.12.117-kbench-patched #1-eaecb5114214 SMP "
                   "PREEMPT_DYNAMIC 1970-01-01 00:00:00 UTC"))
        self.assertIn("A/A runs on x86_64, for a kernel its prior never "
                      "saw (unnamed): ", exact.aa_error())

    def test_one_lookup_of_the_base_kernels_calibration(self) -> None:
        """exact.known: the row of the calibration of the base's kernel;
        none without one, and none for runs counted in two setups (their
        architectures), whatever the calibration holds."""
        def header(arch: str) -> results.Header:
            return results.parse_doc("d", doc([], arch=arch)).header
        x86, arm = header("x86_64"), header("aarch64")
        cal = {"t:r": EXACT}
        self.assertIs(EXACT, exact.known([x86, x86], "t", "r", cal))
        self.assertIs(EXACT, exact.known([arm, arm], "t", "r", cal))
        self.assertIsNone(exact.known([x86, x86], "t", "n", cal))
        self.assertIsNone(exact.known([x86, x86], "t", "r", None))
        self.assertIsNone(exact.known([x86, arm], "t", "r", cal))

    def test_one_repetition_shows_no_spread(self) -> None:
        self.assertIn("2 per side", exact.too_few([1.0], [1.0, 1.0]) or "")
        self.assertIsNone(exact.too_few([1.0, 1.0], [1.0, 1.0]))


class Calibration(unittest.TestCase):
    """bench/guest_modes.py classes --merge: new A/A runs add to the
    evidence of the classes file, never erase it."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *names: str) -> str:
        return os.path.join(self.tmp.name, *names)

    def a_a(self, name: str, base_us: float, cand_us: float,
            arch: str = "x86_64", cand_arch: Optional[str] = None,
            settings: Optional[str] = None, release: str = "6.12",
            cand_release: Optional[str] = None,
            row: str = "getppid") -> str:
        """An A/A of one boot a side: getppid (or row) at these
        medians."""
        for side, us, boot, a, r in (
                ("base", base_us, f"{name}-b1", arch, release),
                ("candidate", cand_us, f"{name}-b2", cand_arch or arch,
                 cand_release or release)):
            os.makedirs(self.path(name, side))
            results.write_json(self.path(name, side, "syscall_overhead.json"),
                               doc([(row, us)], boot=boot, arch=a,
                                   settings=settings, release=r))
        return self.path(name)

    def classes(self, *args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run(
            [sys.executable, os.path.join(HERE, "..", "bench",
                                          "guest_modes.py"), "classes",
             *args], capture_output=True, text=True)

    def test_a_row_that_moves_in_a_new_run_is_no_longer_exact(self) -> None:
        earlier: Dict[str, Any] = {"about": "-", "runs": ["aa4"],
                   "aa": {"false": 1, "trials": 40, "boots": 4}, "rows": {
            "syscall_overhead:getppid": known(0.001).to_json(),
            "pmqtest:latency_pair0": known(0.0, 5903.5, 4).to_json()}}
        with open(self.path("old.json"), "w") as f:
            json.dump(earlier, f)
        run = self.a_a("aa6", 3.163105, 3.156352)
        out = self.classes("--merge", self.path("old.json"), "-o",
                           self.path("new.json"), run)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("new.json")) as f:
            new = json.load(f)["setups"]["x86_64"]
        self.assertEqual(new["runs"], ["aa4", "aa6"])
        # Two boots more; too few for an A/A trial of their own.
        self.assertEqual({k: new["aa"][k] for k in ("false", "trials",
                                                    "boots")},
                         {"false": 1, "trials": 40, "boots": 6})
        row = new["rows"]["syscall_overhead:getppid"]
        self.assertEqual((row["class"], row["boots"]), ("near", 4))
        # The new run's row is ten times the earlier one's: its range,
        # 6.753 of 3,159.7 instructions, is carried over as that share of
        # the earlier median (0.21%), the share the prior bounds by.
        self.assertAlmostEqual(row["boot_range_insn"],
                               6.753 * 329.0965 / 3159.7285, places=3)
        self.assertEqual(new["rows"]["pmqtest:latency_pair0"],
                         earlier["rows"]["pmqtest:latency_pair0"])

    def test_a_build_made_again_and_rows_measured_anew(self) -> None:
        """--same-build keeps a build's boots under the name a build of
        the same source now has; --anew-rows lets the runs alone give a
        kernel's rows whose program changed."""
        moved = self.a_a("aa-61-1", 0.3290, 0.3291, release="6.1")
        other = self.a_a("aa-612", 0.6600, 0.6534, release="6.12")
        out = self.classes("-o", self.path("c.json"), moved, other)
        self.assertEqual(out.returncode, 0, out.stderr)
        again = self.a_a("aa-61s", 0.3290, 0.3290, release="6.1-s")
        out = self.classes("--merge", self.path("c.json"), "-o",
                           self.path("d.json"), "--same-build", "6.1=6.1-s",
                           again)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("d.json")) as f:
            setup = json.load(f)["setups"]["x86_64"]
        self.assertEqual(setup["kernels"], {"6.1-s": 4, "6.12": 2})
        self.assertNotIn("6.1", setup["kernel_rows"])
        own = setup["kernel_rows"]["6.1-s"]["syscall_overhead:getppid"]
        # The build's earlier boots saw the row move: so does the prior.
        self.assertEqual((own["boots"], own["class"]), (4, "near"))
        self.assertEqual(setup["rows"]["syscall_overhead:getppid"][
            "kernels"], 2)
        steady = self.a_a("aa-61s2", 0.3290, 0.3290, release="6.1-s")
        out = self.classes("--merge", self.path("d.json"), "-o",
                           self.path("e.json"), "--anew-rows",
                           "syscall_overhead:getpp*", steady)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("e.json")) as f:
            setup = json.load(f)["setups"]["x86_64"]
        own = setup["kernel_rows"]["6.1-s"]["syscall_overhead:getppid"]
        self.assertEqual((own["boots"], own["class"]), (2, "exact"))
        self.assertEqual(setup["kernel_rows"]["6.12"][
            "syscall_overhead:getppid"]["class"], "noisy")
        exact.forget_prior()
        self.assertIsNone(exact.prior_saw_move(
            "x86_64", "syscall_overhead:getppid", self.path("e.json"),
            kernel="6.1-s"))
        for args, said in (
                (("--same-build", "5.10=x"), "the prior holds no build "
                 "'5.10'"),
                (("--same-build", "6.1-s=6.12"), "holds '6.12' already"),
                (("--same-build", "6.1-s"), "OLD=NEW")):
            out = self.classes("--merge", self.path("e.json"), "-o",
                               self.path("f.json"), *args, steady)
            self.assertEqual(2, out.returncode, args)
            self.assertIn(said, out.stderr)
        out = self.classes("--anew-rows", "x", steady)
        self.assertEqual(2, out.returncode)
        self.assertIn("--anew-rows: with --merge FILE", out.stderr)

    def test_a_prior_keeps_the_worst_of_each_row_over_kernels(self) -> None:
        # Two A/A runs of one kernel taken as one run (comma separated)
        # and one of another, whose getppid is twice the size and moves
        # by 1% of it where the first's moves by 0.3%.
        one = ",".join([self.a_a("aa-61-1", 0.3290, 0.3291, release="6.1"),
                        self.a_a("aa-61-2", 0.3300, 0.3290, release="6.1")])
        two = self.a_a("aa-612", 0.6600, 0.6534, release="6.12")
        out = self.classes("-o", self.path("c.json"), one, two)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            setup = json.load(f)["setups"]["x86_64"]
        self.assertEqual(setup["runs"], ["aa-61-1,aa-61-2", "aa-612"])
        self.assertEqual(setup["kernels"], {"6.1": 4, "6.12": 2})
        self.assertEqual(setup["aa"]["boots"], 6)
        self.assertTrue(setup["aa"]["what"].startswith(
            "6 boots of 2 kernels, each run of one kernel"))
        row = setup["rows"]["syscall_overhead:getppid"]
        self.assertEqual((row["boots"], row["kernels"]), (6, 2))
        # The first kernel's four boots spread over 1 instruction of 329
        # (0.30%): the second's 6.6 of 657 (1.0%) is the worse, carried
        # over as 1.0% of the first's row.
        self.assertAlmostEqual(row["boot_range_insn"] / row["median_insn"],
                               6.6 / 656.7, places=5)
        self.assertEqual(row["class"], "noisy")
        # What compare's note says of it.
        seen = exact.prior_saw_move("x86_64", "syscall_overhead:getppid",
                                    self.path("c.json"))
        self.assertIsNotNone(seen)
        self.assertIn("the x86_64 prior saw it move over 6 boots of 2 "
                      "kernels", seen.why if seen else "")
        # Each kernel's own rows beside them: a base of a kernel the
        # prior saw is bounded by its own boots (6.1's moved 0.30%), a
        # kernel it never saw by the worst of them (1.0%).
        own = setup["kernel_rows"]["6.1"]["syscall_overhead:getppid"]
        self.assertEqual((own["boots"], own["class"]), (4, "near"))
        seen = exact.prior_saw_move("x86_64", "syscall_overhead:getppid",
                                    self.path("c.json"), kernel="6.1")
        self.assertIsNotNone(seen)
        assert seen is not None
        self.assertIn("the x86_64 prior's 4 boots of this kernel (6.1) saw "
                      "it move", seen.why)
        self.assertAlmostEqual(seen.share, 0.001 / 0.3290, places=4)
        unseen = exact.prior_saw_move("x86_64", "syscall_overhead:getppid",
                                      self.path("c.json"), kernel="7.0")
        assert unseen is not None
        self.assertAlmostEqual(unseen.share, 6.6 / 656.7, places=4)
        # A mode of a kernel it never saw is at best near, even where
        # none of its kernels saw that mode move.
        self.assertIsNotNone(exact.prior_saw_move(
            "x86_64", exact.mode_key("syscall_overhead:getpid"),
            self.path("c.json"), kernel="7.0"))
        self.assertIsNone(exact.prior_saw_move(
            "x86_64", "syscall_overhead:getpid", self.path("c.json"),
            kernel="7.0"))
        # Its error for such a kernel: each of its kernels judged with a
        # prior of the others (two trials a boot ring of each kernel).
        self.assertEqual(setup["aa_unseen"]["boots"], 6)
        self.assertIn("for a kernel its prior never saw (7.0)",
                      exact.aa_error("x86_64", self.path("c.json"),
                                     kernel="7.0"))
        self.assertNotIn("never saw", exact.aa_error(
            "x86_64", self.path("c.json"), kernel="6.1"))
        # Another kernel's run adds one to the kernels of each row it
        # ran; another run of a kernel the prior holds adds none.
        for run, kernels in ((self.a_a("aa-61-3", 0.3290, 0.3290,
                                       release="6.1"), 2),
                             (self.a_a("aa-tk", 0.3290, 0.3290,
                                       release="6.12-kbench"), 3)):
            out = self.classes("--merge", self.path("c.json"), "-o",
                               self.path("c.json"), run)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(self.path("c.json")) as f:
                setup = json.load(f)["setups"]["x86_64"]
            self.assertEqual(setup["rows"]["syscall_overhead:getppid"][
                "kernels"], kernels)
        self.assertEqual(setup["kernels"], {"6.1": 6, "6.12": 2,
                                            "6.12-kbench": 2})
        # Each run added is judged as of a kernel the prior never saw
        # too, its trials added to the earlier ones'.
        self.assertEqual(setup["aa_unseen"]["boots"], 10)
        self.assertTrue(setup["aa_unseen"]["what"].startswith(
            "10 boots of 3 kernels, each kernel's runs judged as of a "
            "kernel the prior never saw"), setup["aa_unseen"]["what"])
        # Its boots of 6.12-kbench read getppid alike: a calibration of
        # that kernel is not bounded, however far the others moved it.
        exact.forget_prior()
        self.assertIsNone(exact.prior_saw_move(
            "x86_64", "syscall_overhead:getppid", self.path("c.json"),
            kernel="6.12-kbench"))
        # A run whose boots ran two kernels is no run of one kernel.
        mixed = self.a_a("aa-mixed", 0.3290, 0.3290, release="6.1",
                         cand_release="6.12")
        out = self.classes(mixed)
        self.assertEqual(out.returncode, 2)
        self.assertIn("not the boots of one kernel (6.1, 6.12)", out.stderr)
        out = self.classes(one + ",nowhere")
        self.assertEqual(out.returncode, 2)
        self.assertIn("nowhere: no such directory", out.stderr)

    def test_runs_of_another_architecture_are_a_setup_of_their_own(self) -> None:
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

    def test_a_prior_records_its_settle_and_keeps_to_it(self) -> None:
        run = self.a_a("aa-old", 0.329097, 0.329097, settings="settle=1")
        out = self.classes("-o", self.path("c.json"), run)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            self.assertEqual(json.load(f)["setups"]["x86_64"]["settle"], "1")
        new = self.a_a("aa-new", 0.329097, 0.329097,
                       settings="settle=sync,sched_fifo")
        out = self.classes("--merge", self.path("c.json"), new)
        self.assertEqual(out.returncode, 2)
        self.assertIn("its boots settled with settle=sync,sched_fifo, the "
                      "x86_64 prior's with settle=1", out.stderr)

    def test_a_changed_guest_makes_its_setup_anew_and_keeps_the_others(
            self) -> None:
        # arm64's prior made again under a new sched: x86_64's setup
        # stays as it was to the byte (another change may be making it
        # anew too), arm64's is the new runs' alone.
        x86 = self.a_a("aa-x86", 32.9097, 32.9125, settings="settle=1",
                       row="clone")
        arm = self.a_a("aa-arm", 45.75, 45.75, "aarch64", settings="settle=1",
                       row="clone")
        out = self.classes("-o", self.path("c.json"), x86, arm)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            before = json.load(f)["setups"]
        new = self.a_a("aa-arm-fifo", 45.65, 45.65, "aarch64",
                       settings="settle=1; sched=fifo1+2other", row="clone")
        out = self.classes("--merge", self.path("c.json"), new)
        self.assertEqual(out.returncode, 2)
        self.assertIn("class aarch64 anew (--anew)", out.stderr)
        out = self.classes("--anew", new)
        self.assertEqual(out.returncode, 2)
        self.assertIn("--anew: with --merge FILE", out.stderr)
        out = self.classes("--merge", self.path("c.json"), "--anew", "-o",
                           self.path("c.json"), new)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            after = json.load(f)["setups"]
        self.assertEqual(after["x86_64"], before["x86_64"])
        self.assertIn("what", after["x86_64"]["aa"])
        arm64 = after["aarch64"]
        self.assertEqual((arm64["runs"], arm64["sched"], arm64["aa"]["boots"]),
                         (["aa-arm-fifo"], "fifo1+2other", 2))
        self.assertEqual(arm64["rows"]["syscall_overhead:clone"][
            "median_insn"], 45650.0)
        # Runs that time no process creation (getppid alone here: the
        # sched changes nothing of them) add to a prior of any sched.
        old = self.a_a("aa-arm-getppid", 0.4575, 0.4575, "aarch64",
                       settings="settle=1")
        out = self.classes("--merge", self.path("c.json"), "-o",
                           self.path("c.json"), old)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            arm64 = json.load(f)["setups"]["aarch64"]
        self.assertEqual((arm64["runs"], arm64["sched"]),
                         (["aa-arm-fifo", "aa-arm-getppid"], "fifo1+2other"))
        self.assertIn("syscall_overhead:getppid", arm64["rows"])

    def test_the_exact_table(self) -> None:
        # Five boots: getppid to the instruction in each, fork 2
        # instructions apart in one of them; clone's median 500
        # instructions apart from boot to boot, its mode (held by 45% of
        # the samples) the same in each, and vfork's mode steady in four
        # boots of five.
        for k in range(1, 6):
            os.makedirs(self.path("boots", str(k)))
            rep = doc([("getppid", 0.3290965),
                       ("fork", 376.0 + (0.002 if k == 3 else 0)),
                       ("clone", 40.0 + k * 0.5), ("vfork", 43.0 + k)],
                      boot=f"b{k}")
            rep = with_mode(rep, "clone", 46.903, 0.45)
            rep = with_mode(rep, "vfork", 42.57, 0.2 if k == 2 else 0.6)
            results.write_json(
                self.path("boots", str(k), "syscall_overhead.json"), rep)
        out = subprocess.run(
            [sys.executable, os.path.join(HERE, "..", "bench",
                                          "guest_modes.py"), "exact",
             "after=" + self.path("boots")], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| syscall_overhead:getppid | 5 | median | exact | "
                      "0.000 | 0 | 1 insn |", out.stdout)
        self.assertIn("| syscall_overhead:fork | 5 | median | exact | "
                      "2.000 | 5.32 | 4.000 insn (10.6 ppm) |", out.stdout)
        self.assertIn("| syscall_overhead:clone | 5 | mode | exact | "
                      "0.000 | 0 | 1 insn |", out.stdout)
        self.assertIn("| syscall_overhead:vfork | 5 | median | noisy |",
                      out.stdout)
        # fork's one odd boot is the candidate once against two boots
        # that agreed to the instruction (exact to them): the one false
        # verdict, shown. vfork, judged by its median where the trial's
        # boots hold no steady mode and by its mode where they do, none.
        self.assertIn("after: 3 exact (1 by their mode), 0 near, 1 noisy; "
                      "A/A false verdicts 1 of 20 row comparisons (1 rows)",
                      out.stdout)
        # The prior made of them keeps clone's mode (steady in every
        # boot) beside its median, and no mode of vfork.
        out = self.classes("-o", self.path("c.json"), self.path("boots"))
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(self.path("c.json")) as f:
            rows = json.load(f)["setups"]["x86_64"]["rows"]
        self.assertEqual(rows["syscall_overhead:clone#mode"]["class"],
                         "exact")
        self.assertEqual(rows["syscall_overhead:clone"]["class"], "noisy")
        self.assertNotIn("syscall_overhead:vfork#mode", rows)

    def test_a_file_that_is_not_a_classes_file_is_refused(self) -> None:
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


class Cache(unittest.TestCase):
    """A calibration is kept per key (the image, QEMU, the guest's
    setup) and found again only under the same key."""

    def test_kept_and_found_by_key(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        image = os.path.join(tmp.name, "bzImage")
        with open(image, "wb") as f:
            f.write(b"kernel")
        os.environ["KBENCH_CACHE"] = tmp.name
        self.addCleanup(os.environ.pop, "KBENCH_CACHE")
        with unittest.mock.patch.object(calibration, "qemu_version",
                                        return_value="QEMU 7.2"):
            key = calibration.key_of(image, "qemu-system-x86_64", "x86_64",
                                     1, "shift=0", ["nokaslr"], "settle=1")
        self.assertIsNone(calibration.cached(key))
        cal = calibration.Calibration({"t:r": known(0.0)}, 2, "6.12")
        path = calibration.store(key, cal)
        self.assertTrue(path.startswith(tmp.name))
        got = calibration.cached(key)
        assert got is not None
        self.assertEqual((got.boots, got.release, got.rows["t:r"].cls),
                         (2, "6.12", "exact"))
        other = calibration.Key(key.image_sha256, key.qemu, key.arch, 2,
                                key.icount, key.cmdline, key.settings)
        self.assertIsNone(calibration.cached(other))
        rebuilt = dataclasses.replace(key, programs="another build")
        self.assertIsNone(calibration.cached(rebuilt))
        self.assertIn("2 boots, 1 rows (1 exact, 0 near, 0 noisy)",
                      calibration.describe(got))

    def test_a_kept_calibration_takes_the_prior_of_now(self) -> None:
        """A row kept near by the prior of its day, whose boots read it
        alike, is exact under a prior that no longer bounds it (the
        test kernel's modes once its build was in the prior); a row
        kept exact whose boots spread is not."""
        cal = calibration.Calibration({"t:r": known(0.0), "t:s": known(
            3.0)}, 3, "6.12", calibration.Key(
                "0" * 64, "QEMU 7.2", "x86_64", 1, "shift=0", "", ""))
        doc = cal.to_json()
        doc["rows"]["t:r"]["class"] = "near"
        doc["rows"]["t:s"]["class"] = "exact"
        got = calibration.Calibration.from_json(doc)
        self.assertEqual(("exact", "near"), (got.rows["t:r"].cls,
                                             got.rows["t:s"].cls))


class Wiring(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_dir(self, label: str, reps: List[Dict[str, Any]]) -> str:
        """DIR/syscall_overhead.json from docs, merged as the A/B does."""
        d = os.path.join(self.tmp.name, label)
        os.makedirs(d)
        merged = results.merge_docs([results.parse_doc(label, r)
                                     for r in reps]) \
            if len(reps) > 1 else reps[0]
        results.write_json(os.path.join(d, "syscall_overhead.json"), merged)
        return d

    def entries(self, base: str, cand: str) -> Dict[str, compare.Entry]:
        return {str(e.name): e for e in compare.compare(
            results.load(base), [results.load(cand)])}

    def test_the_base_s_own_boots_calibrate_it(self) -> None:
        rows = [("getppid", 0.3290965), ("getpid", 0.3070965),
                ("getsid", 376.0)]
        # The base booted twice (an A/A of its kernel), two runs a boot;
        # getsid 2 instructions apart between its boots (a row that the
        # x86_64 prior saw exact, as the calibration sees it).
        b = self.run_dir("base", [doc(rows), doc(rows),
                                  doc(rows[:2] + [("getsid", 376.002)],
                                      boot="b2"),
                                  doc(rows[:2] + [("getsid", 376.002)],
                                      boot="b2")])
        c = self.run_dir("cand", [doc([("getppid", 0.330096),
                                       ("getpid", 0.3070965),
                                       ("getsid", 376.0045)], boot="b3")] * 2)
        e = self.entries(b, c)
        self.assertEqual((e["getppid"].verdict, e["getppid"].row_class),
                         ("slower", "exact"))
        self.assertAlmostEqual(e["getppid"].delta or 0.0, 0.9995, places=3)
        self.assertEqual(e["getppid"].unit, "insn")
        self.assertEqual(e["getppid"].margin, 0.5)
        self.assertEqual(e["getpid"].verdict, "same")
        # getsid: +3.5 instructions against a margin of twice the 2 its
        # boots were apart (5 ppm: exact, but not to one instruction).
        self.assertEqual((e["getsid"].row_class, e["getsid"].verdict,
                          round(e["getsid"].margin or 0.0)),
                         ("exact", "same", 4))
        self.assertIn("2x the range of 2 boots of the base",
                      e["getsid"].note or "")

    def test_one_boot_of_an_uncalibrated_kernel_is_never_exact(self) -> None:
        rows = [("getppid", 0.3290965)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        c = self.run_dir("cand", [doc([("getppid", 0.330096)], boot="b2")] * 2)
        e = self.entries(b, c)["getppid"]
        self.assertEqual((e.verdict, e.margin, e.row_class),
                         ("no-verdict", None, None))
        self.assertIn("no calibration of this kernel", e.note or "")

    def test_a_calibration_file_of_the_base_s_kernel(self) -> None:
        rows = [("getppid", 0.3290965)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        c = self.run_dir("cand", [doc([("getppid", 0.330096)], boot="b2")] * 2)
        cal = calibration.Calibration(
            {"syscall_overhead:getppid": known(0.0)}, 2, "6.12")
        path = os.path.join(self.tmp.name, "cal.json")
        calibration.save(path, cal)
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(compare_main(["--calibration", path, b, c]),
                             0)
        self.assertIn("slower (exact)", out.getvalue())
        # Of another kernel: refused, naming both.
        calibration.save(path, calibration.Calibration(cal.rows, 2, "6.1"))
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(compare_main(["--calibration", path, b, c]),
                             2)
        self.assertIn("is of 6.1, the base ran 6.12", err.getvalue())
        with open(path, "w") as f:
            f.write("{}")
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(compare_main(["--calibration", path, b, c]),
                             2)
        self.assertIn("not a calibration", err.getvalue())

    def test_sides_in_the_same_boot_class_rows_by_their_repetitions(self) -> None:
        # --vs-prefix: both sides in one boot, no calibration needed.
        b = self.run_dir("base", [doc([("getppid", 0.3290965),
                                       ("fork", 376.0)])] * 2)
        c = self.run_dir("cand", [doc([("getppid", 0.330096),
                                       ("fork", 380.0)]),
                                  doc([("getppid", 0.330096),
                                       ("fork", 395.0)])])
        e = self.entries(b, c)
        self.assertEqual((e["getppid"].verdict, e["getppid"].row_class),
                         ("slower", "exact"))
        # fork spreads 3.9% on one side: noisy, and one boot is no sample.
        self.assertEqual((e["fork"].row_class, e["fork"].verdict),
                         ("noisy", "no-verdict"))
        self.assertIn("boots per side", e["fork"].note or "")

    def test_the_footnote_of_a_noisy_row_speaks_of_boots(self) -> None:
        # One boot per side is one sample of a noisy row: the footnote
        # says so, not "samples within one run" (a real clock's words).
        b = self.run_dir("base", [doc([("fork", 376.0)])] * 2)
        c = self.run_dir("cand", [doc([("fork", 380.0)]),
                                  doc([("fork", 395.0)])])
        out = io.StringIO()
        with redirect_stdout(out):
            compare_main(["-f", "text", b, c])
        self.assertIn("One boot per side cannot tell a change",
                      out.getvalue())
        self.assertNotIn("Samples within one run", out.getvalue())

    def test_text_and_json_say_exact(self) -> None:
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

    def test_a_skipped_row_of_an_icount_run_says_icount(self) -> None:
        rep = doc([("getppid", 0.3290965)])
        rep["rows"].append({"name": "getsid", "status": "skip",
                            "reason": "not here"})
        b = self.run_dir("base", [rep, rep])
        c = self.run_dir("cand", [rep, rep])
        e = self.entries(b, c)["getsid"]
        self.assertEqual((e.verdict.value, e.clock.value),
                         ("skipped", "icount"))

    def test_icount_is_never_compared_with_a_real_clock(self) -> None:
        rows = [("getppid", 0.33)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        c = self.run_dir("cand", [doc(rows, "real"), doc(rows, "real")])
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(compare_main([b, c]), 2)
        self.assertIn("instructions cannot be compared with time",
                      err.getvalue())
        self.assertEqual(len(err.getvalue().splitlines()), 1)

    def test_exact_guests_set_up_differently_are_not_compared(self) -> None:
        rows = [("getppid", 0.33)]
        b = self.run_dir("base", [doc(rows), doc(rows)])
        other = doc(rows)
        other["machine"]["icount_settings"] = "root=initramfs"
        c = self.run_dir("cand", [other, other])
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(compare_main([b, c]), 2)
        self.assertIn("with 'None', the candidate's with 'root=initramfs'",
                      err.getvalue())

    def test_repetitions_are_grouped_by_boot(self) -> None:
        d = self.run_dir("r", [doc([("fork", 1.0)], boot="x"),
                               doc([("fork", 3.0)], boot="x"),
                               doc([("fork", 10.0)], boot="y")])
        row = results.load(d).tests["syscall_overhead"].rows["fork"]
        self.assertEqual(row.boot_values(), [2.0, 10.0])
        self.assertEqual(row.boot_reps(), [[1.0, 3.0], [10.0]])
        self.assertEqual(row.values(), [1.0, 3.0, 10.0])

    def test_a_bad_clock_mode_is_an_error_naming_the_file(self) -> None:
        bad = doc([("getppid", 0.33)])
        bad["machine"]["clock_mode"] = "sundial"
        d = self.run_dir("bad", [bad])
        with self.assertRaisesRegex(results.ResultError,
                                    "bad/syscall_overhead.json: machine"):
            results.load(d)


def boots_dir(root: str, label: str,
              boots: Sequence[Sequence[Dict[str, Any]]]) -> str:
    """ROOT/LABEL/syscall_overhead.json of boots, each a list of its
    repetitions' docs, merged as an A/B merges a side's boots."""
    d = os.path.join(root, label)
    os.makedirs(d)
    reps = [results.parse_doc(label, r) for boot in boots for r in boot]
    results.write_json(os.path.join(d, "syscall_overhead.json"),
                       results.merge_docs(reps))
    return d


class Prior(unittest.TestCase):
    """A row that the prior of its own architecture saw move is at best
    near, however alike the base's three calibration boots read it (CI,
    2026-11-27: arm64 clone, identical in three boots, moved in the
    fourth); the prior of one architecture says nothing of another's
    rows, and an exact row still reads one instruction."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.prior = os.path.join(self.tmp.name, "classes.json")
        moved = known(400.0, 40000.0, 8)
        self.assertEqual(moved.cls, "near")
        with open(self.prior, "w") as f:
            json.dump({"about": "-", "setups": {
                "aarch64": {"runs": ["a"], "rows": {
                    "syscall_overhead:clone": moved.to_json(),
                    "syscall_overhead:getppid": known(0.0, 457.5,
                                                      8).to_json()}},
                # The layout before calibrations: a class and its boots.
                "x86_64": {"runs": ["x"], "rows": {
                    "syscall_overhead:fork": {"class": "noisy",
                                              "spread_pct": 5.3,
                                              "boots": 6}}}}}, f)
        patch = unittest.mock.patch.object(exact, "CLASSES_FILE", self.prior)
        patch.start()
        self.addCleanup(patch.stop)

    def a_b(self, arch: str, label: str) -> Dict[str, compare.Entry]:
        """Three base boots reading clone identically (two runs each),
        then one candidate boot whose first run moved clone by 495.5
        instructions (the CI's -247.75 of the median) and which has one
        nop more on getppid; their comparison, row by row."""
        def rep(boot: str, clone: float,
                getppid: float) -> Dict[str, Any]:
            return doc([("getppid", getppid), ("clone", clone)], boot=boot,
                       arch=arch, settings=getattr(self, "settings", None))
        base = boots_dir(self.tmp.name, f"{label}-base",
                         [[rep(f"b{k}", 40.0, 0.4575)] * 2
                          for k in (1, 2, 3)])
        first, second = getattr(self, "cand_clone", (39.5045, 40.0))
        cand = boots_dir(self.tmp.name, f"{label}-cand",
                         [[rep("c1", first, 0.4585),
                           rep("c1", second, 0.4585)]])
        return {str(e.name): e for e in compare.compare(
            results.load(base), [results.load(cand)])}

    def test_a_row_exact_in_three_boots_but_moved_in_the_prior_reads_near(
            self) -> None:
        e = self.a_b("aarch64", "arm")["clone"]
        self.assertEqual((e.row_class, e.verdict), ("near", "same"))
        self.assertAlmostEqual(e.delta or 0.0, -247.75)
        # Twice the 1% of the row the prior's boots spread over.
        self.assertEqual(e.margin, 800.0)
        self.assertIn("the arm64 prior saw it move over 8 boots, by "
                      "1.00% of the row", e.note or "")

    def test_a_boot_that_moves_both_runs_is_no_verdict_either(self) -> None:
        # Both runs of the candidate 525 instructions off three alike
        # boots (arm64 clone, 2026-11-27): beyond a near row's 0.5%, not
        # beyond twice what the prior's boots spread over.
        self.cand_clone = (39.475, 39.475)
        e = self.a_b("aarch64", "arm")["clone"]
        self.assertEqual((e.row_class, e.verdict), ("near", "same"))
        self.assertAlmostEqual(e.delta or 0.0, -525.0)

    def test_one_nop_on_an_exact_row_still_reads_slower(self) -> None:
        for arch in ("aarch64", "x86_64"):
            e = self.a_b(arch, arch)["getppid"]
            self.assertEqual((e.row_class, e.verdict, e.margin),
                             ("exact", "slower", 0.5), arch)
            self.assertAlmostEqual(e.delta or 0.0, 1.0)

    def test_the_same_boot_is_bounded_by_the_prior_too(self) -> None:
        # A seccomp A/B in one boot changed getppid alone, and fork's
        # two repetitions a side read 1,500 instructions apart, beyond
        # their own 0.23% (make check-all, icount_ab): the prior saw
        # fork move, so its margin is twice the prior's 5.3% of it.
        def rep(fork: float, getppid: float) -> Dict[str, Any]:
            return doc([("getppid", getppid), ("fork", fork)], boot="s1")
        base = boots_dir(self.tmp.name, "same-base",
                         [[rep(309.0, 0.3290965), rep(309.4, 0.3290965)]])
        cand = boots_dir(self.tmp.name, "same-cand",
                         [[rep(310.9, 0.3300965), rep(311.0, 0.3300965)]])
        e = {str(x.name): x for x in compare.compare(
            results.load(base), [results.load(cand)])}
        self.assertEqual((e["getppid"].verdict, e["getppid"].row_class,
                          e["getppid"].margin), ("slower", "exact", 0.5))
        self.assertEqual((e["fork"].verdict, e["fork"].row_class),
                         ("same", "near"))
        self.assertAlmostEqual(e["fork"].margin or 0.0,
                               2 * 0.053 * 309200.0)
        self.assertIn("the x86_64 prior saw it move over 6 boots",
                      e["fork"].note or "")
        # Another architecture's prior, or none named: the repetitions
        # alone.
        vb, vc = [309000.0, 309400.0], [310900.0, 311000.0]
        for setup in ("aarch64", None):
            self.assertEqual(exact.within_boot(
                vb, vc, setup, "syscall_overhead:fork")[:2],
                ("near", "slower"), setup)
        # A row the prior saw move is near at best, even when its
        # repetitions agree.
        self.assertEqual(exact.within_boot(
            [40000.0] * 2, [40000.0] * 2, "arm64",
            "syscall_overhead:clone")[:2], ("near", "same"))

    def test_a_prior_speaks_for_its_own_architecture_alone(self) -> None:
        # x86_64's prior never saw clone: its own calibration's class
        # stands (three boots alike: exact), whatever arm64's says.
        self.assertEqual(self.a_b("x86_64", "x86")["clone"].row_class,
                         "exact")
        row = "syscall_overhead:fork"
        self.assertEqual(exact.with_prior(EXACT, "x86_64", row).cls, "near")
        self.assertEqual(exact.with_prior(EXACT, "aarch64", row).cls,
                         "exact")
        self.assertEqual(exact.with_prior(EXACT, None, row).cls, "exact")
        self.assertEqual(exact.with_prior(EXACT, "arm64",
                                          "syscall_overhead:clone").cls,
                         "near")
        # The bound never lifts a class nor narrows a margin; the
        # legacy layout's spread stands for the prior's range.
        noisy = known(5000.0, 40000.0)
        self.assertEqual(exact.with_prior(noisy, "aarch64",
                                          "syscall_overhead:clone"), noisy)
        self.assertEqual(exact.with_prior(
            noisy, "aarch64", "syscall_overhead:clone").margin(), 10000.0)
        bounded = exact.with_prior(known(0.0, 40000.0), "aarch64",
                                   "syscall_overhead:clone")
        self.assertEqual((bounded.cls, bounded.margin()), ("near", 800.0))
        self.assertAlmostEqual(exact.with_prior(
            known(0.0, 1000.0), "x86_64", row).margin(), 106.0)

    def test_a_prior_speaks_for_boots_settled_as_its_own(self) -> None:
        # A settle that stops kernel threads inside the timed loops
        # steadies rows the prior saw move: a prior of another settle is
        # stale, and says so, rather than bounding them silently.
        with open(self.prior) as f:
            classes = json.load(f)
        classes["setups"]["aarch64"]["settle"] = "1"
        classes["setups"]["aarch64"]["aa"] = {
            "false": 7, "trials": 513, "boots": 9, "what": "arm"}
        with open(self.prior, "w") as f:
            json.dump(classes, f)
        old = "root=initramfs; settle=1; dither=<1000"
        new = "root=initramfs; settle=sync,sched_fifo; dither=<1000"
        self.settings = old
        e = self.a_b("aarch64", "arm-old")["clone"]
        self.assertEqual((e.row_class, e.margin), ("near", 800.0))
        self.settings = new
        e = self.a_b("aarch64", "arm-new")["clone"]
        self.assertEqual((e.row_class, e.margin), ("exact", 0.5))
        out = io.StringIO()
        with redirect_stdout(out):
            compare_main([os.path.join(self.tmp.name, "arm-new-base"),
                          os.path.join(self.tmp.name, "arm-new-cand")])
        text = " ".join(out.getvalue().split())
        self.assertIn("no prior bounds the classes (the arm64 prior's "
                      "boots settled otherwise (settle=1, these runs: "
                      "settle=sync,sched_fifo)", text)
        self.assertIn("no A/A record of this rule's error on aarch64: the "
                      "arm64 prior's boots settled otherwise", text)
        self.assertIn("A/A runs on aarch64: 7 false verdicts", exact.aa_error(
            "aarch64", None, "settle=1; dither=<1000"))
        # Both layouts of the settings; a plain guest settles not at all;
        # a prior that records no settle (x86_64's here) speaks for any.
        self.assertEqual(exact.settle_of("root=initramfs rtc=vm seed=1 "
                                         "settle=1 append=nokaslr"), "1")
        self.assertEqual(exact.settle_of(new), "sync,sched_fifo")
        self.assertEqual(exact.settle_of("icount_qemu=shift=0; "
                                         "icount_shift=0"), "")
        self.assertIsNotNone(exact.stale_prior("arm64", "icount_shift=0"))
        self.assertIsNone(exact.stale_prior("arm64", None))
        self.assertIsNone(exact.stale_prior("x86_64", new))
        self.assertEqual(exact.within_boot(
            [40000.0] * 2, [40000.0] * 2, "arm64", "syscall_overhead:clone",
            settings=new)[:2], ("exact", "same"))

    def test_a_prior_speaks_for_creations_scheduled_as_its_own(self) -> None:
        # Process creation at SCHED_FIFO 1 (policy.CREATION_SCHED) takes
        # the fair class's paths out of the rows the prior saw move: a
        # prior whose boots ran them at the programs' own policy (every
        # prior that records no sched) does not bound such runs.
        with open(self.prior) as f:
            classes = json.load(f)
        classes["setups"]["aarch64"]["settle"] = "1"
        with open(self.prior, "w") as f:
            json.dump(classes, f)
        self.settings = "root=initramfs; settle=1; dither=<1000"
        e = self.a_b("aarch64", "arm-other")["clone"]
        self.assertEqual((e.row_class, e.margin), ("near", 800.0))
        fifo = "root=initramfs; settle=1; dither=<1000; sched=fifo1"
        self.settings = fifo
        # A row judged by its median (no mode here) keeps the bound: its
        # median moves with the slab state at either policy.
        e = self.a_b("aarch64", "arm-fifo")["clone"]
        self.assertEqual((e.row_class, e.margin), ("near", 800.0))
        self.assertEqual(exact.sched_of(fifo), "fifo1")
        self.assertEqual(exact.sched_of(self.settings[:-13]), "")
        self.assertIn("scheduled their process creations otherwise "
                      "(sched=other, these runs: sched=fifo1)",
                      exact.stale_prior("arm64", fifo) or "")
        self.assertIsNotNone(exact.stale_prior("x86_64", fifo))
        # Its mode has no prior of that policy; other rows keep theirs.
        clone = "syscall_overhead:clone"
        self.assertIsNone(exact.stale_prior("arm64", fifo, key=clone))
        self.assertIsNotNone(exact.stale_prior(
            "arm64", fifo, key=exact.mode_key("proc_create:vfork@1.70MB")))
        self.assertIsNone(exact.stale_prior(
            "arm64", fifo, key=exact.mode_key("syscall_overhead:getppid")))
        self.assertIsNone(exact.prior_saw_move(
            "arm64", exact.mode_key(clone), None, fifo))
        seen = exact.prior_saw_move("arm64", exact.mode_key(clone), None,
                                    fifo[:-13])
        self.assertEqual(seen.share if seen else None, 0.01)
        self.assertIsNone(exact.stale_prior("arm64", fifo[:-13]))
        classes["setups"]["aarch64"]["sched"] = "fifo1"
        with open(self.prior, "w") as f:
            json.dump(classes, f)
        exact.forget_prior()
        self.assertIsNone(exact.stale_prior("arm64", fifo))

    def test_a_prior_s_own_mode_bounds_the_mode(self) -> None:
        # A prior made at SCHED_FIFO 1 keeps the modes its boots held
        # steady: vfork's steps 24 instructions between boots where its
        # median moves by thousands; clone's mode never moved. A mode
        # the prior holds is bounded by what it did, any other by what
        # the row's median did.
        fifo = "root=initramfs; settle=1; dither=<1000; sched=fifo1"
        with open(self.prior) as f:
            classes = json.load(f)
        setup = classes["setups"]["aarch64"]
        setup.update(settle="1", sched="fifo1")
        vfork = "proc_create:vfork@1.70MB"
        setup["rows"][vfork] = known(4000.0, 40000.0, 20).to_json()
        setup["rows"][exact.mode_key(vfork)] = known(
            24.0, 40000.0, 20).to_json()
        clone = "syscall_overhead:clone"
        setup["rows"][exact.mode_key(clone)] = known(
            0.0, 40000.0, 20).to_json()
        with open(self.prior, "w") as f:
            json.dump(classes, f)
        exact.forget_prior()
        self.addCleanup(exact.forget_prior)
        self.assertEqual(exact.prior_modes()["arm64"],
                         {exact.mode_key(vfork), exact.mode_key(clone)})
        seen = exact.prior_saw_move("arm64", exact.mode_key(vfork), None,
                                    fifo)
        self.assertEqual(seen.share if seen else None, 24.0 / 40000.0)
        seen = exact.prior_saw_move("arm64", vfork, None, fifo)
        self.assertEqual(seen.share if seen else None, 0.1)
        # Exact in the prior: its mode is not bounded, its median is.
        self.assertIsNone(exact.prior_saw_move(
            "arm64", exact.mode_key(clone), None, fifo))
        self.assertIsNotNone(exact.prior_saw_move("arm64", clone, None,
                                                  fifo))
        # No steady mode in the prior: the median's bound.
        getppid = exact.mode_key("syscall_overhead:getppid")
        self.assertIsNone(exact.prior_saw_move("arm64", getppid, None, fifo))
        del setup["rows"][exact.mode_key(clone)]
        with open(self.prior, "w") as f:
            json.dump(classes, f)
        exact.forget_prior()
        seen = exact.prior_saw_move("arm64", exact.mode_key(clone), None,
                                    fifo)
        self.assertEqual(seen.share if seen else None, 0.01)

    def test_the_error_stated_is_the_architecture_s_own(self) -> None:
        with open(self.prior) as f:
            classes = json.load(f)
        classes["setups"]["x86_64"]["aa"] = {
            "false": 2, "trials": 1880, "boots": 20, "what": "x86"}
        with open(self.prior, "w") as f:
            json.dump(classes, f)
        self.assertIn("A/A runs on x86_64: 2 false verdicts in 1880",
                      exact.aa_error("x86_64"))
        for arch_name in ("aarch64", "arm64", None):
            self.assertIn("no A/A record of this rule's error on",
                          exact.aa_error(arch_name))
        self.a_b("aarch64", "arm")
        out = io.StringIO()
        with redirect_stdout(out):
            compare_main([os.path.join(self.tmp.name, "arm-base"),
                          os.path.join(self.tmp.name, "arm-cand")])
        self.assertIn("no A/A record of this rule's error on aarch64",
                      " ".join(out.getvalue().split()))

    def test_a_prior_is_made_of_its_boots_alone(self) -> None:
        # Boots that read clone alike class it exact for a new prior,
        # whatever the prior in place says (bench/guest_modes.py).
        sys.path.insert(0, os.path.join(HERE, "..", "bench"))
        self.addCleanup(sys.path.remove, sys.path[0])
        import guest_modes
        self.a_b("aarch64", "arm")
        os.makedirs(os.path.join(self.tmp.name, "prior"))
        os.symlink(os.path.join(self.tmp.name, "arm-base"),
                   os.path.join(self.tmp.name, "prior", "1"))
        setup, rows = guest_modes.run_classes(
            os.path.join(self.tmp.name, "prior"))
        self.assertEqual(setup, "aarch64")
        self.assertEqual(rows["syscall_overhead:clone"].cls, "exact")

    def test_calibrations_taken_or_kept_carry_the_bound(self) -> None:
        base = os.path.join(self.tmp.name, "arm-base")
        self.a_b("aarch64", "arm")
        cal = calibration.of_dirs([base])
        self.assertEqual(cal.rows["syscall_overhead:clone"].cls, "near")
        self.assertEqual(cal.rows["syscall_overhead:getppid"].cls, "exact")
        # One kept before the bound: its key's architecture bounds it.
        key = calibration.Key("0" * 64, "QEMU 7.2", "arm64", 1, "shift=0",
                              "")
        doc_ = calibration.Calibration(
            {"syscall_overhead:clone": known(0.0, 40000.0, 3)}, 3, "6.12",
            key).to_json()
        self.assertEqual(doc_["rows"]["syscall_overhead:clone"]["class"],
                         "exact")
        kept = calibration.Calibration.from_json(doc_)
        self.assertEqual(kept.rows["syscall_overhead:clone"].cls, "near")


def with_mode(rep: Dict[str, Any], row: str, mode: float,
              share: float) -> Dict[str, Any]:
    """rep with row's most common value (us) and its share."""
    out: Dict[str, Any] = json.loads(json.dumps(rep))
    for r in out["rows"]:
        if r["name"] == row:
            r.update(mode=mode, mode_share=share)
    return out


class ModeFigure(unittest.TestCase):
    """A row timed one creation at a time whose creations fall into a
    few exact counts: its median sits between two of them and moves from
    boot to boot by 18 instructions, its most common value does not.
    Where both sides hold a steady mode it is the row's figure (a prior
    that never saw the mode move: the shipped one saw clone's)."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        support.prior_with_modes(self)

    def a_b(self, label: str, cand_share: float
            ) -> Tuple[Dict[str, exact.Known], compare.Entry]:
        def rep(boot: str, median: float, mode: float,
                share: float) -> Dict[str, Any]:
            return with_mode(doc([("clone", median)], boot=boot,
                                 settings="settle=1; sched=fifo1"),
                             "clone", mode, share)
        # Three base boots: the median 46.903 or 46.921 (18 apart), the
        # mode 46.903 in every repetition, held by 45% of the samples.
        base = boots_dir(self.tmp.name, f"{label}-base",
                         [[rep(f"b{k}", med, 46.903, 0.45)] * 2
                          for k, med in ((1, 46.903), (2, 46.921),
                                         (3, 46.903))])
        cand = boots_dir(self.tmp.name, f"{label}-cand",
                         [[rep("c1", 46.921, 46.904, cand_share)] * 2])
        cal = calibration.of_boots(results.load(base).tests)
        entries = compare.compare(results.load(base), [results.load(cand)])
        return cal, entries[0]

    def test_one_instruction_on_the_mode_reads_slower(self) -> None:
        cal, e = self.a_b("steady", 0.45)
        # The calibration keeps both: the median moved 18 instructions.
        self.assertEqual(cal["syscall_overhead:clone"].cls, "near")
        self.assertEqual(cal["syscall_overhead:clone#mode"].cls, "exact")
        self.assertEqual((e.figure, e.row_class, e.verdict, e.margin),
                         ("mode", "exact", "slower", 0.5))
        self.assertAlmostEqual(e.delta or 0.0, 1.0)
        self.assertEqual(e.to_json()["figure"], "mode")
        out = io.StringIO()
        with redirect_stdout(out):
            compare_main([os.path.join(self.tmp.name, "steady-base"),
                          os.path.join(self.tmp.name, "steady-cand")])
        self.assertIn("1 judged by their most common value: "
                      "syscall_overhead:clone", out.getvalue())

    def test_a_side_that_ran_without_fifo_is_named(self) -> None:
        # The guest asked for SCHED_FIFO 1 (sched=fifo1) and the program
        # was not allowed it (sched_fifo=0): the comparison says so.
        def rep(boot: str, fifo: int) -> Dict[str, Any]:
            out = doc([("clone", 46.9), ("getppid", 0.329)], boot=boot,
                      settings="settle=1; sched=fifo1")
            out["rows"][0]["extra"] = {"batch": 1, "sched_fifo": fifo}
            return out
        base = results.load(boots_dir(self.tmp.name, "f-base",
                                      [[rep("b1", 1)]]))
        cand = results.load(boots_dir(self.tmp.name, "f-cand",
                                      [[rep("c1", 0)]]))
        self.assertEqual(compare.warnings(base, [cand]), [
            "syscall_overhead: 'f-cand' timed clone at the program's own "
            "policy, not at SCHED_FIFO 1 as its guest asked (sched_fifo=0: "
            "not allowed): compare only like with like"])
        self.assertEqual(compare.warnings(base, [base]), [])

    def test_a_side_without_a_steady_mode_is_judged_by_its_median(
            self) -> None:
        # Below MODE_SHARE_MIN on one side: the median, as before.
        _, e = self.a_b("unsteady", exact.MODE_SHARE_MIN - 0.01)
        self.assertEqual((e.figure, e.row_class, e.verdict),
                         ("median", "near", "same"))

    def test_the_share_that_makes_a_mode_steady(self) -> None:
        row = results.Row("clone", "us")
        row.add_rep(results.Repetition.of(median=1.0, mode=1.0,
                                          mode_share=exact.MODE_SHARE_MIN))
        self.assertEqual(exact.figure_of([row]), "mode")
        self.assertEqual(exact.figure_of([row], "mean"), "mean")
        row.add_rep(results.Repetition.of(median=1.0))
        self.assertEqual(exact.figure_of([row]), "median")
        self.assertEqual(exact.figure_of([results.Row("x")]), "median")


class ShippedPrior(unittest.TestCase):
    def test_the_shipped_priors_are_one_per_architecture(self) -> None:
        moved = exact.prior_moved()
        self.assertEqual(sorted(moved), ["arm64", "x86_64"])
        for arch_name in moved:
            self.assertNotIn("syscall_overhead:getppid", moved[arch_name])

    def test_the_shipped_priors_settled_as_the_exact_guest_does(self) -> None:
        # A change to what the exact guest's programs do before a test
        # (lib/settle.c, policy's settle) needs the priors made anew
        # under it (bench/guest_modes.py run, then classes): until then
        # they would not bound its runs.
        settle = policy.icount("shift=0", steady=True).settings()["settle"]
        self.assertEqual(exact.prior_settles(),
                         {"arm64": settle, "x86_64": settle})

    def test_the_shipped_priors_scheduled_as_the_exact_guest_does(
            self) -> None:
        # The same of how the guest runs its process creations
        # (policy.CREATION_SCHED: lib/settle.c, children.c): a prior of
        # another sched does not bound their modes, nor state an A/A
        # error (exact.stale_prior).
        self.assertEqual(exact.prior_scheds(),
                         {"arm64": policy.CREATION_SCHED,
                          "x86_64": policy.CREATION_SCHED})


class Labels(unittest.TestCase):
    """KCIDB and LAVA carry icount figures as instructions."""

    def test_kcidb_and_lava_say_insn(self) -> None:
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
                                           round(got.measurement or 0.0, 1)))
        self.assertEqual("us", lava._measured(row, 0.3291).units)
        ex = kcidb.Exporter()
        ex.add_run(run)
        tests = {t["path"]: t for t in ex.document()["tests"]}
        case = tests["kbench.syscall_overhead.getppid"]
        self.assertEqual("insn", case["number"]["unit"])
        self.assertAlmostEqual(329.1, case["number"]["value"])
        self.assertEqual({"value": 0.3291, "unit": "us"},
                         case["misc"]["virtual_time"])
        self.assertEqual("icount", case["environment"]["misc"]["clock_mode"])


# -t is checked against the collection (make list).
@needs.commands("make", "gcc")
class Validate(unittest.TestCase):
    def test_the_command_it_runs(self) -> None:
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

    def test_where(self) -> None:
        """--where goes to the A/B; refused before any build where the
        A/B would refuse it after two."""
        from kbtools import cli, validate
        argv = ["--tree", "/t", "--base", "a", "--candidate", "b"]
        args = validate.parse_args([*argv, "--where"], "validate.py")
        self.assertEqual(["--kernel", "/img/a", "--vs-kernel", "/img/b",
                          "--icount", "--where"],
                         validate.command(args, "/img/a", "/img/b"))
        for extra, want in ((["--real"], "not with --real"),
                            (["-t", "pmqtest"], "add -t syscall_overhead"),
                            (["-t", "a:b:c"], "-t: 'a:b:c' is not"),
                            (["--accel", "kvm"], None)):
            with self.subTest(extra=extra):
                if want is None:
                    validate.parse_args([*argv, "--where", *extra], "v")
                    continue
                with self.assertRaisesRegex(cli.Error, want):
                    validate.parse_args([*argv, "--where", *extra], "v")


if __name__ == "__main__":
    unittest.main()
