# SPDX-License-Identifier: GPL-2.0
"""kbench series (kbtools.series) without kernel builds or boots: the
steps and totals of a series from boots' results written here, the
check that the steps add up (and that it can fail), the class of each
row from the base's own boots, the text, summary, JSON and page; the
whole task on a small git tree with the builds and boots mocked: a
commit that does not build or boot, a cached calibration, an
interruption and --resume."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))

from kbtools import (calibration, cli, collection, kernel,  # noqa: E402
                     lava, plots, policy, proc, series, series_table, where)
from support import quiet  # noqa: E402
import needs  # noqa: E402

TEST = "syscall_overhead"
# Instructions per call of the base (us at icount shift 0: x1000).
BASE = {"getppid": 329.096, "msgsnd_rcv": 1915.010, "getpid": 307.096,
        "clone": 37300.0}


def doc(figures: Mapping[str, Sequence[float]], boot: str) -> Dict[str, Any]:
    """A boot's syscall_overhead results: each row's repetitions, in
    instructions (written in us, as the guest writes them)."""
    n = max(len(reps) for reps in figures.values())
    return {"schema": "kbench-results/1", "test": TEST,
            "kernel": {"release": "6.12"}, "date": "2026-11-27T00:00:00Z",
            "machine": {"arch": "x86_64", "guest": "tcg",
                        "clock_mode": "icount", "icount_shift": 0},
            "cmdline": "./" + TEST, "boot_id": boot, "params": {},
            "repetitions": [{"boot_id": boot}] * n,
            "rows": [{"name": name, "status": "ok", "unit": "us",
                      "repetitions": [{"median": v / 1000, "n": 100}
                                      for v in reps]}
                     for name, reps in figures.items()]}


def flat(text: str) -> str:
    """text with its lines joined: what wrapped lines say."""
    return " ".join(text.split())


def write_boot(state: str, commit: str, figures: Mapping[str, Sequence[float]]
               ) -> str:
    d = series.boots_dir(state, commit)
    k = len(series.usable_boots(state, commit)) + 1
    out = os.path.join(d, str(k))
    os.makedirs(out)
    with open(os.path.join(out, f"{TEST}.json"), "w") as f:
        json.dump(doc(figures, f"{commit[:6]}-{k}"), f)
    return out


def figures(**deltas: float) -> Dict[str, List[float]]:
    """The base's figures, two repetitions, moved by deltas; clone a
    little noisy from one repetition to the next."""
    out = {row: [v + deltas.get(row, 0.0)] * 2 for row, v in BASE.items()}
    out["clone"] = [out["clone"][0], out["clone"][0] * 1.004]
    return out


def settings(commits: Sequence[str], tree: str = "/tree"
             ) -> Dict[str, Any]:
    base = "b" * 40
    return {"tree": tree, "range": "base..tip", "base": base,
            "tip": commits[-1], "commits": list(commits),
            "subjects": {c: f"subject of {c[:4]}" for c in [base, *commits]},
            "targets": [TEST], "vm_args": []}


# The base's three boots: clone spread 0.4% within a boot and 0.8%
# across them (near); the null rows exact.
BASE_BOOTS = [figures(), figures(), figures(clone=300.0)]
# getppid +1, nothing, msgsnd +2, msgsnd -1.
STEPS = [figures(getppid=1), figures(getppid=1),
         figures(getppid=1, msgsnd_rcv=2), figures(getppid=1, msgsnd_rcv=1)]


def where_doc(n: int, row: str, deltas: Mapping[str, float]
              ) -> Dict[str, Any]:
    """A difference of kbench where's (diff_json's) of step n."""
    return {"row": f"{TEST}:{row}", "base": "a", "cand": "b", "n": n,
            "row_delta": sum(deltas.values()), "sum": sum(deltas.values()),
            "check": "sum = the row's delta", "unchanged": [],
            "atypical": {}, "candidate": f"commit {n}",
            "functions": [{"name": k, "base": 1000.0, "cand": 1000.0 + v,
                           "delta": v, "calls_base": 1.0, "calls_cand": 1.0}
                          for k, v in deltas.items()]}


class Analysis(unittest.TestCase):
    """The table of a series from its boots' results."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.state = self.tmp.name
        self.commits = [c * 40 for c in "1234"]
        self.st = settings(self.commits)

    def table(self, boots: Sequence[Mapping[str, Sequence[float]]] = STEPS,
              base: Sequence[Mapping[str, Sequence[float]]] = tuple(BASE_BOOTS),
              unbooted: str = "") -> series_table.Table:
        dirs = [write_boot(self.state, self.st["base"], b) for b in base]
        for c, b in zip(self.commits, boots):
            if c == unbooted:
                series.mark_unbooted(self.state, c, "exit 125")
            else:
                write_boot(self.state, c, b)
        cal = calibration.of_dirs(dirs)
        return series_table.table(series.points(self.st, self.state), cal)

    def test_steps_and_totals_in_instructions(self) -> None:
        t = self.table()
        ppid, msg = f"{TEST}:getppid", f"{TEST}:msgsnd_rcv"
        self.assertEqual(t.cls(ppid), "exact")
        self.assertEqual(t.cls(msg), "exact")
        steps = [round(t.cells[(n, ppid)].step or 0, 3) for n in range(1, 5)]
        self.assertEqual(steps, [1.0, 0.0, 0.0, 0.0])
        steps = [round(t.cells[(n, msg)].step or 0, 3) for n in range(1, 5)]
        self.assertEqual(steps, [0.0, 0.0, 2.0, -1.0])
        self.assertEqual([t.cells[(n, msg)].step_verdict
                          for n in range(1, 5)],
                         ["same", "same", "slower", "faster"])
        self.assertAlmostEqual(t.cells[(4, msg)].total or 0, 1.0, 6)
        self.assertEqual(t.cells[(4, msg)].total_verdict, "slower")
        self.assertEqual(t.moved(), [ppid, msg])

    def test_the_steps_add_up_and_it_is_said(self) -> None:
        t = self.table()
        checks = {c.row: c for c in series_table.checks(t)}
        self.assertTrue(all(c.adds_up for c in checks.values()))
        self.assertEqual([round(v, 6) for v in
                          checks[f"{TEST}:msgsnd_rcv"].steps],
                         [0.0, 0.0, 2.0, -1.0])
        text = flat(series_table.text(t, self.st))
        self.assertIn("msgsnd_rcv (exact): steps +0.00 +0.00 +2.00 "
                      "-1.00 = +1.00; tip - base +1.00: they add up", text)
        self.assertIn("checked: on all 3 exact rows the steps add up", text)
        # Rows that did not move are checked, not listed.
        self.assertNotIn("getpid (exact)", text)

    def test_steps_that_do_not_add_up_are_said(self) -> None:
        """Three repetitions whose differences disagree: the medians of
        the steps do not sum to the median of the total."""
        base = [{"getppid": [100.0] * 3} for _ in range(3)]
        boots = [{"getppid": [101.0, 100.0, 100.0]},
                 {"getppid": [101.0, 101.0, 100.0]}]
        self.commits = self.commits[:2]
        self.st = settings(self.commits)
        t = self.table(boots, base)
        (check,) = series_table.checks(t)
        self.assertFalse(check.adds_up)
        text = flat(series_table.text(t, self.st))
        self.assertIn("they DO NOT add up (off by -1.0000)", text)
        self.assertIn("checked: the steps of 1 of 1 exact rows do not add "
                      "up to the total (getppid)", text)

    def test_a_long_series_names_the_steps_that_show(self) -> None:
        steps = [0.0] * 20
        steps[0], steps[8], steps[12] = 1.0, 5.0004, -1.0
        ch = series_table.Check("t:getppid", steps, 5.0004, True)
        self.assertEqual("steps 1: +1.00, 9: +5.00, 13: -1.00, the other "
                         "17 +0.00", series_table.steps_text(ch))
        ch = series_table.Check("t:getppid", steps[:4], 1.0, True)
        self.assertEqual("steps +1.00 +0.00 +0.00 +0.00",
                         series_table.steps_text(ch))

    def test_a_noisy_row_says_what_it_needs(self) -> None:
        base = [figures(), figures(clone=2000.0), figures(clone=-1500.0)]
        t = self.table(base=base)
        self.assertEqual(t.cls(f"{TEST}:clone"), "noisy")
        lines = series_table.noisy_lines(t)
        self.assertEqual(len(lines), 1)
        self.assertRegex(lines[0], r"^clone \(noisy, spread .*% over 3 "
                         r"boots of the base\): a step under [0-9,.]+ insn "
                         r"reads same; less needs 4 boots per side")

    def test_unmeasured_commits_and_the_step_after_them(self) -> None:
        os.makedirs(os.path.join(self.state, "builds"))
        with open(series.build_record(self.state, self.commits[1]),
                  "w") as f:
            json.dump({"status": "failed", "log": "/x"}, f)
        series.mark_unbooted(self.state, self.commits[2], "exit 125")
        dirs = [write_boot(self.state, self.st["base"], b)
                for b in BASE_BOOTS]
        write_boot(self.state, self.commits[0], STEPS[0])
        write_boot(self.state, self.commits[3], STEPS[3])
        t = series_table.table(series.points(self.st, self.state),
                               calibration.of_dirs(dirs))
        status = [p.status for p in t.points]
        self.assertEqual(status, ["measured", "measured", "does not build",
                                  "does not boot", "measured"])
        cell = t.cells[(4, f"{TEST}:msgsnd_rcv")]
        self.assertEqual(cell.prev, 1)
        self.assertAlmostEqual(cell.step or 0, 1.0, 6)
        text = series_table.text(t, self.st)
        self.assertRegex(text, r"  2  2222.*  does not build\n")
        self.assertRegex(text, r"  3  3333.*  does not boot\n")
        self.assertIn("does not build", series_table.summary(t, self.st))

    def test_summary_fits_72_columns(self) -> None:
        self.st["subjects"][self.commits[2]] = "ipc: " + "x" * 100
        t = self.table()
        text = series_table.summary(t, self.st)
        self.assertTrue(all(len(ln) <= 72 for ln in text.splitlines()),
                        text)
        self.assertIn("3/4 ipc: xxx", text)
        self.assertRegex(text, r"4/4 subject of 4444: -1\.00 insn on "
                         r"msgsnd_rcv \(-0\.05%\)")
        self.assertIn("Series: getppid +1.00 insn (+0.30%), msgsnd_rcv "
                      "+1.00 insn (+0.05%)", text)

    def test_json_one_record_per_commit_and_row(self) -> None:
        t = self.table()
        doc_ = series_table.to_json(t, self.st)
        self.assertEqual(len(doc_["records"]), 5 * len(BASE))
        rec = next(r for r in doc_["records"] if r["n"] == 3 and
                   r["row"] == "msgsnd_rcv")
        self.assertEqual((rec["step_insn"], rec["total_insn"],
                          rec["step_verdict"], rec["class"]),
                         (2.0, 2.0, "slower", "exact"))
        self.assertTrue(all(c["adds_up"] for c in doc_["checks"]))
        json.dumps(doc_)

    def test_where_profiles_the_exact_or_near_steps_that_moved(self) -> None:
        """--where: each step that moved a row kbench where knows
        (getppid at 1, msgsnd_rcv and clone at 3 and 4: the plugin
        counts clone's children; not getpid, which no step moved), each
        commit booted once for its own step's rows and the next one's."""
        t = self.table(boots=[figures(getppid=1), figures(getppid=1),
                              figures(getppid=1, msgsnd_rcv=2, clone=900),
                              figures(getppid=1, msgsnd_rcv=1)])
        self.assertIn(f"{TEST}:clone", t.moved())
        steps = series.where_steps(t)
        self.assertEqual([(1, 0, "getppid"), (3, 2, "clone"),
                          (3, 2, "msgsnd_rcv"), (4, 3, "clone"),
                          (4, 3, "msgsnd_rcv")],
                         [(s.n, s.prev, s.row) for s in steps])
        self.assertEqual({0: ["getppid"], 1: ["getppid"],
                          2: ["clone", "msgsnd_rcv"],
                          3: ["clone", "msgsnd_rcv"],
                          4: ["clone", "msgsnd_rcv"]},
                         series.where_boots(steps))
        # ftrace cannot count clone's children: not its rows.
        self.assertEqual(["getppid", "msgsnd_rcv", "msgsnd_rcv"],
                         [s.row for s in steps
                          if where.counts(where.FTRACE, s.row)])

    def test_where_profiles_a_step_against_the_last_commit_booted(
            self) -> None:
        t = self.table(boots=[figures(getppid=1), figures(getppid=1),
                              figures(getppid=1), figures(getppid=2)],
                       unbooted=self.commits[2])
        self.assertEqual([(1, 0, "getppid"), (4, 2, "getppid")],
                         [(s.n, s.prev, s.row)
                          for s in series.where_steps(t)])

    def test_the_summary_names_a_steps_functions(self) -> None:
        t = self.table()
        moved = [where_doc(1, "getppid", {"__do_sys_getppid": 1.0}),
                 where_doc(3, "msgsnd_rcv", {f"f{k}": 1.0 - k
                                             for k in range(5)})]
        got = series_table.summary(t, self.st, moved=moved)
        self.assertIn("1/4 subject of 1111: +1.00 insn on getppid (+0.30%)\n"
                      "    in __do_sys_getppid +1.000\n", got)
        self.assertIn("msgsnd_rcv (+0.10%)\n    in f0 +1.000, f1 +0.000, "
                      "f2 -1.000, 2 more\n", got)
        self.assertTrue(all(len(line) <= 72 for line in got.splitlines()))
        self.assertNotIn("    in ", series_table.summary(t, self.st))

    def test_page_escapes_and_colours(self) -> None:
        self.st["subjects"][self.commits[0]] = "sys: <getppid> & one nop"
        page = series_table.page(self.table(), self.st)
        self.assertIn("sys: &lt;getppid&gt; &amp; one nop", page)
        self.assertNotIn("<getppid>", page)
        self.assertIn("instructions per operation, not a time", page)
        self.assertNotIn("CLOCK_MONOTONIC", page)
        self.assertIn('background:#ff', page)
        self.assertNotIn("<a href", page)
        # A cell links to its commit's A/B page; the base's line has none.
        t = self.table()
        page = series_table.page(t, self.st, {1: "s-ab/1.html"})
        self.assertIn('<a href="s-ab/1.html">+1.00</a>', page)
        self.assertEqual(page.count("<a href"), len(t.moved()))
        self.assertIn("links to its commit's full A/B page", page)


