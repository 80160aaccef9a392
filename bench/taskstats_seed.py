#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The seed 000 table from the JSON files of bench/taskstats_seed.sh.

Usage: taskstats_seed.py OUTDIR GOAL SIZE...
Reads OUTDIR/taskstats_SIZE.json for each SIZE, prints seconds per pass
(median) per method, the ratio of each to per-pid netlink and the goal
(netlink_batched GOAL times faster than netlink_per_pid at 1000
processes). Exit status 1 when the goal is missed or not measured.
"""
import json
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

METHODS = ["netlink_per_pid", "netlink_batched", "procfs", "procfs_pread",
           "ioctl", "bpf_iter"]
SEED = {"1000": {"netlink_per_pid": 0.004446851, "ioctl": 0.001553733},
        "10000": {"netlink_per_pid": 0.047024986, "ioctl": 0.023290664}}


Json = Dict[str, Any]
Rows = Dict[str, Json]


def load(outdir: str, sizes: Sequence[str]) -> Tuple[Rows, str]:
    """Rows by name per size, the process count and the kernel release."""
    rows: Rows = {}
    kernel = "?"
    for n in sizes:
        with open(f"{outdir}/taskstats_{n}.json") as f:
            doc = json.load(f)
        rows[n] = {r["name"]: r for r in doc["rows"]}
        rows[n]["_n"] = doc["params"].get("nr_process", n)
        kernel = doc["kernel"]["release"]
    return rows, kernel


def pass_s(rows: Rows, n: str, m: str) -> Optional[float]:
    r = rows[n].get(m)
    if not r or r.get("status") != "ok" or "extra" not in r:
        return None
    return float(r["extra"]["pass_s_median"])


def header() -> str:
    return f"{'process-count':<16}" + "".join(f"{m:>17}" for m in METHODS)


def print_tables(rows: Rows, kernel: str, sizes: Sequence[str]) -> None:
    print(f"kernel {kernel}; seconds per pass over all processes (median)")
    print(header())
    print("-" * (16 + 17 * len(METHODS)))
    for n in sizes:
        cells = []
        for m in METHODS:
            v = pass_s(rows, n, m)
            cells.append(f"{v:17.9f}" if v is not None else f"{'skip':>17}")
        print(f"{int(rows[n]['_n']):<16}" + "".join(cells))
    print()
    print("ratio per-pid netlink / method (x faster than netlink_per_pid)")
    print(header())
    for n in sizes:
        base = pass_s(rows, n, "netlink_per_pid")
        cells = []
        for m in METHODS:
            v = pass_s(rows, n, m)
            cells.append(f"{base / v:16.2f}x" if base and v else f"{'-':>17}")
        print(f"{int(rows[n]['_n']):<16}" + "".join(cells))
    print()
    for n in sizes:
        r = rows[n].get("bpf_iter") or {}
        if r.get("status") == "ok" and "load_ms" in r.get("extra", {}):
            print(f"bpf_iter at {n}: program load {r['extra']['load_ms']:.3f} "
                  "ms, once (not in the passes above)")
    print()
    print("seed (2021, RFC kernel):")
    for n, s in SEED.items():
        print(f"  {n:>6}: netlink {s['netlink_per_pid']:.9f}  "
              f"ioctl {s['ioctl']:.9f}  "
              f"({s['netlink_per_pid'] / s['ioctl']:.2f}x)")


def judge_goal(rows: Rows, goal: float) -> int:
    if "1000" not in rows:
        return 0
    base = pass_s(rows, "1000", "netlink_per_pid")
    bat = pass_s(rows, "1000", "netlink_batched")
    if not (base and bat):
        print("\ngoal: not measured (netlink rows skipped: run as root)")
        return 1
    r = base / bat
    verdict = "met" if r >= goal else "MISSED"
    print(f"\ngoal: netlink_batched >= {goal}x faster than netlink_per_pid "
          f"at 1000: {r:.2f}x, {verdict}")
    return 0 if r >= goal else 1


def main(argv: List[str]) -> int:
    if len(argv) < 4:
        print((__doc__ or "").strip().splitlines()[2], file=sys.stderr)
        return 2
    outdir, goal, sizes = argv[1], float(argv[2]), argv[3:]
    rows, kernel = load(outdir, sizes)
    print_tables(rows, kernel, sizes)
    return judge_goal(rows, goal)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
