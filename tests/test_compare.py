# SPDX-License-Identifier: GPL-2.0
"""kbtools.results, kbtools.compare and scripts/compare.py: reading
repetitions, verdicts (with negative cases), formats, N-way, exit codes."""

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.path.insert(0, SCRIPTS)

from kbtools import compare, results  # noqa: E402
from support import present  # noqa: E402


def compare_main(argv: List[str]) -> int:
    """scripts/compare.py's main."""
    return compare.main(argv, "compare.py")


# Drift-like spread of one run's median around 1 (+-1.5%).
SPREAD = [1.0, 1.012, 0.991, 1.006, 0.985, 1.015, 0.997, 1.003]


# A row of a repetition: (name, median, unit, status).
RowSpec = Tuple[str, Optional[float], Optional[str], str]


def rep_doc(test: str, rows: Sequence[RowSpec], guest: Optional[str] = None,
            date: str = "2026-01-01T00:00:00Z") -> Dict[str, Any]:
    """One repetition: rows is a list of (name, median, unit, status)."""
    out = []
    for name, value, unit, status in rows:
        r: Dict[str, Any] = {"name": name, "status": status}
        if unit:
            r["unit"] = unit
        if value is not None:
            r.update(n=100, mean=value, median=value, min=value * 0.9,
                     max=value * 1.5, stddev=value * 0.05, rsd_pct=5.0,
                     p99=value * 1.4)
        if status == "skip":
            r["reason"] = "no such interface"
        out.append(r)
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.18"}, "machine": {"guest": guest},
            "date": date, "end_date": date, "cmdline": "./" + test,
            "params": {}, "rows": out}


class Case(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, *parts: str) -> str:
        return os.path.join(self.tmp.name, *parts)

    def write_run(self, label: str, reps: Sequence[Sequence[RowSpec]],
                  test: str = "t", guest: Optional[str] = None) -> str:
        """A run_all.sh --json DIR of `reps` repetitions, merged as
        run_all.sh --repeat does; reps: list of row lists."""
        d = self.path(label)
        os.makedirs(d, exist_ok=True)
        docs = [rep_doc(test, rows, guest) for rows in reps]
        doc = results.merge_docs([results.parse_doc(label, d) for d in docs]) \
            if len(docs) > 1 else docs[0]
        results.write_json(os.path.join(d, test + ".json"), doc)
        return d

    def scaled(self, label: str, factors: Sequence[Tuple[str, float]],
               n: int = 5, extra: Sequence[RowSpec] = (),
               test: str = "t") -> str:
        """n repetitions of rows a, b, ... = factor x drift."""
        reps = []
        for k in range(n):
            rows = [(name, f * SPREAD[k % len(SPREAD)], "us", "ok")
                    for name, f in factors]
            reps.append(rows + list(extra))
        return self.write_run(label, reps, test)

    def entries(self, base: str, *cands: str, **kw: Any
                ) -> Dict[Tuple[Optional[str], Optional[str]], compare.Entry]:
        b = results.load(base)
        cs = [results.load(c) for c in cands]
        return {(e.candidate, e.name): e
                for e in compare.compare(b, cs, **kw)}


