#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Side-by-side table of one memcg_ks JSON result (memcg_stat_read.sh).

Per file and filter: the median microseconds of one read kept-fd
(per_read), open+read+close (per_cat) and an external cat (cat_process),
with the ratios cat/read and cat/per_cat, then ks / legacy ratios, then
the BPF cgroup iterator rows against legacy and the .ks filters.
"""

import json
import re
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

NAME_RE = re.compile(
    r"^(stat|numa_stat)_(legacy|ks\w*?)_(per_read|per_cat|cat_process)$")
BPF_RE = re.compile(r"^bpf_iter(\d+)$")
FILES = {"stat": "memory.stat", "numa_stat": "memory.numa_stat"}
# A row of the JSON; a cell's key: (file, variant, mode).
Row = Dict[str, Any]
Cells = Dict[Tuple[str, str, str], float]


def cells_of(rows: Sequence[Row]) -> Tuple[Cells, List[str]]:
    """{(file, variant, mode): median} of the rows that passed, and the
    variants, legacy first."""
    cells: Cells = {}
    variants: List[str] = []
    for r in rows:
        m = NAME_RE.match(r.get("name", ""))
        if not m or r.get("status") != "ok" or "median" not in r:
            continue
        f, v, mode = m.groups()
        cells[(f, v, mode)] = r["median"]
        if v not in variants:
            variants.append(v)
    variants.sort(key=lambda v: (v != "legacy", len(v), v))
    return cells, variants


def fmt(x: Optional[float], width: int, digits: int = 3) -> str:
    return "%*.*f" % (width, digits, x) if x is not None else "%*s" % (width, "-")


def ratio(a: Optional[float], b: Optional[float]) -> str:
    return "%10.1f" % (a / b) if a and b else "%10s" % "-"


def table(doc: Row) -> List[str]:
    """The report, as a list of lines."""
    p = doc["params"]
    rows = doc["rows"]
    cells, variants = cells_of(rows)
    out = ["kernel %s, cgroup v%d %s (%s)" % (
        doc["kernel"]["release"], p["cgroup_version"], p["cgroup"],
        p["cgroup_origin"]),
        "%d reads per row (batches of %d), %d cat processes; median us per read, %s"
        % (p["count"], p["batch"], p["cat_count"], doc["clock"]), ""]
    hdr = "%-28s %10s %10s %12s %10s %10s" % (
        "file", "per_read", "per_cat", "cat_process", "cat/read", "cat/pcat")
    out += [hdr, "-" * len(hdr)]
    for v in variants:
        for f in ("stat", "numa_stat"):
            if (f, v, "per_read") not in cells:
                continue
            label = FILES[f] + ("" if v == "legacy" else ".ks [%s]" % v)
            rd, pc, cp = (cells.get((f, v, mode)) for mode in
                          ("per_read", "per_cat", "cat_process"))
            out.append("%-28s %s %s %s %s %s" % (
                label, fmt(rd, 10), fmt(pc, 10), fmt(cp, 12, 1),
                ratio(cp, rd), ratio(cp, pc)))
    dn = next((r for r in rows if r.get("name") == "cat_devnull_process"), None)
    if dn and "median" in dn:
        out.append("%-28s %10s %10s %12.1f" % ("cat /dev/null", "-", "-",
                                               dn["median"]))
    out.append("")
    out += ks_lines(cells, variants)
    out.append("")
    out += bpf_lines(rows, cells)
    return out


def ks_lines(cells: Cells, variants: Sequence[str]) -> List[str]:
    ks = [v for v in variants if v != "legacy"]
    if not ks:
        return ["no .ks rows: the kernel has no memory.stat.ks (or no right to write a filter)"]
    out = ["ks / legacy (median per_read):"]
    for v in ks:
        for f in ("stat", "numa_stat"):
            a = cells.get((f, v, "per_read"))
            b = cells.get((f, "legacy", "per_read"))
            if a and b:
                out.append("  %-22s %-10s x%.2f" % (FILES[f] + ".ks", v, a / b))
    return out


def bpf_lines(rows: Sequence[Row], cells: Cells) -> List[str]:
    """The bpf_iterN rows: us per read, against legacy memory.stat and
    the .ks filter of the same size (per_read), and the load once."""
    bpf = [r for r in rows if BPF_RE.match(r.get("name", ""))]
    ran = [r for r in bpf if r.get("status") == "ok" and "median" in r]
    if not ran:
        why = bpf[0].get("reason") if bpf else None
        return ["no bpf_iter rows ran: %s" % (why or "not in the results")]
    out = ["BPF cgroup iterator (create + read + close of an iterator fd), "
           "median us per read:",
           "  %-12s %10s %10s %10s" % ("row", "per_read", "/legacy", "/ks")]
    legacy = cells.get(("stat", "legacy", "per_read"))
    for r in ran:
        m = BPF_RE.match(r["name"])
        n = m.group(1) if m else ""
        ks = cells.get(("stat", "ks" + n, "per_read"))
        out.append("  %-12s %s %s %s" % (
            r["name"], fmt(r["median"], 10), quotient(r["median"], legacy),
            quotient(r["median"], ks)))
    load_ms = (ran[0].get("extra") or {}).get("load_ms")
    if load_ms is not None:
        out.append("  program load %.1f ms, once for every row; flush: %s"
                   % (load_ms, flush_of(ran[0].get("note"))))
    return out


def flush_of(note: Optional[str]) -> str:
    """The flush a bpf_iter row's note names ("...fd: WAY, then ...")."""
    m = re.search(r"fd: ([^,]+)", note or "")
    return m.group(1) if m else "?"


def quotient(a: Optional[float], b: Optional[float]) -> str:
    return "%10.2f" % (a / b) if a and b else "%10s" % "-"


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: memcg_stat_read.py MEMCG_KS_JSON", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
        lines = table(doc)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("memcg_stat_read.py: %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
