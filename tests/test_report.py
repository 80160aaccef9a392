# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the HTML report (scripts/report.py, kbtools/report.py):
the figures it takes out of results, its refusal of bad input, and the
page it writes. Rendering needs matplotlib (python3-matplotlib); without
it those tests are skipped and say so."""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
REPORT = os.path.join(SCRIPTS, "report.py")
RECORDED = os.path.join(HERE, "data", "report", "run")
sys.path.insert(0, SCRIPTS)

from kbtools import compare, plots, report, results  # noqa: E402
from support import present  # noqa: E402

NEED_MPL = unittest.skipUnless(
    plots.available(), "" if plots.available() else plots.install_hint())


# A results document, or a row of one, as JSON.
Json = Dict[str, Any]


def doc(test: str, rows: List[Json], guest: Optional[str] = None,
        **header: Any) -> Json:
    d: Json = {"schema": "kbench-results/1", "test": test,
         "kernel": {"sysname": "Linux", "release": "6.12.0-test",
                    "version": "#1"},
         "machine": {"arch": "x86_64", "hostname": "box", "cpus": 2,
                     "guest": guest, "machine_slow": False},
         "date": "2026-11-23T10:00:00Z", "end_date": "2026-11-23T10:00:05Z",
         "cmdline": f"./{test}", "clock": "CLOCK_MONOTONIC", "params": {},
         "rows": rows}
    d.update(header)
    return d


def row(name: str, median: float, unit: str = "us",
        extra: Optional[Json] = None, status: str = "ok", **figs: Any) -> Json:
    if status != "ok":
        return {"name": name, "status": status, "reason": "not here"}
    r: Json = {"name": name, "status": "ok", "unit": unit, "n": 100,
         "mean": median * 1.1, "median": median, "min": median * 0.9,
         "max": median * 2, "stddev": median * 0.05, "rsd_pct": 5.0,
         "p90": median * 1.2, "p99": median * 1.5, "p999": median * 1.8}
    r.update(figs)
    if extra:
        r["extra"] = extra
    return r


def proc_create_doc(scale: float = 1.0) -> Json:
    rows: List[Json] = []
    for size, kib in (("1.70MB", 1744), ("11.70MB", 11984),
                      ("1GiB", 1049964)):
        rows.append(row(f"fork@{size}", scale * 100 * kib / 1744,
                        extra={"vmsize_kib": kib}))
        rows.append(row(f"vfork@{size}", scale * 30,
                        extra={"vmsize_kib": kib}))
    rows.append({"name": "fork_grows", "status": "ok"})
    return doc("proc_create", rows)


def memcg_doc() -> Json:
    rows = [row("stat_legacy_per_read", 8.0), row("stat_legacy_per_cat", 20),
            row("cat_devnull_process", 1000)]
    for n, cost in ((3, 1.5), (16, 5.0), (32, 9.0), (64, 16.0)):
        rows.append(row(f"stat_ks{n}_per_read", cost))
        rows.append(row(f"stat_ks{n}_per_cat", cost + 12))
    rows.append(row("stat_ks_keys_per_read", 9.0))
    rows.append(row("numa_stat_ks3_per_read", 0, status="skip"))
    return doc("memcg_ks", rows)


def taskstats_doc(n: int) -> Json:
    return doc("taskstats", [
        row("netlink_per_pid", 6.8, extra={"nr_process": n}),
        row("procfs", 30.0, extra={"nr_process": n}),
        row("ioctl", 0, status="skip")])


def pmq_doc() -> Json:
    d = doc("pmqtest", [row("latency_pair0", 5.0), row("latency_pair1", 5.5),
                        row("forced_timeouts", 19.0)])
    d["thread"] = {"0": {"receiver": {
        "cpu": 0, "p50_us": 5.0, "p99_us": 8.2, "p999_us": 50.0,
        "max_us": 66.0, "histogram": {"bucket_us": 1,
                                      "counts": [0, 0, 0, 40, 200, 90, 3],
                                      "overflow": 2}}}}
    return d


def write_run(path: str, docs: Sequence[Json]) -> None:
    os.makedirs(path, exist_ok=True)
    for d in docs:
        with open(os.path.join(path, d["test"] + ".json"), "w") as f:
            json.dump(d, f)


def load_docs(tmp: str, name: str, docs: Sequence[Json]) -> results.Run:
    path = os.path.join(tmp, name)
    write_run(path, docs)
    return results.load(path)


class Figures(unittest.TestCase):
    """What the plots are drawn from."""

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_fork_series_by_method_and_size(self) -> None:
        run = load_docs(self.tmp, "r", [proc_create_doc()])
        s = report.fork_series(run.tests["proc_create"])
        self.assertEqual(sorted(s), ["fork", "vfork"])
        self.assertEqual([round(p.x, 1) for p in s["fork"]],
                         [1.7, 11.7, 1025.4])
        self.assertAlmostEqual(s["fork"][0].y, 100)
        # One repetition: no spread between repetitions to draw.
        self.assertIsNone(s["fork"][0].low)

    def test_repetitions_give_the_spread_of_medians(self) -> None:
        runs = [os.path.join(self.tmp, "rep", f"r{i}") for i in (1, 2, 3)]
        for p, scale in zip(runs, (1.0, 1.2, 0.9)):
            write_run(p, [proc_create_doc(scale)])
        run = results.load(os.path.join(self.tmp, "rep"))
        fork = report.fork_series(run.tests["proc_create"])["fork"][0]
        self.assertAlmostEqual(fork.y, 100)   # median of 90, 100, 120
        self.assertAlmostEqual(present(fork.low), 90)
        self.assertAlmostEqual(present(fork.high), 120)
        fig = report.row_figures(run.tests["proc_create"].rows["vfork@1GiB"])
        self.assertEqual(fig.medians, 3)
        self.assertIsNotNone(fig.cv_pct)
        self.assertIn("cv_pct", fig.to_json())

    def test_special_plots_of_an_icount_run_in_instructions(self) -> None:
        """Under QEMU's -icount a virtual us is 1,000 instructions (shift
        0), and the per-program plots say so, as the tables do."""
        icount = {"arch": "x86_64", "hostname": "guest", "cpus": 1,
                  "guest": "qemu", "machine_slow": False,
                  "clock_mode": "icount", "icount_shift": 0}
        docs = [proc_create_doc(), memcg_doc(), taskstats_doc(2)]
        for d in docs:
            d["machine"] = icount
        run = load_docs(self.tmp, "r", docs)
        fork = report.fork_series(run.tests["proc_create"])["fork"][0]
        self.assertAlmostEqual(fork.y, 100_000)
        ks = report.ks_series(run.tests["memcg_ks"])["stat"]
        self.assertAlmostEqual(present(ks.level), 8_000)
        self.assertAlmostEqual(ks.ks[0].y, 1000 * report.ks_series(
            load_docs(self.tmp, "real", [memcg_doc()]).tests["memcg_ks"]
        )["stat"].ks[0].y)
        self.assertAlmostEqual(report.taskstats_groups(
            run.tests["taskstats"])[2]["procfs"], 30_000)
        svg = "".join(report.plot_fork([run]) + report.plot_ks([run]) +
                      report.plot_taskstats([run]))
        self.assertIn("instructions per creation", svg)
        self.assertIn("instructions per read", svg)
        self.assertIn("instructions per process", svg)
        self.assertNotIn("us per", svg)
        pmq = pmq_doc()
        pmq["machine"] = icount
        run = load_docs(self.tmp, "pmq", [pmq])
        p50 = dict(report.pmq_percentiles(run.tests["pmqtest"])[0].points)
        self.assertAlmostEqual(p50["p50"], 5_000)
        svg = "".join(report.plot_pmq([run]))
        self.assertIn("wake-up latency (guest instructions)", svg)
        self.assertIn("virtual us of 1,000 guest instructions", svg)

    def test_ks_series_against_the_legacy_file(self) -> None:
        run = load_docs(self.tmp, "r", [memcg_doc()])
        s = report.ks_series(run.tests["memcg_ks"])
        self.assertEqual(list(s), ["stat"])   # numa_stat: skipped only
        self.assertEqual([p.x for p in s["stat"].ks], [3, 16, 32, 64])
        self.assertEqual(present(s["stat"].legacy).median, 8.0)
        cat = report.ks_series(run.tests["memcg_ks"], "per_cat")
        self.assertEqual(cat["stat"].ks[0].y, 13.5)

    def test_no_ks_rows_no_ks_plot_data(self) -> None:
        d = memcg_doc()
        d["rows"] = [r for r in d["rows"] if "_ks" not in r["name"]]
        run = load_docs(self.tmp, "r", [d])
        self.assertEqual(report.ks_series(run.tests["memcg_ks"]), {})

    def test_taskstats_by_process_count(self) -> None:
        run = load_docs(self.tmp, "r", [taskstats_doc(1000)])
        g = report.taskstats_groups(run.tests["taskstats"])
        self.assertEqual(g, {1000: {"netlink_per_pid": 6.8, "procfs": 30.0}})

    def test_pmq_histogram_and_percentiles(self) -> None:
        run = load_docs(self.tmp, "r", [pmq_doc()])
        h = report.pmq_histograms(run.tests["pmqtest"])
        self.assertEqual(len(h), 1)
        self.assertEqual(h[0].buckets[4], (4, 200))
        self.assertEqual(h[0].overflow, 2)
        self.assertEqual([p[0] for p in h[0].percentiles],
                         ["p50", "p99", "p99.9", "max"])
        pct = report.pmq_percentiles(run.tests["pmqtest"])
        self.assertEqual([p.label for p in pct],
                         ["latency_pair0", "latency_pair1"])
        self.assertEqual(dict(pct[0].points)["p99"], 7.5)

    def test_spans_decades(self) -> None:
        self.assertTrue(plots.spans_decades([0.2, 1000]))
        self.assertFalse(plots.spans_decades([5, 30]))
        self.assertFalse(plots.spans_decades([5, None, 0]))

    def test_forest_rows_only_compared_ones(self) -> None:
        V = compare.Verdict
        entries = [
            compare.Entry(test="t", name="a", ratio=1.3, ci_low=1.2,
                          ci_high=1.4, verdict=V.SLOWER),
            compare.Entry(test="t", name="b", verdict=V.SKIPPED),
            compare.Entry(test="t", name="c", ratio=1.0,
                          verdict=V.NO_VERDICT)]
        rows = report.forest_rows(entries)
        self.assertEqual([r.label for r in rows], ["a", "c"])
        self.assertEqual(rows[0].verdict, "slower")
        entries.append(compare.Entry(test="u", name="d", ratio=0.5,
                                     ci_low=0.4, ci_high=0.6,
                                     verdict=V.FASTER))
        rows = report.forest_rows(entries)
        self.assertEqual([r.label for r in rows], ["t: a", "t: c", "u: d"])


class BadInput(unittest.TestCase):
    """Clear message and exit 2, never a traceback."""

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def run_report(self, *args: str) -> "subprocess.CompletedProcess[str]":
        """report.py's main in this process (fast); its exit status and
        stderr as a CompletedProcess."""
        err = io.StringIO()
        argv = ["-o", os.path.join(self.tmp, "out.html"), *args]
        with contextlib.redirect_stderr(err):
            try:
                rc = report.main(argv, "report.py")
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 2
        return subprocess.CompletedProcess(argv, rc, "", err.getvalue())

    def test_missing_directory_as_a_command(self) -> None:
        p = subprocess.run([sys.executable, REPORT, "-o",
                            os.path.join(self.tmp, "out.html"),
                            "/nonexistent/kbench"],
                           capture_output=True, text=True, timeout=120)
        self.assert_refused(p, "no such file or directory", "report.py -h")

    def assert_refused(self, p: "subprocess.CompletedProcess[str]",
                       *words: str) -> None:
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        for w in words:
            self.assertIn(w, p.stderr)

    def test_missing_directory(self) -> None:
        self.assert_refused(self.run_report("/nonexistent/kbench"),
                            "no such file or directory")

    def test_not_kbench_json(self) -> None:
        d = os.path.join(self.tmp, "junk")
        os.makedirs(d)
        with open(os.path.join(d, "x.json"), "w") as f:
            json.dump({"hello": 1}, f)
        self.assert_refused(self.run_report(d), "not a kbench results file")
        with open(os.path.join(d, "x.json"), "w") as f:
            f.write("{ not json")
        self.assert_refused(self.run_report(d), "not valid JSON")

    def test_different_tests(self) -> None:
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        write_run(a, [taskstats_doc(1000)])
        write_run(b, [pmq_doc()])
        self.assert_refused(self.run_report(a, b), "different tests",
                            "taskstats", "pmqtest")

    def test_usage(self) -> None:
        p = self.run_report("a", "b", "c")
        self.assertEqual(p.returncode, 2)
        p = self.run_report()
        self.assertEqual(p.returncode, 2)

    def test_help_prints_percent_signs_once(self) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            report.parse_args(["--help"], "report.py")
        text = " ".join(out.getvalue().split())
        self.assertIn("95% confidence intervals", text)
        self.assertNotIn("%%", text)

    def test_no_output_written_on_error(self) -> None:
        self.assert_refused(self.run_report("/nonexistent"))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out.html")))


def svg_count(page: str) -> int:
    return len(re.findall(r"<svg\b", page))


@NEED_MPL
class Page(unittest.TestCase):
    """The page: self-contained, the expected figures, the tables."""

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def render(self, *paths: str) -> str:
        return report.render(report.load_runs(list(paths)))

    def assert_self_contained(self, page: str) -> None:
        self.assertNotIn("<script", page)
        self.assertIsNone(re.search(r'(src|href)="(https?:)?//', page))
        ids = re.findall(r'\bid="([^"]+)"', page)
        self.assertEqual(len(ids), len(set(ids)), "duplicate element ids")

    def test_single_run(self) -> None:
        p = os.path.join(self.tmp, "run")
        write_run(p, [proc_create_doc(), memcg_doc(), taskstats_doc(1000),
                      pmq_doc(), doc("syscall_overhead",
                                     [row("getppid", 0.2),
                                      row("fork", 300)])])
        page = self.render(p)
        self.assert_self_contained(page)
        # fork vs size (no exec rows: one panel); .ks per read and per
        # cat; taskstats bars; pmq histogram and percentiles;
        # syscall_overhead's rows.
        self.assertEqual(svg_count(page), 7)
        self.assertIn("6.12.0-test", page)
        self.assertIn("getppid", page)
        self.assertIn("1 row not measured", page)
        self.assertIn("One repetition", page)

    def test_guest_warning(self) -> None:
        p = os.path.join(self.tmp, "run")
        write_run(p, [doc("syscall_overhead", [row("getppid", 0.2)],
                          guest="tcg")])
        self.assertIn("tcg", self.render(p).split("<h2")[0])

    def test_ab_directory_gives_verdicts_and_forest(self) -> None:
        ab = os.path.join(self.tmp, "ab")
        for i, slow in enumerate((1.0, 1.02, 0.99, 1.01, 1.0)):
            write_run(os.path.join(ab, "base", f"r{i}"),
                      [doc("syscall_overhead", [row("getppid", 0.2 * slow),
                                                row("fork", 300 * slow)])])
            write_run(os.path.join(ab, "candidate", f"r{i}"),
                      [doc("syscall_overhead", [
                          row("getppid", 0.3 * slow),
                          row("fork", 300 * slow * 1.001)])])
        page = self.render(ab)
        self.assert_self_contained(page)
        self.assertIn("slower: 1", page)
        self.assertIn('class="l v-slower">slower', page)
        # the forest, and the rows of both sides in one plot
        self.assertEqual(svg_count(page), 2)
        self.assertLess(page.index("Every compared row"),
                        page.index('id="syscall_overhead"'))

    def test_single_repetition_comparison_warns(self) -> None:
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        write_run(a, [doc("syscall_overhead", [row("getppid", 0.2)])])
        write_run(b, [doc("syscall_overhead", [row("getppid", 0.4)])])
        page = self.render(a, b)
        self.assertIn("Too few repetitions", page)
        self.assertIn("no-verdict", page)

    @unittest.skipUnless(os.path.isdir(RECORDED), "no recorded run")
    def test_recorded_run_through_the_cli(self) -> None:
        out = os.path.join(self.tmp, "r.html")
        p = subprocess.run([sys.executable, REPORT, "-o", out, RECORDED],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            page = f.read()
        self.assert_self_contained(page)
        self.assertIn("fork@1GiB", page)
        self.assertIn("latency_pair0", page)
        # proc_create: two panels (without and with exec), memcg_ks and
        # syscall_overhead: their rows, pmqtest: histogram and
        # percentiles, taskstats: bars.
        self.assertEqual(svg_count(page), 7)


# The one-instruction A/B of a recorded series (kbench series' steps):
# the base booted 3 times (its calibration), the candidate once with a
# nop added at getppid's entry.
STEPS = os.path.join(HERE, "data", "series", "steps", "boots")
STEP_BASE = os.path.join(STEPS, "37f4b1112799ed725be5a06850037c76c8ee4901")
STEP_NOP = os.path.join(STEPS, "1d1d872998e704078ac4525322edc6a1a21ee0c0")


class ExactPage(unittest.TestCase):
    """An icount A/B speaks of instructions and the exact rule, not of a
    clock, repetitions and percentages."""

    def setUp(self) -> None:
        self.runs = report.load_runs([STEP_BASE, STEP_NOP])
        self.entries = compare.compare(self.runs[0], [self.runs[1]])

    def test_header_says_what_is_measured(self) -> None:
        facts = dict(report.run_facts(self.runs[1]))
        self.assertNotIn("clock", facts)
        self.assertIn("guest instructions", str(facts["measures"]))
        self.assertIn("QEMU -icount shift=0", str(facts["measures"]))
        # A real clock's run still names its clock.
        with tempfile.TemporaryDirectory() as tmp:
            write_run(tmp, [doc("syscall_overhead", [row("getppid", 0.2)])])
            real = dict(report.run_facts(report.load_runs([tmp])[0]))
        self.assertEqual(real["clock"], "CLOCK_MONOTONIC")

    def test_no_repetitions_warning_beside_exact_verdicts(self) -> None:
        got = report.warnings(self.runs, self.entries)
        self.assertFalse([w for w in got if "repetitions" in w], got)
        # A row left without a verdict says it needs boots.
        no = compare.Entry(test="t", name="fork",
                           verdict=compare.Verdict.NO_VERDICT)
        got = report.warnings(self.runs, [*self.entries, no])
        self.assertTrue([w for w in got if "1 row without a verdict (fork)"
                         in w and "one boot per side" in w], got)

    def test_the_exact_rule_explains_the_verdicts(self) -> None:
        text = report.comparison_summary(self.entries, 2.0, "median")
        self.assertNotIn("Benjamini-Hochberg", text)
        self.assertNotIn("2% threshold", text)
        self.assertIn("larger of 0.5 instruction and 2x the range of the "
                      "base's calibrated boots", text)

    def test_one_instruction_is_plotted_outside_its_band(self) -> None:
        self.assertEqual(report.forest_rows(self.entries), [])
        rows = {r.label: r for r in report.insn_rows(self.entries)}
        nop = rows["getppid"]
        self.assertEqual(nop.verdict, "slower")
        self.assertAlmostEqual(nop.delta, 1.0, places=2)
        self.assertGreater(abs(nop.delta), nop.margin)
        self.assertEqual(nop.margin, 0.5)
        self.assertLess(abs(rows["getpid"].delta), rows["getpid"].margin)

    def test_every_row_is_plotted_in_instructions(self) -> None:
        """The every-row plot of an icount run: instructions, as its
        table, not the guest's virtual microseconds."""
        svg = "".join(report.plot_rows(self.runs, "syscall_overhead"))
        self.assertIn("guest instructions per operation", svg)
        self.assertNotIn("us per operation", svg)
        table = report.run_table(self.runs[0].tests["syscall_overhead"])
        self.assertIn('<td class="l">getppid</td><td class="l">insn</td>'
                      '<td>329.1</td>', table)
        figs = report._row_figures(self.runs[0].tests["syscall_overhead"])
        unit, (median, _, _) = figs["getppid"]
        self.assertEqual(unit, "insn")
        self.assertAlmostEqual(median or 0.0, 329.097, places=2)

    def test_exact_rows_have_exact_columns(self) -> None:
        """An exact row's change and margin in instructions, no interval
        or p value of a clock; a clock's rows keep theirs."""
        def columns(table: str) -> List[str]:
            return re.findall(r"<th[^>]*>([^<]*)</th>", table)

        def cells(table: str, name: str) -> List[str]:
            tr = re.search(rf'<tr><td class="l">{name}</td>(.*?)</tr>',
                           table)
            assert tr is not None, name
            return re.findall(r"<td[^>]*>([^<]*)</td>", tr.group(1))
        html = report.compare_table(self.entries)
        cols = columns(html)
        self.assertEqual(cols[:8], ["row", "unit", "base", "candidate",
                                    "change", "margin", "ratio", "verdict"])
        self.assertNotIn("p", cols)
        self.assertNotIn("95% CI / change", cols)
        got = dict(zip(cols[1:], cells(html, "getppid")))
        # To the thousandth: the unit the exact rule counts in.
        self.assertEqual(got["base"], "329.097")
        self.assertEqual(got["change"], "+0.999 insn")
        self.assertEqual(got["margin"], "\u00b10.500 insn")
        self.assertEqual(got["verdict"], "slower (exact)")
        V = compare.Verdict
        clock = compare.Entry(test="t", name="fork", unit="us", base=10.0,
                              value=11.0, ratio=1.1, ci_low=1.05,
                              ci_high=1.15, p_value=0.001, n_base=8,
                              n_candidate=8, verdict=V.SLOWER)
        html = report.compare_table([clock])
        self.assertIn("95% CI / change", columns(html))
        self.assertIn("p", columns(html))
        self.assertIn("1.050 .. 1.150", cells(html, "fork"))

    def test_command_without_the_runners_output_path(self) -> None:
        # Each kernel of an A/B runs as its guest's "base": its --json path
        # would name the candidate's command .../repetitions/base/1/...
        got = report.measuring_command(
            "./syscall_overhead --json /tmp/json/repetitions/base/1/s.json")
        self.assertEqual(got, "./syscall_overhead")
        self.assertEqual(report.measuring_command(
            "./proc_create -s 1M --json=/tmp/p.json --nest hash"),
            "./proc_create -s 1M --nest hash")
        self.assertEqual(report.measuring_command(None), "")
        section = report.program_section(self.runs, "syscall_overhead",
                                         self.entries)
        self.assertNotIn("repetitions/", section)
        self.assertIn("<code>./syscall_overhead</code>", section)

    @NEED_MPL
    def test_page(self) -> None:
        page = report.render(self.runs)
        self.assertIn("Exact rows: candidate - base, in instructions", page)
        self.assertNotIn("Too few repetitions", page)
        self.assertNotIn("Benjamini", page)
        self.assertNotIn("threshold", page)
        # The header's cells wrap rather than widen the page.
        self.assertRegex(page, r"table\.meta td \{[^}]*white-space: normal")


