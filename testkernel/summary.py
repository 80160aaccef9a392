#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the seeds' two comparisons from a test-kernel run.

Reads the kbench JSON results that testkernel/run.sh keeps for the patched
kernel (taskstats.json of one or more process counts, memcg_ks.json) and
prints:
  - taskstats (seed 000): every method of one pass over N processes
    (per-pid and batched netlink, procfs, procfs_pread, the RFC ioctl and
    the BPF task iterator), seconds per pass and the ratio of per-pid
    netlink to each, the iterator's load once, per process count;
  - memcg_ks (seed 001): ks filters of 3/16/32/64/128 fields vs legacy
    memory.stat, microseconds per read (lseek + read on a kept fd) and per
    cat (open + read + close), with the ratio ks / legacy; then the BPF
    cgroup iterator reading the same selections, with its ratio to legacy
    and to the .ks filter of the same size.
Figures from an emulated (TCG) guest are marked as such. A file that
holds several repetitions (boots) gives the median over them.

--require-patched KTAP exits 1 unless every row and check that needs the
patched kernel (ioctl, .ks; with --btf also bpf_iter) passed in that run_all.sh
KTAP stream: a kernel that lost an interface or its BTF must not pass as
one that has them.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import ktap, results, stats  # noqa: E402

SEED_TASKSTATS = {1000: (0.004446851, 0.001553733),
                  10000: (0.047024986, 0.023290664)}
SEED_MEMCG = "seed: per read legacy ~5 us vs ks 3 fields ~0.85 us; " \
             "per cat legacy ~1315 us vs ks full ~1745 us (with process creation)"
TS_METHODS = ("netlink_per_pid", "netlink_batched", "procfs", "procfs_pread",
              "ioctl", "bpf_iter")
KS_SIZES = (3, 16, 32, 64, 128)
# Results that pass only on the patched kernel (and as root), by
# program; BTF_ROWS only when that kernel has BTF as well (--btf).
# Checks that pass leave no JSON row, so the KTAP is read.
PATCHED = {
    "taskstats": ("ioctl_matches_netlink", "ioctl_errors", "ioctl"),
    "memcg_ks": ("ks_matches_legacy", "ks_invalid_filter_rejected",
                 "ks_empty_write_resets", "stat_ks3_per_read"),
}
BTF_ROWS = {
    "taskstats": ("bpf_iter_matches_netlink", "bpf_iter"),
    "memcg_ks": ("bpf_iter_matches_stat",) +
    tuple(f"bpf_iter{n}" for n in KS_SIZES),
}
PROGRAM_RE = re.compile(r"selftests: kbench/[^:]+: (\S+)")


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
    """A row as the tables read it: status, reason, note, and figures that
    are the median over the repetitions (extra figures too)."""

    def __init__(self, row):
        super().__init__(status=row.status, reason=row.reason, note=row.note)
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


def pass_s(row):
    """Seconds per pass of a method row that ran, else None."""
    if row.get("status") != "ok":
        return None
    return (row.get("extra") or {}).get("pass_s_median")


def method_cell(row, base_s):
    """'SECONDS (RATIOx)' of a method, or its status."""
    s = pass_s(row)
    if s is None:
        return row.get("status", "-")
    return f"{s:.4g} ({base_s / s:.2f}x)" if base_s else f"{s:.4g}"


def taskstats_table(paths):
    print("taskstats (seed 000): one pass over N processes, seconds (median "
          "of passes); (Rx) = netlink_per_pid / method")
    print(f"{'N':>6} " + " ".join(f"{m:>18}" for m in TS_METHODS) +
          f" {'bpf_iter load':>14}  kernel, where")
    seeds = []
    for path in paths:
        loaded = load(path)
        if not loaded:
            continue
        doc, r = loaded
        n = int(doc.get("params", {}).get("nr_process", 0))
        base = pass_s(r.get("netlink_per_pid", {}))
        cells = [method_cell(r.get(m, {}), base) for m in TS_METHODS]
        load_ms = (r.get("bpf_iter", {}).get("extra") or {}).get("load_ms")
        load_txt = fmt(load_ms, " ms") if pass_s(r.get("bpf_iter", {})) else "-"
        print(f"{n:>6} " + " ".join(f"{c:>18}" for c in cells) +
              f" {load_txt:>14}  {where(doc)}")
        if n in SEED_TASKSTATS:
            seeds.append(n)
    for n in seeds:
        nl, io = SEED_TASKSTATS[n]
        print(f"  seed (2021, RFC kernel, N={n}): netlink {nl:.6f} ioctl "
              f"{io:.6f} ({nl / io:.2f}x)")


def ks_tables(r):
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


