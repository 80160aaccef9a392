# SPDX-License-Identifier: GPL-2.0
"""Tests of testkernel/summary.py (kbtools.testkernel's summary): the
tables and --require-patched."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = os.path.join(HERE, "..", "testkernel", "summary.py")
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import testkernel as summary  # noqa: E402


# A results document, or a row of one, as JSON.
Json = Dict[str, Any]


def row(name: str, median: float = 1.0, status: str = "ok",
        extra: Optional[Json] = None, reason: Optional[str] = None,
        note: Optional[str] = None) -> Json:
    r: Json = {"name": name, "status": status}
    if status == "ok":
        r.update(unit="us", n=10, mean=median, median=median, min=median,
                 max=median)
        r["extra"] = extra or {}
    if reason:
        r["reason"] = reason
    if note:
        r["note"] = note
    return r


def doc(test: str, rows: List[Json], params: Optional[Json] = None) -> Json:
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.12.117-kbench-patched"},
            "machine": {"guest": "tcg"}, "params": params or {},
            "date": "2026-01-01T00:00:00Z", "rows": rows}


def taskstats_rows() -> List[Json]:
    return [row(m, extra={"pass_s_median": 0.01 * i, "load_ms": 99.0})
            for i, m in enumerate(summary.TS_METHODS, 1)]


def program_ktap(prog: str, skip: Sequence[str] = (), indent: str = ""
                 ) -> List[str]:
    """run_all.sh's nesting of one program whose patched-kernel results
    pass, except those in skip."""
    names = summary.PATCHED[prog] + summary.BTF_ROWS[prog]
    lines = ["TAP version 13", f"1..{len(names)}"]
    for i, n in enumerate(names, 1):
        lines.append(f"ok {i} {n}" + (" # SKIP kernel has no BTF"
                                       if n in skip else ""))
    return lines


def run_all_ktap(skip: Sequence[str] = ()) -> List[str]:
    out = ["TAP version 13", "1..2"]
    for i, prog in enumerate(("taskstats", "memcg_ks"), 1):
        title = f"selftests: kbench/{prog}: {prog}"
        out.append(f"# {title}")
        out += ["    " + line for line in program_ktap(prog, skip)]
        out.append(f"ok {i} {title}")
    return out


def ab_ktap(base_skip: Sequence[str], cand_skip: Sequence[str]
            ) -> List[str]:
    """run_all.sh --vs-kernel: each boot's run_all.sh stream nested."""
    out = ["TAP version 13", "1..2"]
    for i, (side, skip) in enumerate((("base", base_skip),
                                      ("candidate", cand_skip)), 1):
        title = f"kbench: {side} /k/{side}/bzImage (boot 1 of 1)"
        out.append(f"# {title}")
        out += ["    " + line for line in run_all_ktap(skip)]
        out.append(f"ok {i} {title}")
    return out


def memcg_rows() -> List[Json]:
    rows = [row("stat_legacy_per_read", 10.0)]
    for n in summary.KS_SIZES:
        rows.append(row(f"stat_ks{n}_per_read", n / 4))
        rows.append(row(f"bpf_iter{n}", 5.0, extra={"load_ms": 1000.0},
                        note="create + read + close of a cgroup iterator "
                        "fd: cgroup_rstat_flush, then 3 counters"))
    return rows


class SummaryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name: str, content: object) -> str:
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(content, f)
        return path

    def run_summary(self, *args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([sys.executable, SUMMARY, *args], text=True,
                              capture_output=True, check=False)

    def write_lines(self, name: str, lines: Sequence[str]) -> str:
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def test_tables(self) -> None:
        ts = self.write("taskstats.json",
                        doc("taskstats", taskstats_rows(),
                            {"nr_process": 1000}))
        mc = self.write("memcg_ks.json", doc("memcg_ks", memcg_rows()))
        p = self.run_summary("--taskstats", ts, "--memcg", mc)
        self.assertEqual(p.returncode, 0, p.stderr)
        # bpf_iter is the 6th method: 0.06 s, 0.01 / 0.06 of per-pid.
        self.assertIn("0.06 (0.17x)", p.stdout)
        self.assertIn("99 ms", p.stdout)
        self.assertIn("flush: cgroup_rstat_flush", p.stdout)
        # bpf_iter3: 5 us, legacy 10 us, ks3 0.75 us.
        self.assertRegex(p.stdout, r"bpf_iter3 +5 +0\.50 +6\.67")

    def test_all_passed(self) -> None:
        k = self.write_lines("ktap.txt", run_all_ktap())
        p = self.run_summary("--require-patched", k)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_skipped_bpf_row_fails_with_btf(self) -> None:
        k = self.write_lines("ktap.txt", run_all_ktap(skip=("bpf_iter",)))
        p = self.run_summary("--require-patched", k)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.run_summary("--btf", "--require-patched", k)
        self.assertEqual(p.returncode, 1)
        self.assertIn("taskstats: bpf_iter skip (kernel has no BTF)",
                      p.stderr)

    def test_missing_check_fails(self) -> None:
        lines = [x for x in run_all_ktap() if "ks_empty_write" not in x]
        k = self.write_lines("ktap.txt", lines)
        p = self.run_summary("--require-patched", k)
        self.assertEqual(p.returncode, 1)
        self.assertIn("ks_empty_write_resets missing", p.stderr)

    def test_ab_stream_checks_the_candidate(self) -> None:
        k = self.write_lines("ab.txt", ab_ktap(("ioctl", "bpf_iter3"), ()))
        p = self.run_summary("--require-patched", k)
        self.assertEqual(p.returncode, 0, p.stderr)
        k = self.write_lines("ab.txt", ab_ktap((), ("bpf_iter3",)))
        p = self.run_summary("--btf", "--require-patched", k)
        self.assertEqual(p.returncode, 1)
        self.assertIn("memcg_ks: bpf_iter3 skip", p.stderr)

    def test_no_program_or_file_fails(self) -> None:
        k = self.write_lines("empty.txt", ["TAP version 13", "1..0"])
        p = self.run_summary("--require-patched", k)
        self.assertEqual(p.returncode, 1)
        self.assertIn("neither", p.stderr)
        p = self.run_summary("--require-patched",
                             os.path.join(self.tmp.name, "no"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot read", p.stderr)

if __name__ == "__main__":
    unittest.main()