class Results(Case):
    def test_merge_keeps_every_repetition_and_keys(self) -> None:
        d = self.write_run("r", [[("a", v, "us", "ok")] for v in (1, 3, 2)])
        with open(os.path.join(d, "t.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "kbench-results/1")
        self.assertEqual(doc["repeat"], 3)
        self.assertEqual(len(doc["repetitions"]), 3)
        row = doc["rows"][0]
        for key in ("name", "status", "unit", "n", "mean", "median", "min",
                    "max", "stddev", "rsd_pct", "p99", "repetitions"):
            self.assertIn(key, row)
        self.assertEqual(row["median"], 2)
        self.assertEqual(row["n"], 300)
        self.assertEqual([r["median"] for r in row["repetitions"]], [1, 3, 2])
        run = results.load(d)
        self.assertEqual(run.tests["t"].rows["a"].values(), [1, 3, 2])
        self.assertEqual(run.repetitions(), 3)

    def test_directory_of_runs_is_repetitions(self) -> None:
        for k in range(3):
            self.write_run(os.path.join("runs", f"r{k}"),
                           [[("a", k + 1, "us", "ok")]])
        run = results.load(self.path("runs"))
        self.assertEqual(run.tests["t"].rows["a"].values(), [1, 2, 3])

    def test_status_of_merged_rows(self) -> None:
        d = self.write_run("m", [[("a", 1, "us", "ok")],
                                 [("a", None, "us", "skip")]])
        row = results.load(d).tests["t"].rows["a"]
        self.assertEqual(row.status, "ok")
        self.assertEqual(row.values(), [1])
        d = self.write_run("f", [[("a", 1, "us", "ok")],
                                 [("a", None, "us", "fail")]])
        self.assertEqual(results.load(d).tests["t"].rows["a"].status, "fail")

    def bad(self, content: object, want: str) -> None:
        p = self.path("bad.json")
        with open(p, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str)
                    else json.dumps(content))
        with self.assertRaises(results.ResultError) as cm:
            results.load(p)
        self.assertIn(want, str(cm.exception))
        self.assertIn("bad.json", str(cm.exception))

    def test_errors_name_file_and_row(self) -> None:
        good = rep_doc("t", [("a", 1, "us", "ok")])
        self.bad("{", "not valid JSON")
        self.bad({"rows": []}, "no 'test' name")
        self.bad([1], "no 'rows' list")
        dup = rep_doc("t", [("a", 1, "us", "ok"), ("a", 2, "us", "ok")])
        self.bad(dup, "row 'a' appears twice")
        wrong = json.loads(json.dumps(good))
        wrong["rows"][0]["median"] = "fast"
        self.bad(wrong, "row 'a': 'median' is not a number")
        self.bad(json.dumps(good).replace('"median": 1',
                                          '"median": NaN'), "non-finite")
        wrong = json.loads(json.dumps(good))
        wrong["rows"][0]["status"] = "maybe"
        self.bad(wrong, "status 'maybe'")
        wrong = json.loads(json.dumps(good))
        wrong["schema"] = "other/2"
        self.bad(wrong, "schema 'other/2'")
        with self.assertRaises(results.ResultError):
            results.load(self.path("nonexistent"))

    def test_members_of_the_wrong_type_are_named(self) -> None:
        good = rep_doc("t", [("a", 1, "us", "ok")])
        for where, key, value, want in (
                ("kernel", "release", 6, "'kernel.release' is not a string"),
                ("machine", "cpus", True, "'machine.cpus' is not an integer"),
                ("machine", "machine_slow", 1,
                 "'machine.machine_slow' is not true or false"),
                ("machine", "guest", ["kvm"], "'machine.guest' is not a "
                                             "string")):
            wrong = json.loads(json.dumps(good))
            wrong[where][key] = value
            self.bad(wrong, want)
        wrong = json.loads(json.dumps(good))
        wrong["repetitions"] = [{"date": 5}]
        self.bad(wrong, "'repetitions.1.date' is not a string")
        wrong = json.loads(json.dumps(good))
        wrong["rows"][0]["repetitions"] = [{"median": 1, "reason": 2}]
        self.bad(wrong, "row 'a': repetition 1: 'reason' is not a string")
        # An integer too large for a double is no figure.
        self.bad(json.dumps(good).replace('"median": 1,',
                                          '"median": 1' + "0" * 400 + ","),
                 "row 'a': 'median' is not finite")

    def test_merge_writes_back_what_it_read(self) -> None:
        """Members no reader knows pass through a merge unchanged and in
        their order: the header's, and each repetition's."""
        docs = [rep_doc("t", [("a", v, "us", "ok")]) for v in (1, 2)]
        for k, d in enumerate(docs):
            d["zeta"] = {"k": k}
            d["rows"][0]["samples"] = [k, k + 1]
            d["rows"][0]["extra"] = {"batch": k}
        merged = results.merge_docs([results.parse_doc(f"r{k}", d)
                                     for k, d in enumerate(docs)])
        self.assertEqual(list(merged), [
            "schema", "test", "kernel", "machine", "date", "end_date",
            "cmdline", "params", "zeta", "repeat", "repetitions", "rows"])
        self.assertEqual(merged["zeta"], {"k": 0})
        row = merged["rows"][0]
        self.assertEqual(list(row), [
            "name", "status", "unit", "n", "mean", "min", "max", "median",
            "p99", "stddev", "rsd_pct", "cv_pct", "extra", "repetitions"])
        self.assertEqual(row["extra"], {"batch": 0})
        # A row written without repetitions is its own one repetition:
        # all of it but its name, unit and note.
        self.assertEqual([list(r) for r in row["repetitions"]],
                         [[k for k in docs[0]["rows"][0]
                           if k not in ("name", "unit", "note")]] * 2)
        self.assertEqual([r["samples"] for r in row["repetitions"]],
                         [[0, 1], [1, 2]])

    def test_ab_directory_is_explained(self) -> None:
        self.write_run(os.path.join("ab", "base"), [[("a", 1, "us", "ok")]])
        self.write_run(os.path.join("ab", "candidate"),
                       [[("a", 1, "us", "ok")]])
        with self.assertRaises(results.ResultError) as cm:
            results.load(self.path("ab"))
        self.assertIn("A/B run", str(cm.exception))


class Verdicts(Case):
    def test_slower_faster_same(self) -> None:
        base = self.scaled("base", [("a", 100), ("b", 100), ("c", 100),
                                    ("d", 100)])
        cand = self.scaled("cand", [("a", 120), ("b", 80), ("c", 100),
                                    ("d", 101)])
        e = self.entries(base, cand)
        a = e[("cand", "a")]
        self.assertEqual(a.verdict, "slower")
        self.assertAlmostEqual(present(a.ratio), 1.2, places=6)
        self.assertLess(present(a.ci_low), 1.2)
        self.assertGreater(present(a.ci_high), 1.2)
        self.assertGreater(present(a.ci_low), 1.0)
        self.assertAlmostEqual(present(a.p_value), 2 / 252)
        self.assertEqual((a.n_base, a.n_candidate), (5, 5))
        self.assertEqual(e[("cand", "b")].verdict, "faster")
        self.assertEqual(e[("cand", "c")].verdict, "same")
        self.assertEqual(e[("cand", "d")].verdict, "same")
        self.assertGreater(present(e[("cand", "a")].cv_base), 0)

    def test_significant_but_below_threshold_is_same(self) -> None:
        base = self.scaled("base", [("a", 100)], n=8)
        cand = self.scaled("cand", [("a", 104)], n=8)
        a = self.entries(base, cand, threshold_pct=10)[("cand", "a")]
        self.assertEqual(a.verdict, "same")
        self.assertIn("threshold", present(a.note))
        a = self.entries(base, cand, threshold_pct=2)[("cand", "a")]
        self.assertEqual(a.verdict, "slower")

    def test_one_repetition_never_gives_a_verdict(self) -> None:
        base = self.scaled("base", [("a", 100)], n=1)
        cand = self.scaled("cand", [("a", 300)], n=1)
        a = self.entries(base, cand)[("cand", "a")]
        self.assertEqual(a.verdict, "no-verdict")
        self.assertIsNone(a.cv_base)
        self.assertIn("n=1 of 1 rows: needs 4", present(a.note))

    def test_three_repetitions_cannot_reach_alpha(self) -> None:
        base = self.scaled("base", [("a", 100)], n=3)
        cand = self.scaled("cand", [("a", 300)], n=3)
        a = self.entries(base, cand)[("cand", "a")]
        self.assertEqual(a.verdict, "no-verdict")
        self.assertAlmostEqual(present(a.p_value), 0.1)

    def test_multiple_testing_control(self) -> None:
        # One row shifted among 20 at n = 5: raw p = 0.0079, adjusted
        # 0.0079 x 20 = 0.16: not a discovery, and no row of these 20
        # could be one alone at n = 5: it says so rather than 'same'.
        names = [(f"r{i}", 100) for i in range(20)]
        base = self.scaled("base", names)
        shifted = [("r0", 150)] + names[1:]
        cand = self.scaled("cand", shifted)
        r0 = self.entries(base, cand)[("cand", "r0")]
        self.assertLess(present(r0.p_value), 0.01)
        self.assertAlmostEqual(present(r0.p_adjusted), 20 * 2 / 252)
        self.assertEqual(r0.verdict, "no-verdict")
        self.assertEqual(r0.note, "n=5 of 20 rows: needs 6")

    def test_missing_skipped_checks_and_other_units(self) -> None:
        extra = [("skip", None, "us", "skip"), ("check", None, None, "ok"),
                 ("count", 5, "timeouts", "ok")]
        base = self.scaled("base", [("a", 100), ("only_b", 1)], extra=extra)
        cand = self.scaled("cand", [("a", 100), ("only_c", 1)], extra=extra)
        e = self.entries(base, cand)
        self.assertEqual(e[("cand", "only_b")].verdict, "missing")
        self.assertEqual(e[("cand", "only_c")].verdict, "missing")
        self.assertEqual(("only in the baseline", "only in the candidate"),
                         (e[("cand", "only_b")].note,
                          e[("cand", "only_c")].note))
        self.assertEqual(e[("cand", "skip")].verdict, "skipped")
        self.assertIn("no such interface", present(e[("cand", "skip")].note))
        self.assertEqual(e[("cand", "check")].verdict, "skipped")
        self.assertEqual(e[("cand", "count")].verdict, "skipped")

    def test_a_zero_figure_is_no_verdict_with_its_reason(self) -> None:
        # A figure of 0 (or below) has no ratio or log-spread: never
        # 'same' without an mde, as one zero among 7 repetitions read.
        base = self.scaled("base", [("a", 0)])
        cand = self.scaled("cand", [("a", 1)])
        a = self.entries(base, cand)[("cand", "a")]
        self.assertEqual(a.verdict, "no-verdict")
        self.assertIsNone(a.ratio)
        self.assertIn("a figure of 0 or below", present(a.note))
        reps = [[("a", v, "us", "ok")] for v in (1.0, 1.1, 0.9, 1.0, 1.05)]
        base = self.write_run("b7", reps)
        cand = self.write_run("c7", [[("a", v * 1.5, "us", "ok")]
                                     for v in (1.0, 1.1, 0.0, 1.0, 1.05)])
        a = self.entries(base, cand)[("c7", "a")]
        self.assertEqual(a.verdict, "no-verdict")
        self.assertIsNone(a.mde_pct)
        self.assertIn("0 in the candidate", present(a.note))

    def test_unit_mismatch_is_an_error(self) -> None:
        base = self.write_run("base", [[("a", 1, "us", "ok")]])
        cand = self.write_run("cand", [[("a", 1, "ns", "ok")]])
        with self.assertRaises(results.ResultError):
            self.entries(base, cand)

    def test_fail_rows_use_the_interval(self) -> None:
        base = self.scaled("base", [("a", 100)])
        cand = self.scaled("cand", [("a", 130)])
        ents = list(self.entries(base, cand).values())
        self.assertEqual(len(compare.fail_rows(ents, 10)), 1)
        self.assertEqual(compare.fail_rows(ents, 40), [])

    def test_every_key_of_the_contract(self) -> None:
        base = self.scaled("base", [("a", 100)])
        cand = self.scaled("cand", [("a", 100)])
        a = self.entries(base, cand)[("cand", "a")]
        self.assertEqual(list(a.to_json()), list(compare.KEYS))
        for key in ("candidate", "test", "name", "unit", "verdict", "ratio",
                    "ci_low", "ci_high", "p_value", "cv_base",
                    "cv_candidate", "n_base", "n_candidate", "note"):
            self.assertIn(key, compare.KEYS)
        self.assertIn(a.verdict, compare.VERDICTS)
        self.assertEqual(a.to_json()["verdict"], "same")


class Cli(Case):
    def run_cli(self, *args: str) -> Tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            try:
                rc = compare_main(list(args))
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 2
        finally:
            sys.stdout, sys.stderr = old
        return rc, out.getvalue(), err.getvalue()

    def runs(self) -> Tuple[str, str, str, str]:
        long = "a_row_name_much_longer_than_any_column_header@1.70MB"
        base = self.scaled("base", [("a", 100), (long, 10), ("c", 50)])
        c1 = self.scaled("slow", [("a", 130), (long, 10), ("c", 50)])
        c2 = self.scaled("fast", [("a", 70), (long, 10), ("c", 50)])
        return base, c1, c2, long

    def test_fail_above(self) -> None:
        base, c1, c2, _ = self.runs()
        self.assertEqual(self.run_cli("--fail-above", "10", base, c1)[0], 1)
        self.assertEqual(self.run_cli("--fail-above", "40", base, c1)[0], 0)
        self.assertEqual(self.run_cli("--fail-above", "10", base, c2)[0], 0)
        rc, _, err = self.run_cli("--fail-above", "10", base, c2, c1)
        self.assertEqual(rc, 1)
        self.assertIn("slow: t:a", err)

    def test_where_below_the_table(self) -> None:
        base, c1, _, _ = self.runs()
        doc = {"row": "syscall_overhead:getppid", "base": "a", "cand": "b",
               "check": "sum +1.000 = the row's delta +1.000 instructions "
                        "per operation", "candidate": "slow",
               "functions": [{"name": "__do_sys_getppid", "base": 2858.0,
                              "cand": 2859.0, "delta": 1.0,
                              "calls_base": 1.0, "calls_cand": 1.0}]}
        path = self.path("where.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"rows": [doc]}, f)
        rc, out, _ = self.run_cli("--where", path, base, c1)
        self.assertEqual(0, rc)
        tail = out[out.index("where the instructions went (1 moved row"):]
        self.assertIn("\nslow:\nwhere: syscall_overhead:getppid", tail)
        self.assertIn("one more boot a kernel: ftrace's function_graph "
                      "under -icount", tail)
        self.assertIn("  __do_sys_getppid     2858.000     2859.000     "
                      "+1.000  1", tail)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"rows": [dict(doc, method="plugin")]}, f)
        rc, out, _ = self.run_cli("--where", path, base, c1)
        self.assertIn("one more boot a kernel: kbench's QEMU plugin under "
                      "-icount: every guest instruction", out)
        self.assertNotIn("ftrace", out)
        rc, out, _ = self.run_cli("--where", path, "-f", "json", base, c1)
        self.assertNotIn("where the instructions went", out)
        with open(path, "w", encoding="utf-8") as f:
            f.write("{}")
        rc, _, err = self.run_cli("--where", path, base, c1)
        self.assertEqual(2, rc)
        self.assertIn("not a kbench where file", err)

    def test_text_is_aligned(self) -> None:
        base, c1, _, long = self.runs()
        rc, out, _ = self.run_cli(base, c1)
        self.assertEqual(rc, 0)
        rows = [ln for ln in out.splitlines() if ln.startswith("  ")
                and ("same" in ln or "slower" in ln)]
        self.assertEqual(len(rows), 3)
        # The ratio column ends at the same place on every row.
        ends = {ln.index("x1.") + 6 if "x1." in ln else ln.index("x0.") + 6
                for ln in rows}
        self.assertEqual(len(ends), 1, rows)
        self.assertTrue(any(long in ln for ln in rows))

    def test_email_fits_72_columns_nway(self) -> None:
        base, c1, c2, _ = self.runs()
        for args in ((base, c1), (base, c1, c2), (base, c1, c2, c1)):
            rc, out, _ = self.run_cli("--format", "email", *args)
            self.assertEqual(rc, 0)
            for ln in out.splitlines():
                self.assertLessEqual(len(ln), 72, ln)
            self.assertIn("slower", out)

    def test_json_and_nway(self) -> None:
        base, c1, c2, _ = self.runs()
        rc, out, _ = self.run_cli("-f", "json", "--label", "b,s,f",
                                  base, c1, c2)
        self.assertEqual(rc, 0)
        doc = json.loads(out)
        self.assertEqual(doc["candidates"], ["s", "f"])
        got = {(r["candidate"], r["name"]): r["verdict"] for r in doc["rows"]}
        self.assertEqual(got[("s", "a")], "slower")
        self.assertEqual(got[("f", "a")], "faster")
        # Two arguments: the same rows as the first candidate of N.
        rc, out2, _ = self.run_cli("-f", "json", "--label", "b,s", base, c1)
        two = [r for r in json.loads(out2)["rows"]]
        nway = [r for r in doc["rows"] if r["candidate"] == "s"]
        self.assertEqual(two, nway)

    def test_text_nway_has_a_group_per_candidate(self) -> None:
        base, c1, c2, _ = self.runs()
        _, out, _ = self.run_cli(base, c1, c2)
        self.assertIn("A:ratio", out)
        self.assertIn("B:ratio", out)
        self.assertIn("A: slow", out)

    def test_bad_usage(self) -> None:
        base, c1, _, _ = self.runs()
        for args in ((base,), ("--label", "x", base, c1),
                     ("--label", "x,x", base, c1), ("--alpha", "2", base, c1),
                     ("--format", "xml", base, c1),
                     ("--fail-above", "-1", base, c1)):
            rc, _, err = self.run_cli(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn("compare.py", err)

    def test_select_tests(self) -> None:
        base = self.scaled("b", [("a", 100)], test="t")
        self.scaled("b", [("x", 100)], test="u")
        cand = self.scaled("c", [("a", 130)], test="t")
        self.scaled("c", [("x", 100)], test="u")
        rc, out, _ = self.run_cli("-f", "json", "-t", "u", base, cand)
        self.assertEqual(rc, 0)
        self.assertEqual({r["test"] for r in json.loads(out)["rows"]}, {"u"})
        rc, _, err = self.run_cli("-t", "t,nosuch", base, cand)
        self.assertEqual(rc, 2)
        self.assertIn("no test 'nosuch'", err)
        self.assertEqual(self.run_cli("-t", "", base, cand)[0], 2)

    def test_single_repetition_names_the_command(self) -> None:
        base = self.scaled("b1", [("a", 100)], n=1)
        cand = self.scaled("c1", [("a", 200)], n=1)
        rc, out, _ = self.run_cli("--fail-above", "5", base, cand)
        self.assertEqual(rc, 0)
        self.assertIn("no-verdict", out)
        self.assertIn("run_all.sh --vs-prefix", out)
        self.assertIn("--vs-kernel", out)

    def test_script_runs_with_system_python(self) -> None:
        base, c1, _, _ = self.runs()
        r = subprocess.run([sys.executable,
                            os.path.join(SCRIPTS, "compare.py"), base, c1],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([sys.executable, "-m", "kbtools.results", "merge"],
                           capture_output=True, text=True, check=False,
                           env=dict(os.environ, PYTHONPATH=SCRIPTS))
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