def flush_way(note):
    """The flush a bpf_iter row's note names ("...: WAY, then ...")."""
    if not note or ": " not in note:
        return None
    return note.split(": ", 1)[1].split(", then", 1)[0]


def bpf_table(r):
    legacy = r.get("stat_legacy_per_read", {}).get("median")
    print("  BPF cgroup iterator (create + read + close of an iterator fd), "
          "us per read; ratio to legacy per_read and to the .ks per_read of "
          "the same size")
    print(f"  {'':<16} {'per_read':>10} {'/legacy':>7} {'/ks':>7}")
    load_ms = flush = None
    for n in KS_SIZES:
        row = r.get(f"bpf_iter{n}", {})
        if row.get("status") != "ok":
            print(f"  {'bpf_iter' + str(n):<16} {row.get('status', '-'):>10}")
            continue
        med = row.get("median")
        ks = r.get(f"stat_ks{n}_per_read", {})
        ks_med = ks.get("median") if ks.get("status") == "ok" else None
        rl = f"{med / legacy:.2f}" if med and legacy else ""
        rk = f"{med / ks_med:.2f}" if med and ks_med else ""
        print(f"  {'bpf_iter' + str(n):<16} {fmt(med):>10} {rl:>7} {rk:>7}")
        load_ms = (row.get("extra") or {}).get("load_ms", load_ms)
        flush = flush_way(row.get("note")) or flush
    if load_ms is not None:
        print(f"  load: {load_ms:.1f} ms once; flush: {flush or '?'}")


def memcg_table(path):
    loaded = load(path)
    if not loaded:
        return
    doc, r = loaded
    print(f"memcg_ks (seed 001): microseconds per read, median; ratio = ks / legacy ({where(doc)})")
    ks_tables(r)
    bpf_table(r)
    print(f"  ({SEED_MEMCG})")


def program_results(path):
    """{program: {result name: Result}} of a run_all.sh KTAP stream (or
    of run_all.sh --vs-kernel's, its candidate side)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            doc = ktap.parse(f.read())
    except OSError as e:
        raise results.ResultError(f"cannot read {path}: {e.strerror}") from e
    out = {}
    collect_programs(doc, out)
    return out


def collect_programs(doc, out):
    """Programs' results at any depth (an A/B stream nests each boot's
    run_all.sh stream); the unpatched side of an A/B run is left out."""
    for r in doc.results:
        if r.child is None or r.name.startswith("kbench: base "):
            continue
        m = PROGRAM_RE.search(r.name)
        if m:
            out.setdefault(m.group(1), {}).update(
                (c.name, c) for c in r.child.results)
        else:
            collect_programs(r.child, out)


def not_run(path, btf=False):
    """'FILE: PROGRAM: NAME DID (why)' for each row of the patched
    kernel's (with btf, also each BPF iterator row) that did not pass in
    the KTAP stream at path."""
    try:
        progs = program_results(path)
    except results.ResultError as e:
        return [str(e)]
    if not set(PATCHED) & set(progs):
        return [f"{path}: neither {' nor '.join(PATCHED)} ran"]
    out = []
    for prog, got in progs.items():
        names = PATCHED.get(prog, ()) + (BTF_ROWS.get(prog, ()) if btf
                                          else ())
        for name in names:
            r = got.get(name)
            if r is None:
                out.append(f"{path}: {prog}: {name} missing")
            elif r.kind != "pass":
                out.append(f"{path}: {prog}: {name} {r.kind}"
                           f" ({r.reason or 'no reason'})")
    return out


def require_patched(ktap_paths, btf=False):
    """0 when every ioctl and .ks row and check (with btf, every bpf_iter
    one too) passed in each stream, else 1 (each listed on stderr)."""
    missing = [] if ktap_paths else ["no KTAP stream given (--ktap)"]
    for p in ktap_paths:
        missing += not_run(p, btf)
    for m in missing:
        print(f"summary: did not run on the patched kernel: {m}",
              file=sys.stderr)
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--taskstats", action="append", default=[],
                    help="a taskstats.json (repeatable, one per process count)")
    ap.add_argument("--memcg", help="a memcg_ks.json")
    ap.add_argument("--require-patched", action="append", default=[],
                    metavar="KTAP",
                    help="exit 1 unless the ioctl and .ks rows and checks "
                    "all passed (not skipped) in this run_all.sh KTAP "
                    "stream (repeatable)")
    ap.add_argument("--btf", action="store_true",
                    help="the patched kernel has BTF: --require-patched "
                    "requires the bpf_iter rows and checks too")
    a = ap.parse_args()
    if a.taskstats:
        taskstats_table([p for p in a.taskstats if os.path.exists(p)])
        print()
    if a.memcg:
        memcg_table(a.memcg)
    if a.require_patched:
        return require_patched(a.require_patched, a.btf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