def where_doc(candidate: str = "") -> Json:
    """kbench where's difference of the one-nop getppid kernel (as an
    A/B's where.json keeps it)."""
    d: Json = {"row": "syscall_overhead:getppid", "base": "a", "cand": "b",
               "row_delta": 1.0, "sum": 1.0,
               "check": "sum +1.000 = the row's delta +1.000 instructions "
                        "per operation",
               "functions": [{"name": "__do_sys_getppid", "base": 2858.0,
                              "cand": 2859.0, "delta": 1.0,
                              "calls_base": 1.0, "calls_cand": 1.0}],
               "unchanged": ["__rcu_read_lock x2", "x64_sys_call"],
               "atypical": {"base": {"getppid": 0.011}}}
    if candidate:
        d["candidate"] = candidate
    return d


class WherePage(unittest.TestCase):
    """An A/B directory's where.json: a small table per moved row below
    its program's."""

    def test_a_table_per_moved_row(self) -> None:
        html_ = report.where_html([where_doc("b")])
        self.assertIn("<b>syscall_overhead:getppid</b> (b)", html_)
        self.assertIn('<code>__do_sys_getppid</code></td><td>2858.000</td>'
                      '<td>2859.000</td><td class="v-slower">+1.000</td>',
                      html_)
        self.assertIn("unchanged (+0.000): __rcu_read_lock x2, "
                      "x64_sys_call", html_)
        self.assertIn("counted by ftrace&#x27;s function_graph", html_)
        self.assertEqual("", report.where_html([]))

    def test_it_says_who_counted(self) -> None:
        html_ = report.where_html([dict(where_doc("b"), method="plugin")])
        self.assertIn("counted by kbench&#x27;s QEMU plugin under -icount",
                      html_)
        self.assertIn('<td class="v-slower">+1.000</td><td>-</td>', html_)
        self.assertNotIn("ftrace", html_)
        html_ = report.where_html([dict(where_doc("b"), method="plugin",
                                        stat="mean", row_median_delta=2.5)])
        self.assertIn("each figure a mean over the batches", html_)
        self.assertIn("<th>median change</th>", html_)
        self.assertIn("the row&#x27;s median delta +2.500", html_)
        html_ = report.where_html([dict(where_doc("b"), compared_delta=1.0)])
        self.assertIn("the comparison&#x27;s own delta: +1.000", html_)

    def test_the_string_routines_part_is_said(self) -> None:
        memset = {"name": "memset_orig", "base": 4735.0, "cand": 4984.0,
                  "delta": 249.0, "calls_base": 0.0, "calls_cand": 0.0}
        doc = where_doc("b")
        html_ = report.where_html([dict(doc, sum=250.0, functions=[
            *doc["functions"], memset])])
        self.assertIn("<br>string routines (memset_orig): 4735.000 -&gt; "
                      "4984.000, +249.000 of the sum, the rest +1.000 (QEMU",
                      html_)
        self.assertNotIn("string routines", report.where_html([doc]))

    def test_read_beside_the_sides(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for side in ("base", "candidate"):
                shutil.copytree(STEP_BASE if side == "base" else STEP_NOP,
                                os.path.join(tmp, side))
            self.assertEqual([], report.load_where([tmp]))
            path = os.path.join(tmp, "where.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"rows": [where_doc()]}, f)
            self.assertEqual([where_doc()], report.load_where([tmp]))
            self.assertEqual([], report.load_where([
                os.path.join(tmp, "base"), os.path.join(tmp, "candidate")]))
            with open(path, "w", encoding="utf-8") as f:
                f.write('{"rows": [{}]}')
            with self.assertRaisesRegex(report.ReportError,
                                        "not a kbench where file"):
                report.load_where([tmp])

    def test_the_ab_calibration_is_taken(self) -> None:
        """An A/B directory's calibration.json judges its rows, as the
        A/B's own table did (a cached calibration: one base boot)."""
        from kbtools import calibration, exact
        with tempfile.TemporaryDirectory() as tmp:
            for side, src in (("base", STEP_BASE), ("candidate", STEP_NOP)):
                shutil.copytree(src, os.path.join(tmp, side))
            base = report.load_runs([tmp])[0]
            self.assertIsNone(report.load_calibration([tmp], base))
            release = next(iter(base.tests.values())).header.kernel.release
            path = os.path.join(tmp, "calibration.json")
            known = {"syscall_overhead:getppid": exact.Known(
                "exact", 0.0, 0.0, 329.0, 3)}
            calibration.save(path, calibration.Calibration(known, 3,
                                                           release or ""))
            got = report.load_calibration([tmp], base)
            self.assertEqual(known, got)
            calibration.save(path, calibration.Calibration(known, 3, "0.1"))
            with self.assertRaisesRegex(report.ReportError,
                                        "its own kernel only"):
                report.load_calibration([tmp], base)

    @NEED_MPL
    def test_page(self) -> None:
        runs = report.load_runs([STEP_BASE, STEP_NOP])
        page = report.render(runs, moved=[where_doc()])
        section = page[page.index('<h2 id="syscall_overhead">'):]
        self.assertIn("Where the instructions went", section)
        self.assertNotIn("Where the instructions went",
                         report.render(runs))


class NoMatplotlib(unittest.TestCase):
    def test_message_says_how_to_install(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "data",
                                                       "no_matplotlib"))
        with tempfile.TemporaryDirectory() as tmp:
            write_run(tmp, [doc("syscall_overhead", [row("getppid", 0.2)])])
            p = subprocess.run([sys.executable, REPORT, "-o",
                                os.path.join(tmp, "out.html"), tmp],
                               capture_output=True, text=True, env=env,
                               timeout=60)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out.html")))
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("python3-matplotlib", p.stderr)


if __name__ == "__main__":
    unittest.main()
