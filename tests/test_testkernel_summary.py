# SPDX-License-Identifier: GPL-2.0
"""Tests of testkernel/summary.py: the tables and --require-patched."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = os.path.join(HERE, "..", "testkernel", "summary.py")
sys.path.insert(0, os.path.join(HERE, "..", "testkernel"))

import summary  # noqa: E402


def row(name, median=1.0, status="ok", extra=None, reason=None, note=None):
    r = {"name": name, "status": status}
    if status == "ok":
        r.update(unit="us", n=10, mean=median, median=median, min=median,
                 max=median)
        r["extra"] = extra or {}
    if reason:
        r["reason"] = reason
    if note:
        r["note"] = note
    return r


def doc(test, rows, params=None):
    return {"schema": "kbench-results/1", "test": test,
            "kernel": {"release": "6.12.117-kbench-patched"},
            "machine": {"guest": "tcg"}, "params": params or {},
            "date": "2026-01-01T00:00:00Z", "rows": rows}


def taskstats_rows(bpf_status="ok"):
    rows = [row(n) for n in summary.PATCHED_TASKSTATS
            if n not in ("ioctl", "bpf_iter")]
    for i, m in enumerate(summary.TS_METHODS, 1):
        status = bpf_status if m == "bpf_iter" else "ok"
        rows.append(row(m, status=status,
                        extra={"pass_s_median": 0.01 * i, "load_ms": 99.0},
                        reason=None if status == "ok" else
                        "kernel has no BTF"))
    return rows


def memcg_rows():
    rows = [row(n) for n in summary.PATCHED_MEMCG
            if not n.startswith(("bpf_iter", "stat_ks"))]
    rows.append(row("stat_legacy_per_read", 10.0))
    rows.append(row("bpf_iter_matches_stat"))
    for n in summary.KS_SIZES:
        rows.append(row(f"stat_ks{n}_per_read", n / 4))
        rows.append(row(f"bpf_iter{n}", 5.0, extra={"load_ms": 1000.0},
                        note="create + read + close of a cgroup iterator "
                        "fd: cgroup_rstat_flush, then 3 counters"))
    return rows


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, content):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(content, f)
        return path

    def run_summary(self, *args):
        return subprocess.run([sys.executable, SUMMARY, *args], text=True,
                              capture_output=True, check=False)

    def files(self, bpf_status="ok"):
        ts = self.write("taskstats.json",
                        doc("taskstats", taskstats_rows(bpf_status),
                            {"nr_process": 1000}))
        mc = self.write("memcg_ks.json", doc("memcg_ks", memcg_rows()))
        return ts, mc

    def test_all_ran(self):
        ts, mc = self.files()
        p = self.run_summary("--require-patched", "--taskstats", ts,
                             "--memcg", mc)
        self.assertEqual(p.returncode, 0, p.stderr)
        # bpf_iter is the 6th method: 0.06 s, 0.01 / 0.06 of per-pid.
        self.assertIn("0.06 (0.17x)", p.stdout)
        self.assertIn("99 ms", p.stdout)
        self.assertIn("flush: cgroup_rstat_flush", p.stdout)
        # bpf_iter3: 5 us, legacy 10 us, ks3 0.75 us.
        self.assertRegex(p.stdout, r"bpf_iter3 +5 +0\.50 +6\.67")

    def test_skipped_bpf_row_fails(self):
        ts, mc = self.files(bpf_status="skip")
        p = self.run_summary("--require-patched", "--taskstats", ts,
                             "--memcg", mc)
        self.assertEqual(p.returncode, 1)
        self.assertIn("bpf_iter skip (kernel has no BTF)", p.stderr)
        # Without the option the same files only print.
        p = self.run_summary("--taskstats", ts, "--memcg", mc)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_missing_file_fails(self):
        ts, _ = self.files()
        p = self.run_summary("--require-patched", "--taskstats", ts,
                             "--memcg", os.path.join(self.tmp.name, "no"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("unreadable", p.stderr)

    def test_nothing_given_fails(self):
        p = self.run_summary("--require-patched")
        self.assertEqual(p.returncode, 1)


if __name__ == "__main__":
    unittest.main()
