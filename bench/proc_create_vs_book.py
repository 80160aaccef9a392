#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print a proc_create --json file's cells beside Table 28-3 of The Linux
Programming Interface (elapsed, parent CPU, rate for 100,000 creations).

Usage: bench/proc_create_vs_book.py JSON
"""
import os
import sys
from typing import Any, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import cli  # noqa: E402

# Table 28-3: elapsed s, parent CPU s, rate per size.
BOOK = {
    "fork": [(22.27, 7.99, 4544), (26.38, 8.98, 4135), (126.93, 52.55, 1276)],
    "vfork": [(3.52, 2.49, 28955), (3.55, 2.50, 28621), (3.53, 2.51, 28810)],
    "clone": [(2.97, 2.14, 34333), (2.98, 2.13, 34217), (2.93, 2.10, 34688)],
    "fork_exec": [(135.72, 12.39, 764), (146.15, 16.69, 719),
                  (260.34, 61.86, 435)],
    "vfork_exec": [(107.36, 6.27, 969), (107.81, 6.35, 964),
                   (107.97, 6.38, 960)],
}
SIZES = ["1.70MB", "2.70MB", "11.70MB"]
ORDER = ["fork", "vfork", "clone", "fork_exec", "vfork_exec", "posix_spawn",
         "posix_spawn_exec", "clone3_vfork"]
N = 100000


def cell_line(method: str, i: int, size: str, row: Dict[str, Any]) -> str:
    """One cell beside the book's, scaled to N creations."""
    e = row["extra"]
    k = N / e["creations"]
    here = "%8.2f (%6.2f) %7.0f/s" % (e["elapsed_s"] * k,
                                      e["parent_cpu_s"] * k, e["rate_per_s"])
    book = BOOK.get(method)
    if not book:
        return "%-17s %-8s %27s %27s %8s" % (method, size, here, "-", "-")
    b = book[i]
    return "%-17s %-8s %27s %8.2f (%6.2f) %7d/s %7.1fx" % (
        method, size, here, b[0], b[1], b[2], b[0] / (e["elapsed_s"] * k))


def table(doc: Dict[str, Any]) -> List[str]:
    """The lines to print."""
    rows = {r["name"]: r for r in doc["rows"]}
    out = ["proc_create: %s, kernel %s, %s CPUs; book: x86-32, Linux 2.6.27" % (
               doc.get("cmdline", "?"), doc["kernel"]["release"],
               doc["machine"]["cpus"]),
           "seconds for %d creations: elapsed (parent CPU); rate = creations "
           "per elapsed second; x = book elapsed / ours" % N,
           "%-17s %-8s %27s %27s %8s" % ("method", "size", "here", "book", "x")]
    for m in ORDER:
        for i, size in enumerate(SIZES):
            r = rows.get("%s@%s" % (m, size))
            if r is not None and r.get("status") == "ok":
                out.append(cell_line(m, i, size, r))
    return out


if __name__ == "__main__":
    sys.exit(cli.json_table_main("proc_create_vs_book.py", table, sys.argv))
