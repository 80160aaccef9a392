#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print fork_vs_size.sh's table from a proc_create --json file:
per size, median and p10 per creation of fork, vfork and posix_spawn,
relative to the smallest size, and fork's cost per resident page.

Usage: bench/fork_vs_size.py JSON
"""
import os
import sys
from typing import Any, Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import cli  # noqa: E402

METHODS = ["fork", "vfork", "posix_spawn"]
# A JSON row by (method, size).
Cells = Dict[Tuple[str, str], Dict[str, Any]]


def measured_cells(doc: Dict[str, Any]) -> Tuple[Cells, List[str]]:
    """The measured METHOD@SIZE rows by (method, size), sizes in order."""
    cells: Cells = {}
    sizes: List[str] = []
    for row in doc["rows"]:
        if "@" not in row["name"] or row.get("status") != "ok":
            continue
        method, size = row["name"].split("@", 1)
        cells[(method, size)] = row
        if size not in sizes:
            sizes.append(size)
    return cells, sizes


def size_line(cells: Cells, size: str, base: str) -> str:
    """One size's line: VmSize, VmRSS, each method, fork ns per page."""
    ref = cells[("fork", size)]
    ext = ref["extra"]
    line = "%-9s %11.2f %11.2f" % (size, ext["vmsize_kib"] / 1024.0,
                                   ext["vmrss_kib"] / 1024.0)
    for m in METHODS:
        c, b = cells.get((m, size)), cells.get((m, base))
        if c is None or b is None:
            line += " %24s" % "-"
        else:
            cp, bp = c["extra"]["p10"], b["extra"]["p10"]
            line += " %8.1f %7.1f %6.1fx" % (c["median"], cp, cp / bp)
    b = cells.get(("fork", base))
    pages = (ext["vmrss_kib"] - b["extra"]["vmrss_kib"]) / 4.0 if b else 0
    if b and pages > 1000:
        line += " %14.1f" % ((ext["p10"] - b["extra"]["p10"]) *
                             1000.0 / pages)
    else:
        line += " %14s" % "-"
    return line


def table(doc: Dict[str, Any]) -> List[str]:
    """The lines to print; ValueError when nothing was measured."""
    cells, sizes = measured_cells(doc)
    if not sizes:
        raise ValueError("no measured cells in the JSON")
    base = sizes[0]
    out = ["",
           "us per creation (create + exit + wait): median, 10th percentile (p10),",
           "x = p10 relative to its p10 at %s (p10 resists the load of a "
           "shared machine)" % base]
    head = "%-9s %11s %11s" % ("size", "VmSize MB", "VmRSS MB")
    for m in METHODS:
        head += " %24s" % (m + " med/p10/x")
    out.append(head + " %14s" % "fork ns/page")
    out += [size_line(cells, s, base) for s in sizes if ("fork", s) in cells]
    for row in doc["rows"]:
        if row["name"].endswith(("_flat", "_grows")):
            ext = row.get("extra", {})
            out.append("%-17s %-4s ratio=%s bound=%s" % (
                row["name"], row["status"], ext.get("ratio", "-"),
                ext.get("bound", "-")))
    return out


if __name__ == "__main__":
    sys.exit(cli.json_table_main("fork_vs_size.py", table, sys.argv))
