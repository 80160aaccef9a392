#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the seeds' two comparisons from a test-kernel run.

Reads the kbench JSON results that testkernel/run.sh keeps for the patched
kernel (taskstats.json of one or more process counts, memcg_ks.json) and
prints:
  - taskstats (seed 000): ioctl vs netlink_per_pid, seconds per pass over
    N processes and the speedup, per process count;
  - memcg_ks (seed 001): ks filters of 3/16/32/64/128 fields vs legacy
    memory.stat, microseconds per read (lseek + read on a kept fd) and per
    cat (open + read + close), with the ratio ks / legacy.
Figures from an emulated (TCG) guest are marked as such. A file that
holds several repetitions (boots) gives the median over them.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import results, stats  # noqa: E402

SEED_TASKSTATS = {1000: (0.004446851, 0.001553733),
                  10000: (0.047024986, 0.023290664)}
SEED_MEMCG = "seed: per read legacy ~5 us vs ks 3 fields ~0.85 us; " \
             "per cat legacy ~1315 us vs ks full ~1745 us (with process creation)"


def load(path):
    """The header of the file's test and its rows by name, or None."""
    try:
        run = results.load(path)
    except results.ResultError as e:
        print(f"summary: {e}", file=sys.stderr)
        return None
    test = next(iter(run.tests.values()))
    return test.doc, {name: Summary(row) for name, row in test.rows.items()}


class Summary(dict):
    """A row as the tables read it: status, and figures that are the
    median over the repetitions (extra figures too)."""

    def __init__(self, row):
        super().__init__(status=row.status)
        med = row.values("median")
        if med:
            self["median"] = stats.median(med)
        extra = {}
        for rep in row.reps:
            for k, v in (rep.get("extra") or {}).items():
                if isinstance(v, (int, float)) and rep.get("status",
                                                           "ok") == "ok":
                    extra.setdefault(k, []).append(float(v))
        self["extra"] = {k: stats.median(v) for k, v in extra.items()}


def where(doc):
    guest = (doc.get("machine") or {}).get("guest")
    rel = (doc.get("kernel") or {}).get("release", "?")
    return f"{rel}, {'guest ' + guest.upper() if guest else 'host'}"


def fmt(v, unit=""):
    return "-" if v is None else f"{v:.6g}{unit}"


def taskstats_table(paths):
    print("taskstats (seed 000): one pass over N processes, seconds (median of passes)")
    print(f"{'N':>6} {'netlink_per_pid':>16} {'ioctl':>12} {'speedup':>8}"
          f"   {'seed netlink':>12} {'seed ioctl':>11} {'seed x':>7}  kernel, where")
    for path in paths:
        loaded = load(path)
        if not loaded:
            continue
        doc, r = loaded
        n = int(doc.get("params", {}).get("nr_process", 0))
        nl = r.get("netlink_per_pid", {})
        io = r.get("ioctl", {})
        nl_s = (nl.get("extra") or {}).get("pass_s_median")
        io_s = (io.get("extra") or {}).get("pass_s_median")
        x = nl_s / io_s if nl_s and io_s else None
        seed = SEED_TASKSTATS.get(n)
        seed_cols = (f"{seed[0]:>12.6f} {seed[1]:>11.6f} {seed[0] / seed[1]:>6.2f}x"
                     if seed else f"{'-':>12} {'-':>11} {'-':>7}")
        io_txt = fmt(io_s) if io.get("status") == "ok" else io.get("status", "-")
        print(f"{n:>6} {fmt(nl_s):>16} {io_txt:>12} "
              f"{(f'{x:.2f}x' if x else '-'):>8}   {seed_cols}  {where(doc)}")


def memcg_table(path):
    loaded = load(path)
    if not loaded:
        return
    doc, r = loaded
    print(f"memcg_ks (seed 001): microseconds per read, median; ratio = ks / legacy ({where(doc)})")
    for f in ("stat", "numa_stat"):
        print(f"  {'memory.' + f:<16} {'per_read':>10} {'ratio':>7} {'per_cat':>10} {'ratio':>7}")
        legacy = {m: r.get(f"{f}_legacy_{m}", {}).get("median")
                  for m in ("per_read", "per_cat")}
        for v in ("legacy", "ks3", "ks16", "ks32", "ks64", "ks128", "ks_keys"):
            cols = []
            for m in ("per_read", "per_cat"):
                row = r.get(f"{f}_{v}_{m}", {})
                med = row.get("median") if row.get("status") == "ok" else None
                ratio = med / legacy[m] if med and legacy[m] else None
                cols.append(f"{fmt(med) if med else row.get('status', '-'):>10} "
                            f"{(f'{ratio:.2f}' if ratio and v != 'legacy' else ''):>7}")
            print(f"  {v:<16} {' '.join(cols)}")
    print(f"  ({SEED_MEMCG})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--taskstats", action="append", default=[],
                    help="a taskstats.json (repeatable, one per process count)")
    ap.add_argument("--memcg", help="a memcg_ks.json")
    a = ap.parse_args()
    if a.taskstats:
        taskstats_table([p for p in a.taskstats if os.path.exists(p)])
        print()
    if a.memcg:
        memcg_table(a.memcg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