class Recorded(unittest.TestCase):
    """The real run of docs/series.md (bisect-demo --series steps on the
    test kernel: getppid +1 nop, a documentation file, ksys_msgsnd +2,
    ksys_msgsnd -1), its boots' results kept in tests/data/series/steps,
    read again with --resume: nothing built or booted."""

    def test_each_step_to_the_instruction(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            kcidb_out = os.path.join(tmp, "kcidb.json")
            state = os.path.join(tmp, "steps")
            shutil.copytree(os.path.join(HERE, "data", "series", "steps"),
                            state)
            with mock.patch.object(kernel.SeriesBuild, "build",
                                   side_effect=AssertionError("built")), \
                    mock.patch.object(series.Booter, "boot_once",
                                      side_effect=AssertionError("booted")):
                rc, out, err = quiet(series.main, [
                    "--resume", "--state", state, "--kcidb", kcidb_out,
                    "--report", os.path.join(tmp, "series.html")])
            with open(kcidb_out) as f:
                doc_ = json.load(f)
            with open(os.path.join(tmp, "series.html")) as f:
                page = f.read()
            pages = sorted(os.listdir(os.path.join(tmp, "series-ab"))) \
                if os.path.isdir(os.path.join(tmp, "series-ab")) else []
            ab = ""
            if pages:
                with open(os.path.join(tmp, "series-ab", pages[0])) as f:
                    ab = f.read()
        self.assertEqual(rc, 0, err)
        if plots.available():
            # Each cell links to its commit's A/B page against the commit
            # before it, judged by the base's calibration: getppid's nop
            # reads slower (exact) there too.
            self.assertEqual(pages, ["1-1d1d872998e7.html",
                                     "2-adc0da9ba527.html",
                                     "3-6aa810902329.html",
                                     "4-2eeb4595548c.html"])
            self.assertIn('<a href="series-ab/1-1d1d872998e7.html">+1.00'
                          '</a>', page)
            self.assertIn("slower (exact)", ab)
            self.assertIn("commit 1 against 0", ab)
        else:
            # Without matplotlib: the map alone, no page to link to.
            self.assertEqual(pages, [])
            self.assertNotIn("<a href", page)
        # KCIDB: each commit its own checkout, the base's three boots and
        # each commit's one as tests of its build.
        commits = [c["git_commit_hash"] for c in doc_["checkouts"]]
        self.assertEqual(len(set(commits)), 5)
        self.assertTrue(commits[0].startswith("37f4b1112799"))
        getppid = [t for t in doc_["tests"]
                   if t["path"] == "kbench.syscall_overhead.getppid"]
        self.assertEqual(len(getppid), 3 + 4)
        self.assertEqual(getppid[-1]["number"]["unit"], "insn")
        self.assertRegex(out, r"getppid +msgsnd_rcv\n")
        out = flat(out)
        self.assertIn("getppid (exact): steps +1.00 +0.00 +0.00 +0.00 = "
                      "+1.00; tip - base +1.00: they add up", out)
        self.assertIn("msgsnd_rcv (exact): steps +0.00 +0.00 +2.00 -1.00 "
                      "= +1.00; tip - base +1.00: they add up", out)
        self.assertIn("checked: on all 6 exact rows the steps add up", out)
        self.assertIn("3/4 ipc: ksys_msgsnd: two nops first: +2.00 insn on "
                      "msgsnd_rcv (+0.10%)", out)


class Boots(unittest.TestCase):
    """A boot's results kept, or nothing left of it."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.booter = series.Booter("kbench series", self.tmp.name, [TEST],
                                    [])
        self.commit = "c" * 40
        self.d = series.boots_dir(self.tmp.name, self.commit)

    def guest_run(self, rc: int, ktap: str, results: bool,
                  raises: Optional[BaseException] = None) -> Any:
        def run(image: str, json_dir: str, console: str, path: str) -> int:
            self.booter.why = ""
            with open(path, "w") as f:
                f.write(ktap)
            if results:
                with open(os.path.join(json_dir, f"{TEST}.json"), "w") as f:
                    json.dump(doc(figures(), "b"), f)
            if raises is not None:
                raise raises
            return rc
        return mock.patch.object(self.booter, "guest_run", run)

    def test_a_usable_boot_is_kept(self) -> None:
        with self.guest_run(0, "TAP version 13\n1..1\nok 1 x\n", True):
            got = self.booter.boot_once(self.commit, "/image")
        self.assertEqual(got, os.path.join(self.d, "1"))
        self.assertEqual(sorted(os.listdir(self.d)), ["1", "1.ktap"])

    def test_an_unusable_or_interrupted_boot_leaves_no_results(self) -> None:
        with self.guest_run(0, "garbage\n", True):
            self.assertIsNone(self.booter.boot_once(self.commit, "/image"))
        self.assertIn("KTAP", self.booter.why)
        with self.guest_run(125, "", False):
            self.assertIsNone(self.booter.boot_once(self.commit, "/image"))
        self.assertEqual(self.booter.why, "exit 125")
        with self.guest_run(0, "", True, proc.Interrupted(2)), \
                self.assertRaises(proc.Interrupted):
            self.booter.boot_once(self.commit, "/image")
        self.assertEqual(sorted(os.listdir(self.d)), ["1.ktap"])
        self.assertEqual(series.usable_boots(self.tmp.name, self.commit), [])


class FakeLab:
    """A LAVA server's API as LavaBooter calls it: jobs that end with
    HEALTH, each a log made of the lines LOG_LINES gives."""

    url = "http://lab.example"

    def __init__(self, log_lines: List[str], health: str = "Complete"):
        self.log_lines = log_lines
        self.health = health
        self.submitted: List[str] = []
        self.polled: List[str] = []
        self.cancelled: List[str] = []
        self.refuse_cancel = False
        self.asked: List[str] = []
        self.devices_: Optional[List[Dict[str, object]]] = []

    def submit(self, definition: str) -> str:
        self.submitted.append(definition)
        return str(100 + len(self.submitted))

    def job(self, jid: str) -> Dict[str, object]:
        self.polled.append(jid)
        return {"id": jid, "state": "Finished", "health": self.health}

    def log(self, jid: str) -> str:
        import yaml
        return str(yaml.safe_dump(
            [{"dt": "t", "lvl": "info", "msg": f"job {jid}"}] +
            [{"dt": "t", "lvl": "target", "msg": line + "\r"}
             for line in self.lines_of(jid)]))

    def lines_of(self, jid: str) -> List[str]:
        return self.log_lines

    def cancel(self, jid: str) -> None:
        if self.refuse_cancel:
            raise ValueError(f"LAVA API jobs/{jid}/cancel/: refused")
        self.cancelled.append(jid)

    def devices(self, device_type: str) -> List[Dict[str, object]]:
        self.asked.append(device_type)
        if self.devices_ is None:
            raise ValueError("LAVA API devices/: HTTP Error 404")
        return self.devices_

    # The count of the real API, over these devices.
    capacity = lava.Api.capacity


class LavaBoots(unittest.TestCase):
    """A boot as a LAVA job: its results and KTAP out of the job's log,
    the job's id kept for --resume."""

    def setUp(self) -> None:
        import importlib.util
        if importlib.util.find_spec("yaml") is None:
            self.skipTest("needs PyYAML (python3-yaml)")
        from kbtools import lava
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.sent = json.dumps(doc(figures(), "b"), indent=1).encode()
        self.stream = ("TAP version 13\n1..1\n# selftests: kbench/"
                       f"{TEST}: {TEST}\nok 1 selftests: kbench/{TEST}: "
                       f"{TEST}\n# Totals: pass:1 fail:0 xfail:0 xpass:0 "
                       "skip:0 error:0\n")
        self.lines = self.stream.splitlines() + lava.results_block(
            f"{TEST}.json", self.sent)
        self.commit = "c" * 40
        self.d = series.boots_dir(self.tmp.name, self.commit)

    def booter(self, lab: FakeLab) -> series.LavaBooter:
        return series.LavaBooter(
            "kbench series", self.tmp.name, [TEST], [], api=lab,  # type: ignore[arg-type]
            kernel_url=lambda image: "file:///srv/kbench/" +
            os.path.basename(image), rootfs_url="file:///srv/r.cpio",
            poll_s=0)

    def run_job(self, b: series.LavaBooter, k: int = 1) -> Optional[str]:
        """One job of boot K submitted, polled until it ends, collected."""
        job = b.submit(series.Slot(self.commit, k), "/x/c.bzImage", 1)
        info = b.finished(job)
        assert info is not None
        return b.collect(job, info)

    def test_a_job_kept_as_a_boot(self) -> None:
        lab = FakeLab(self.lines)
        got = self.run_job(self.booter(lab))
        assert got is not None
        self.assertEqual(got, os.path.join(self.d, "1"))
        with open(os.path.join(got, f"{TEST}.json"), "rb") as f:
            self.assertEqual(f.read(), self.sent)
        with open(os.path.join(self.d, "1.ktap")) as f:
            self.assertEqual(f.read(), self.stream)
        self.assertEqual(series.insn_boots([got])[f"{TEST}:getppid"],
                         [figures()["getppid"]])
        self.assertEqual(len(lab.submitted), 1)
        self.assertIn("-icount", lab.submitted[0])
        self.assertIn("file:///srv/kbench/c.bzImage", lab.submitted[0])
        self.assertIn("rdinit=/sbin/init", lab.submitted[0])
        # Collected: its record gone, nothing left to poll.
        self.assertEqual(sorted(os.listdir(self.d)),
                         ["1", "1.console.log", "1.ktap"])

    def test_a_submitted_job_is_kept_for_resume(self) -> None:
        b = self.booter(FakeLab(self.lines))
        job = b.submit(series.Slot(self.commit, 2), "/x/c", 2)
        with open(os.path.join(self.d, "2.lava.json")) as f:
            self.assertEqual(json.load(f), {"job": "101", "try": 2,
                                            "url": FakeLab.url})
        kept = b.kept_jobs(self.commit)
        self.assertEqual([(j.slot, j.jid, j.tries) for j in kept],
                         [(job.slot, "101", 2)])
        self.assertEqual(b.kept_jobs("d" * 40), [])

    def test_a_job_that_fails_or_loses_its_results(self) -> None:
        for lab, why in ((FakeLab(self.lines, "Incomplete"),
                          "job 101 ended Incomplete"),
                         (FakeLab(self.lines[:-3]),
                          "job 101: " + f"{TEST}.json: the log ends")):
            b = self.booter(lab)
            self.assertIsNone(quiet(self.run_job, b)[0])
            self.assertTrue(b.why.startswith(why), b.why)
            # No results kept, nor the job: a new one is tried.
            self.assertEqual(series.usable_boots(self.tmp.name,
                                                 self.commit), [])
            self.assertFalse(os.path.exists(
                os.path.join(self.d, "1.lava.json")))

    def test_how_many_jobs_at_once(self) -> None:
        lab = FakeLab(self.lines)
        b = self.booter(lab)
        self.assertEqual(b.lab_jobs(2), (2, "--lava-jobs"))
        lab.devices_ = [{"health": h, "state": st} for h, st in (
            ("Good", "Idle"), ("Good", "Running"), ("Unknown", "Idle"),
            ("Bad", "Idle"), ("Maintenance", "Idle"), ("Retired", "Idle"))]
        self.assertEqual(b.lab_jobs(None),
                         (3, "the lab's qemu devices taking jobs"))
        self.assertEqual(lab.asked, ["qemu"])
        lab.devices_ = [{"health": "Retired"}]
        self.assertEqual(b.lab_jobs(None)[0], series.LAVA_JOBS)
        lab.devices_ = None
        n, why = b.lab_jobs(None)
        self.assertEqual(n, series.LAVA_JOBS)
        self.assertIn("did not list its devices", why)

    def test_cancelled_or_left_for_resume(self) -> None:
        lab = FakeLab(self.lines)
        b = self.booter(lab)
        job = b.submit(series.Slot(self.commit, 1), "/x/c", 1)
        lab.refuse_cancel = True
        self.assertIn("refused", b.cancel(job) or "")
        self.assertEqual(len(b.kept_jobs(self.commit)), 1)
        lab.refuse_cancel = False
        self.assertIsNone(b.cancel(job))
        self.assertEqual(lab.cancelled, ["101"])
        self.assertEqual(b.kept_jobs(self.commit), [])


class Builds(unittest.TestCase):
    """The builder's commits go through one kernel.SeriesBuild, in order:
    the tree from commit to commit, put back once (also when a signal
    cuts a build short); a commit built before is not built again."""

    def run_builds(self, stop_at: Optional[str] = None) -> List[Any]:
        calls: List[Any] = []

        class Builds:
            def __init__(self, tree: str, prog: str, jobs: int):
                calls.append(("from", tree))

            def __enter__(self) -> "Builds":
                return self

            def __exit__(self, *exc: object) -> None:
                calls.append(("back",))

            def build(self, rev: str) -> kernel.CommitImage:
                if rev == stop_at:
                    raise proc.Interrupted(15)
                calls.append(("build", rev))
                return kernel.CommitImage(f"/images/{rev}", "/log", rev)
        with mock.patch.object(kernel, "SeriesBuild", Builds):
            try:
                series.build_all("/tree", ["a", "b", "c"], self.state, 2,
                                 "kbench series")
            except proc.Interrupted:
                calls.append(("interrupted",))
        return calls

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.state = tmp.name
        os.makedirs(os.path.join(self.state, "builds"))
        with open(series.build_record(self.state, "b"), "w") as f:
            json.dump({"status": "built", "image": "/images/b"}, f)

    def test_in_order_from_one_to_the_next(self) -> None:
        self.assertEqual([("from", "/tree"), ("build", "a"), ("build", "c"),
                          ("back",)], self.run_builds())
        self.assertEqual({"status": "built", "image": "/images/c",
                          "commit": "c"},
                         {k: v for k, v in (series.read_build(
                             self.state, "c") or {}).items()
                          if k != "seconds"})

    def test_a_signal_puts_the_tree_back(self) -> None:
        self.assertEqual([("from", "/tree"), ("build", "a"), ("back",),
                          ("interrupted",)], self.run_builds(stop_at="c"))
        self.assertIsNone(series.read_build(self.state, "c"))


def assert_order(test: unittest.TestCase, text: str, *parts: str) -> None:
    """Each part is in text, after the one before."""
    at = 0
    for part in parts:
        found = text.find(part, at)
        test.assertGreaterEqual(found, 0, f"{part!r} after {at} in:\n{text}")
        at = found + len(part)


def git(tree: str, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", "-C", tree, *args], check=True, env=env,
                          capture_output=True, text=True).stdout.strip()


class Lab(FakeLab):
    """A lab of WORKERS devices that runs the series' jobs: each job's
    log carries the figures of its commit (named by the image in its
    definition; the base's boots in the order they were submitted), and
    the running jobs end in the order TURNS gives (the number of polls
    each runs for, by its place among the jobs submitted), not the
    order they went in."""

    def __init__(self, task: "Task", workers: int,
                 turns: Callable[[int], int] = lambda n: 1):
        super().__init__([])
        self.task = task
        self.devices_ = [{"hostname": f"qemu-{n}", "health": "Good",
                          "state": "Idle"} for n in range(workers)]
        self.workers = workers
        self.turns = turns
        self.jobs: Dict[str, Dict[str, Any]] = {}
        self.base_boots = 0
        # (event, commit) in the order they came: submit, end.
        self.events: List[Tuple[str, str]] = []
        self.most = 0
        # Commit -> the healths its successive jobs end with.
        self.ends: Dict[str, List[str]] = {}
        # Raised by the n-th poll (a signal while the series waits).
        self.stop_at_poll: Optional[int] = None
        # A SIGINT to this process as the n-th job is submitted.
        self.signal_at_submit: Optional[int] = None

    def submit(self, definition: str) -> str:
        jid = super().submit(definition)
        if len(self.submitted) == self.signal_at_submit:
            # ^C while the lab takes the job.
            os.kill(os.getpid(), signal.SIGINT)
        m = re.search(r"file:///srv/([0-9a-f]{40})", definition)
        assert m, definition
        commit = m.group(1)
        if commit == self.task.hashes[0]:
            figs = BASE_BOOTS[self.base_boots % 3]
            self.base_boots += 1
        else:
            figs = self.task.figures_of(commit)
        ends = self.ends.get(commit)
        health = ends.pop(0) if ends else "Complete"
        self.jobs[jid] = {"commit": commit, "figures": figs,
                          "turns": self.turns(len(self.jobs)),
                          "health": health, "state": "Submitted"}
        self.events.append(("submit", commit))
        return jid

    def running(self) -> List[str]:
        """The jobs on a device: the first WORKERS not ended."""
        live = [j for j, v in self.jobs.items()
                if v["state"] not in ("Finished", "Canceled")]
        return live[:self.workers]

    def job(self, jid: str) -> Dict[str, object]:
        self.polled.append(jid)
        if self.stop_at_poll is not None and \
                len(self.polled) >= self.stop_at_poll:
            self.stop_at_poll = None
            raise proc.Interrupted(2)
        v = self.jobs[jid]
        running = self.running()
        self.most = max(self.most, len(running))
        if jid in running and v["state"] != "Finished":
            v["state"] = "Running"
            v["turns"] -= 1
            if v["turns"] <= 0:
                v["state"] = "Finished"
                self.events.append(("end", v["commit"]))
        return {"id": jid, "state": v["state"],
                "health": v["health"] if v["state"] == "Finished" else
                "Unknown"}

    def lines_of(self, jid: str) -> List[str]:
        v = self.jobs[jid]
        stream = (f"TAP version 13\n1..1\n# selftests: kbench/{TEST}: "
                  f"{TEST}\nok 1 selftests: kbench/{TEST}: {TEST}\n"
                  "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 "
                  "error:0\n")
        sent = json.dumps(doc(v["figures"], f"job-{jid}")).encode()
        return stream.splitlines() + lava.results_block(f"{TEST}.json",
                                                        sent)

    def cancel(self, jid: str) -> None:
        super().cancel(jid)
        self.jobs[jid]["state"] = "Canceled"


@needs.commands("git")
class Task(unittest.TestCase):
    """kbench series on a small git tree, its builds and boots mocked
    (kbtools.kernel.SeriesBuild.build, Booter.boot_once and key_of)."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        top = self.tmp.name
        self.tree = os.path.join(top, "tree")
        os.makedirs(self.tree)
        git(self.tree, "init", "-q", "-b", "main")
        self.hashes = []
        for n in range(5):
            with open(os.path.join(self.tree, "f"), "w") as f:
                f.write(f"{n}\n")
            git(self.tree, "add", "f")
            git(self.tree, "commit", "-q", "-m", f"commit {n}")
            self.hashes.append(git(self.tree, "rev-parse", "HEAD"))
        self.state = os.path.join(top, "state")
        env = mock.patch.dict(os.environ, {
            "KBENCH_CACHE": os.path.join(top, "cache")})
        env.start()
        self.addCleanup(env.stop)
        self.fail_build: Optional[str] = None
        self.fail_boot: Optional[str] = None
        self.stop_at: Optional[str] = None
        self.fail_where: Optional[str] = None
        # How --where counts (where.mechanism, mocked): ftrace, as when
        # the plugin cannot be had.
        self.how = where.Mechanism(where.FTRACE, None, "mocked")
        self.plugins: List[Optional[str]] = []
        self.asked: Optional[str] = None
        self.boots: List[str] = []
        self.profiled: List[Any] = []

    def figures_of(self, commit: str) -> Dict[str, List[float]]:
        if commit == self.hashes[0]:
            k = len(series.usable_boots(self.state, commit))
            return BASE_BOOTS[k % 3]
        return STEPS[self.hashes.index(commit) - 1]

    def build(self, rev: str) -> kernel.CommitImage:
        if rev == self.fail_build:
            raise kernel.BuildFailed("failed", os.devnull)
        return kernel.CommitImage(f"/images/{rev}", "/log", rev)

    def boot_once(self, booter: series.Booter, commit: str,
                  image: str) -> Optional[str]:
        self.assertEqual(image, f"/images/{commit}")
        if commit == self.stop_at:
            raise proc.Interrupted(2)
        self.boots.append(commit)
        if commit == self.fail_boot:
            booter.why = "exit 125"
            return None
        return write_boot(self.state, commit, self.figures_of(commit))

    def run_series(self, *extra: str, resume: bool = False) -> Any:
        test = self

        def boot_once(booter: series.Booter, commit: str,
                      image: str) -> Optional[str]:
            return test.boot_once(booter, commit, image)

        def build(builds: kernel.SeriesBuild, rev: str
                  ) -> kernel.CommitImage:
            return test.build(rev)
        key = calibration.Key("sha", "qemu", "x86_64", 1, "shift=0", "")
        argv = (["--resume", "--state", self.state] if resume else
                ["--tree", self.tree, f"{self.hashes[0]}..{self.hashes[4]}",
                 "-t", TEST, "--state", self.state])
        with mock.patch.object(kernel.SeriesBuild, "build", build), \
                mock.patch.object(series.Booter, "boot_once", boot_once), \
                mock.patch.object(series.Booter, "key_of",
                                  lambda self, image: key), \
                mock.patch.object(series, "POLL_S", 0.01):
            return quiet(series.main, [*argv, *extra])

    def test_a_series_measured(self) -> None:
        out_json = os.path.join(self.tmp.name, "out", "series.json")
        rc, out, err = self.run_series("--json", os.path.dirname(out_json))
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.boots, [self.hashes[0]] * 3 + self.hashes[1:])
        self.assertIn("checked: on all 3 exact rows the steps add up", out)
        self.assertIn("3/4 commit 3: +2.00 insn on msgsnd_rcv", out)
        self.assertIn("base: no calibration of its image cached: it boots "
                      "3 times", err)
        with open(out_json) as f:
            self.assertEqual(json.load(f)["schema"], "kbench-series/1")
        # The second series of that base finds its calibration cached.
        self.boots.clear()
        rc, out, err = quiet(lambda: 0)
        state2 = self.state + "2"
        self.state = state2
        rc, out, err = self.run_series()
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.boots, self.hashes[:1] + self.hashes[1:])
        self.assertIn("cached", err)

    def lava_args(self) -> List[str]:
        return ["--lava", "http://lab:8790", "--lava-images",
                os.path.join(self.tmp.name, "srv"), "--lava-images-url",
                "file:///srv/kbench/series", "--lava-rootfs",
                "file:///srv/kbench/rootfs.cpio"]

    def run_lab(self, lab: Lab, *extra: str, resume: bool = False) -> Any:
        """The series through LAB (its images served by name, polled
        without a pause); nothing booted here."""
        def served(image: str, where: str, url: str) -> str:
            return f"file:///srv/{os.path.basename(image)}"
        with mock.patch.dict(os.environ, {series.LAVA_TOKEN: "s3cret"}), \
                mock.patch.object(lava, "Api", lambda url, token: lab), \
                mock.patch.object(series, "served", served), \
                mock.patch.object(series, "LAVA_POLL_S", 0):
            got = self.run_series(*([] if resume else self.lava_args()),
                                  *extra, resume=resume)
        self.assertEqual(self.boots, [])
        return got

    def outputs(self, lab: Lab, *extra: str) -> Tuple[str, str, str]:
        """(the table and summary, series.json, the summary file) of a
        new series through LAB."""
        self.state = tempfile.mkdtemp(dir=self.tmp.name)
        out_dir = os.path.join(self.state, "out")
        rc, out, err = self.run_lab(lab, *extra, "--json", out_dir,
                                    "--summary",
                                    os.path.join(out_dir, "summary"))
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out_dir, "series.json")) as f:
            # Its boots named by where they are kept.
            doc_ = f.read().replace(self.state, "STATE")
        with open(os.path.join(out_dir, "summary")) as f:
            return out, doc_, f.read()

    def test_a_series_through_lava(self) -> None:
        lab = Lab(self, 1)
        rc, out, err = self.run_lab(lab)
        self.assertEqual(rc, 0, err)
        # The base's calibration from the lab's own boots, every one a
        # job: no key of this host's guest asked for.
        self.assertEqual([c for e, c in lab.events if e == "submit"],
                         [self.hashes[0]] * 3 + self.hashes[1:])
        self.assertIn("3/4 commit 3: +2.00 insn on msgsnd_rcv", out)
        self.assertIn("lab: up to 1 jobs at once (the lab's qemu devices "
                      "taking jobs)", err)
        with open(os.path.join(self.state, "settings.json")) as f:
            kept = f.read()
        self.assertIn("http://lab:8790", kept)
        self.assertNotIn("s3cret", kept)
        rc, out, err = self.run_lab(lab, resume=True)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lab.submitted), 7)
        rc, out, err = self.run_series(resume=True)
        self.assertEqual(rc, 2)
        self.assertIn(f"no API token in {series.LAVA_TOKEN}", err)

    def test_a_lab_of_several_workers(self) -> None:
        """Jobs go in as their commits are built, up to as many as the
        lab has devices, and end out of order; what is shown is the
        same as when they go one at a time."""
        one = Lab(self, 4)
        alone = self.outputs(one, "--lava-jobs", "1")
        self.assertEqual(one.most, 1)
        self.assertEqual([e for e, _ in one.events], ["submit", "end"] * 7)
        # Later jobs end first: the fifth submitted ends before the first.
        many = Lab(self, 4, turns=lambda n: 12 - 2 * n)
        together = self.outputs(many)
        self.assertEqual(many.most, 4)
        ends = [c for e, c in many.events if e == "end"]
        self.assertNotEqual(ends, [c for e, c in many.events
                                   if e == "submit"])
        self.assertEqual(ends[0], self.hashes[1])
        self.assertEqual(many.events[:4], [("submit", self.hashes[0])] * 3
                         + [("submit", self.hashes[1])])
        self.assertEqual(together, alone)
        # Each job's results in the boot it went in for, whenever it
        # ended: the base's K-th job in its boot K.
        for k in (1, 2, 3):
            with open(os.path.join(series.boots_dir(
                    self.state, self.hashes[0]), str(k), f"{TEST}.json")) as f:
                self.assertEqual(json.load(f)["boot_id"], f"job-{100 + k}")
        self.assertIn("checked: on all 3 exact rows the steps add up",
                      together[0])
        self.assertIn("3/4 commit 3: +2.00 insn on msgsnd_rcv",
                      together[0])
        # --lava-jobs bounds them below the lab's size.
        two = Lab(self, 4, turns=lambda n: 5 - n)
        self.assertEqual(self.outputs(two, "--lava-jobs", "2"), alone)
        self.assertEqual(two.most, 2)

    def test_a_lab_job_that_fails(self) -> None:
        lab = Lab(self, 3, turns=lambda n: 4 - n % 4)
        lab.ends = {self.hashes[2]: ["Incomplete"],
                    self.hashes[3]: ["Incomplete", "Canceled"]}
        rc, out, err = self.run_lab(lab)
        self.assertEqual(rc, 1, err)
        submits = [c for e, c in lab.events if e == "submit"]
        # Each tried once more; the second try of commit 3 fails too.
        self.assertEqual(submits.count(self.hashes[2]), 2)
        self.assertEqual(submits.count(self.hashes[3]), 2)
        self.assertRegex(out, r"  3  [0-9a-f]{12}  commit 3 +does not "
                         r"boot\n")
        self.assertIn("ended Canceled); the series goes on", err)
        self.assertIn("3/4 commit 3", err + out)

    def test_a_base_that_fails_in_the_lab_ends_it(self) -> None:
        lab = Lab(self, 4, turns=lambda n: 1 if n in (0, 4) else 9)
        lab.ends = {self.hashes[0]: ["Incomplete", "Complete", "Complete",
                                     "Incomplete"]}
        rc, _, err = self.run_lab(lab)
        self.assertEqual(rc, 3, err)
        self.assertIn("does not boot (job 105 ended Incomplete)", err)
        # The jobs still in the lab cancelled, none left recorded.
        self.assertEqual(sorted(lab.cancelled), ["102", "103", "104"])
        self.assertEqual(self.records(), [])

    def records(self) -> List[str]:
        """The jobs the state holds for --resume."""
        return sorted(os.path.join(d, n)
                      for d, _, names in os.walk(self.state)
                      for n in names if n.endswith(".lava.json"))

    def test_interrupted_the_lab_s_jobs_are_cancelled(self) -> None:
        lab = Lab(self, 4, turns=lambda n: 3)
        lab.stop_at_poll = 10
        rc, _, err = self.run_lab(lab)
        self.assertEqual(rc, 130, err)
        done = [c for e, c in lab.events if e == "end"]
        self.assertEqual(len(lab.cancelled), 3, err)
        self.assertEqual(len(lab.submitted), 4)
        self.assertIn(f"job {lab.cancelled[0]} cancelled", err)
        self.assertEqual(self.records(), [])
        rc, out, err = self.run_lab(lab, resume=True)
        self.assertEqual(rc, 0, err)
        self.assertIn("they add up", out)
        # Each boot that had not ended goes in again, once.
        self.assertEqual(len(lab.submitted), 4 + 7 - len(done))

    def test_a_signal_as_a_job_goes_in(self) -> None:
        """The job the lab took as ^C came is kept track of, and so
        cancelled with the others: none left behind unrecorded."""
        lab = Lab(self, 4, turns=lambda n: 3)
        lab.signal_at_submit = 2
        rc, _, err = self.run_lab(lab)
        self.assertEqual(rc, 130, err)
        self.assertEqual(lab.cancelled, ["101", "102"])
        self.assertEqual(self.records(), [])

    def test_resumed_it_polls_the_jobs_left_in_the_lab(self) -> None:
        lab = Lab(self, 4, turns=lambda n: 3)
        lab.stop_at_poll = 10
        lab.refuse_cancel = True
        rc, _, err = self.run_lab(lab)
        self.assertEqual(rc, 130, err)
        self.assertIn("left in the lab (LAVA API jobs/", err)
        self.assertEqual(len(self.records()), 3)
        lab.refuse_cancel = False
        polled = len(lab.polled)
        rc, out, err = self.run_lab(lab, resume=True)
        self.assertEqual(rc, 0, err)
        self.assertIn("3 jobs of the run before polled", err)
        self.assertEqual(len(lab.submitted), 7)
        self.assertEqual(self.records(), [])
        self.assertGreater(len(lab.polled), polled)

    def test_lava_jobs_usage(self) -> None:
        for bad in ("0", "x", "-1"):
            rc, _, err = self.run_series(*self.lava_args(), "--lava-jobs",
                                         bad)
            self.assertEqual(rc, 2)
            self.assertIn(f"invalid --lava-jobs '{bad}'", err)
        rc, _, err = self.run_series("--lava-jobs", "2")
        self.assertEqual(rc, 2)
        self.assertIn("--lava-jobs needs --lava", err)
        rc, _, err = self.run_series()
        self.assertEqual(rc, 0, err)
        rc, _, err = self.run_series("--lava-jobs", "2", resume=True)
        self.assertEqual(rc, 2)
        self.assertIn("does not go through a LAVA lab", err)
        rc, out, _ = self.run_series("--help")
        self.assertEqual(rc, 0)
        self.assertIn("      --lava-jobs N   with --lava: at most N jobs",
                      out)
        self.assertIn(f"{series.LAVA_JOBS} when the lab does not say",
                      " ".join(out.split()))

    def test_the_lab_s_booter(self) -> None:
        with mock.patch.dict(os.environ, {series.LAVA_TOKEN: "s3cret"}):
            args = series.parse_args(
                ["--tree", self.tree, f"{self.hashes[0]}..{self.hashes[1]}",
                 *self.lava_args(), "--lava-init", "/sbin/kbench-init"],
                "kbench series")
            st = series.new_settings(args)
            b = series.booter_of(st, self.state, "kbench series")
        assert isinstance(b, series.LavaBooter) and b.api is not None
        self.assertEqual((b.api.url, b.api.token, b.rootfs_url),
                         ("http://lab:8790", "s3cret",
                          "file:///srv/kbench/rootfs.cpio"))
        self.assertEqual(list(b.job_options), ["--init", "/sbin/kbench-init"])
        self.assertEqual(st["lava"]["lava-images-url"],
                         "file:///srv/kbench/series")

    def test_lava_usage(self) -> None:
        rc, _, err = self.run_series(*self.lava_args()[:2])
        self.assertEqual(rc, 2)
        self.assertIn("--lava needs --lava-images", err)
        rc, _, err = self.run_series(*self.lava_args())
        self.assertEqual(rc, 2)
        self.assertIn("no API token", err)
        rc, _, err = self.run_series(*self.lava_args()[:-1], "/srv/r.cpio")
        self.assertEqual(rc, 2)
        self.assertIn("--lava-rootfs: '/srv/r.cpio' is not a URL", err)

    def test_images_served_by_their_contents(self) -> None:
        srv = os.path.join(self.tmp.name, "srv")
        paths = []
        for name, body in (("a", b"one"), ("b", b"one"), ("c", b"two")):
            path = os.path.join(self.tmp.name, name)
            with open(path, "wb") as f:
                f.write(body)
            paths.append(series.served(path, srv, "file:///srv/x/"))
        self.assertEqual(paths[0], paths[1])
        self.assertNotEqual(paths[0], paths[2])
        self.assertTrue(paths[0].startswith("file:///srv/x/"))
        got = os.path.join(srv, os.path.basename(paths[2]))
        with open(got, "rb") as f:
            self.assertEqual(f.read(), b"two")
        self.assertEqual(os.stat(got).st_mode & 0o777, 0o644)
        self.assertEqual(len(os.listdir(srv)), 2)

    def test_a_commit_that_does_not_build_or_boot(self) -> None:
        self.fail_build, self.fail_boot = self.hashes[2], self.hashes[3]
        rc, out, err = self.run_series()
        self.assertEqual(rc, 1, err)
        self.assertRegex(out, r"  2  [0-9a-f]{12}  commit 2 +does not "
                         r"build\n")
        self.assertRegex(out, r"  3  [0-9a-f]{12}  commit 3 +does not "
                         r"boot\n")
        self.assertIn("does not boot (exit 125); the series goes on", err)
        # Tried twice.
        self.assertEqual(self.boots.count(self.hashes[3]), 2)

    def test_the_base_that_does_not_build_ends_it(self) -> None:
        self.fail_build = self.hashes[0]
        rc, _, err = self.run_series()
        self.assertEqual(rc, 3)
        self.assertIn("does not build: nothing to measure against", err)

    def test_the_base_that_does_not_boot_ends_it(self) -> None:
        self.fail_boot = self.hashes[0]
        rc, _, err = self.run_series()
        self.assertEqual(rc, 3)
        self.assertIn("booted only 0 times (exit 125)", err)
        # Tried twice, nothing cached or kept as its calibration.
        self.assertEqual(self.boots, [self.hashes[0]] * 2)
        self.assertFalse(os.path.exists(os.path.join(
            self.state, series.CALIBRATION)))
        self.assertFalse(os.path.exists(calibration.cache_dir()))

    def test_interrupted_then_resumed(self) -> None:
        self.stop_at = self.hashes[3]
        rc, _, err = self.run_series()
        self.assertEqual(rc, 130, err)
        self.assertEqual(self.boots, [self.hashes[0]] * 3 + self.hashes[1:3])
        rc, _, err = self.run_series()
        self.assertEqual(rc, 2)
        self.assertIn("add --resume", err)
        self.stop_at = None
        self.boots.clear()
        rc, out, err = self.run_series(resume=True)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.boots, self.hashes[3:])
        self.assertIn("they add up", out)

    def test_one_run_of_a_series_at_a_time(self) -> None:
        rc, _, err = self.run_series()
        self.assertEqual(rc, 0, err)
        with proc.locked(os.path.join(self.state, ".lock")):
            rc, _, err = self.run_series(resume=True)
        self.assertEqual(rc, 2)
        self.assertIn(f"a series is running in {self.state} already", err)

    def profile(self, prog: str, image: str, rows: Sequence[str], out: str,
                icount: policy.Icount, plugin: Optional[str] = None
                ) -> List[where.RowProfile]:
        """kbench where's boot of one commit (where.profile), mocked: its
        figures' change on the row's own function, its files in out."""
        commit = image.rsplit("/", 1)[1]
        if commit == self.fail_where:
            raise cli.Failure(f"{image}: the guest's run failed")
        self.profiled.append((commit, list(rows)))
        self.plugins.append(plugin)
        sides = []
        for row in rows:
            moved = self.figures_of(commit)[row][0] - BASE[row]
            side = where.RowProfile(
                f"{TEST}:{row}", image, BASE[row] + moved,
                {"x64_sys_call": where.Func(1500.0, 1),
                 f"__do_sys_{row}": where.Func(2858.0 + moved, 1)},
                method=self.how.method)
            os.makedirs(os.path.join(out, row))
            with open(os.path.join(out, row, "profile.json"), "w") as f:
                json.dump(side.to_json(), f)
            sides.append(side)
        return sides

    def run_where(self, *extra: str, resume: bool = False) -> Any:
        self.profiled = []
        with mock.patch.object(where, "profile", self.profile), \
                mock.patch.object(where, "bootable",
                                  lambda image, prog: image), \
                mock.patch.object(where, "mechanism",
                                  return_value=self.how) as how, \
                mock.patch.object(collection, "build") as build:
            got = self.run_series("--where", *extra, resume=resume)
        self.assertEqual(bool(self.profiled), build.called)
        self.asked = how.call_args[0][1] if how.called else None
        return got

    def test_where(self) -> None:
        """--where: each commit whose step moved an exact or near row of
        syscall_overhead gets that step's functions below the table, in
        the summary, the JSON and the page; each commit on either side
        of such a step boots once more, once, and a resumed series finds
        its profiles kept."""
        out_dir = os.path.join(self.tmp.name, "out")
        page = os.path.join(out_dir, "series.html")
        rc, out, err = self.run_where("--json", out_dir, "--report", page)
        self.assertEqual(rc, 0, err)
        h = self.hashes
        self.assertEqual([(h[0], ["getppid"]), (h[1], ["getppid"]),
                          (h[2], ["msgsnd_rcv"]), (h[3], ["msgsnd_rcv"]),
                          (h[4], ["msgsnd_rcv"])], self.profiled)
        self.assertIn("where: 3 moved rows of syscall_overhead (1: getppid; "
                      "3: msgsnd_rcv; 4: msgsnd_rcv), 5 commits", err)
        self.assertRegex(err, r"the boots waited \d+ s, where \d+ s\)")
        assert_order(self, out, "checked: on all 3 exact rows",
                     "where the instructions went (3 moved rows",
                     f"commit 1 {h[1][:12]} (commit 1) against 0 "
                     f"{h[0][:12]}:",
                     "  __do_sys_getppid     2858.000     2859.000     "
                     "+1.000  1",
                     f"commit 4 {h[4][:12]} (commit 4) against 3",
                     "  __do_sys_msgsnd_rcv     2860.000     2859.000     "
                     "-1.000  1",
                     "1/4 commit 1: +1.00 insn on getppid",
                     "    in __do_sys_getppid +1.000")
        with open(os.path.join(out_dir, "series.json")) as f:
            kept = json.load(f)
        self.assertEqual([(1, h[1], h[0], f"{TEST}:getppid", 1.0),
                          (3, h[3], h[2], f"{TEST}:msgsnd_rcv", 2.0),
                          (4, h[4], h[3], f"{TEST}:msgsnd_rcv", -1.0)],
                         [(d["n"], d["commit"], d["against"], d["row"],
                           d["sum"]) for d in kept["where"]])
        self.assertEqual([1.0, 2.0, -1.0], [round(d["compared_delta"], 3)
                                             for d in kept["where"]])
        with open(page) as f:
            html = f.read()
        self.assertIn("Where the instructions went", html)
        self.assertIn("<code>__do_sys_msgsnd_rcv</code>", html)
        if plots.available():
            with open(os.path.join(out_dir, "series-ab",
                                   f"3-{h[3][:12]}.html")) as f:
                ab_page = f.read()
            self.assertIn("<code>__do_sys_msgsnd_rcv</code>", ab_page)
            self.assertNotIn("getppid</code>", ab_page)
        # Resumed: the profiles are kept, nothing boots.
        self.boots.clear()
        rc, out2, err = self.run_where(resume=True)
        self.assertEqual(rc, 0, err)
        self.assertEqual([], self.profiled + self.boots)
        self.assertIn("__do_sys_getppid     2858.000     2859.000", out2)

    def test_where_with_the_plugin(self) -> None:
        """--where-with plugin (or the default when the plugin can be
        had): where.mechanism asked, the plugin's object handed to each
        boot, its profiles kept apart from ftrace's, the summary and the
        where section say who counted."""
        self.how = where.Mechanism(where.PLUGIN, "/p.so", "mocked")
        rc, out, err = self.run_where("--where-with", "plugin")
        self.assertEqual(rc, 0, err)
        self.assertEqual(where.PLUGIN, self.asked)
        self.assertEqual(["/p.so"] * 5, self.plugins)
        self.assertIn("where: counted by kbench's QEMU plugin (mocked)", err)
        self.assertTrue(os.path.isdir(os.path.join(self.state,
                                                   "where-plugin")))
        self.assertFalse(os.path.exists(os.path.join(self.state, "where")))
        self.assertIn("kbench where, one more boot a kernel: kbench's QEMU "
                      "plugin under -icount", out)
        self.assertIn("Functions ('in') counted by kbench's QEMU plugin.",
                      out)
        # Resumed with ftrace: its own profiles, booted again.
        self.how = where.Mechanism(where.FTRACE, None, "mocked")
        self.plugins.clear()
        rc, out, err = self.run_where("--where-with", "ftrace", resume=True)
        self.assertEqual(rc, 0, err)
        self.assertEqual([None] * 5, self.plugins)
        self.assertIn("Functions ('in') counted by ftrace's function_graph "
                      "tracer.", out)
        rc, _, err = quiet(series.main, [
            "--tree", self.tree, f"{self.hashes[0]}..{self.hashes[4]}",
            "--where-with", "plugin", "--state", self.state + "2"])
        self.assertEqual((2, True), (rc, "--where-with needs --where" in err))

    def test_where_when_a_commit_cannot_be_profiled(self) -> None:
        """A commit whose where boot fails: said, its steps left out,
        the others shown, exit status 1."""
        self.fail_where = self.hashes[3]
        rc, out, err = self.run_where()
        self.assertEqual(rc, 1, err)
        self.assertIn(f"where: commit 3: /images/{self.hashes[3]}: the "
                      "guest's run failed", err)
        self.assertIn("where the instructions went (1 moved row", out)
        self.assertIn("__do_sys_getppid", out)
        self.assertNotIn("__do_sys_msgsnd_rcv", out)

    def test_where_without_rows_it_profiles(self) -> None:
        """Nothing moved that where profiles: no boot; a series without
        syscall_overhead: bad usage, before anything is built."""
        self.figures_of = lambda commit: figures()  # type: ignore
        rc, out, err = self.run_where()
        self.assertEqual(rc, 0, err)
        self.assertEqual([], self.profiled)
        self.assertIn("where: no step moved an exact or near row of "
                      "syscall_overhead: nothing to profile", err)
        self.assertNotIn("where the instructions went", out)
        rc, _, err = quiet(series.main, [
            "--tree", self.tree, f"{self.hashes[0]}..{self.hashes[4]}",
            "-t", "pmqtest", "--where", "--state", self.state + "2"])
        self.assertEqual(rc, 2)
        self.assertIn("--where profiles rows of syscall_overhead: add -t "
                      "syscall_overhead", err)
        self.assertFalse(os.path.exists(self.state + "2"))

    def test_bad_usage(self) -> None:
        for argv, want in (
                ([], "no kernel tree"),
                (["--tree", self.tree], "give the series as BASE..TIP"),
                (["--tree", self.tree, "a...b"], "as BASE..TIP"),
                (["--tree", self.tree, "x..y"], "BASE 'x': no such commit"),
                (["--tree", self.tree,
                  f"{self.hashes[3]}..{self.hashes[1]}"], "not an ancestor"),
                (["--tree", self.tree, f"{self.hashes[0]}..{self.hashes[1]}",
                  "-j", "x"], "invalid --jobs 'x'"),
                (["--tree", self.tree, f"{self.hashes[0]}..{self.hashes[1]}",
                  "-t", "a:b:c"], "-t: "),
                (["--resume", "--state", self.state], "no series in")):
            rc, _, err = quiet(series.main, argv)
            self.assertEqual(rc, 2, (argv, err))
            self.assertIn(want, err)
            self.assertIn("Try 'kbench series --help'", err)


if __name__ == "__main__":
    unittest.main()
