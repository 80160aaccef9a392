#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of bench/fork_vs_size.sh from proc_create's JSON:
each method's cost per parent size, relative to the book's 1.70 MB,
and fork's cost per resident page.

Run by bench/fork_vs_size.sh, which passes: $json
"""


def main():
    import json
    import sys

    doc = json.load(open(sys.argv[1]))
    methods = ["fork", "vfork", "posix_spawn"]
    cells = {}
    sizes = []
    for row in doc["rows"]:
        if "@" not in row["name"] or row.get("status") != "ok":
            continue
        method, size = row["name"].split("@", 1)
        cells[(method, size)] = row
        if size not in sizes:
            sizes.append(size)

    if not sizes:
        sys.exit("fork_vs_size.sh: no measured cells in the JSON")

    base = sizes[0]
    print()
    print("us per creation (create + exit + wait): median, 10th percentile (p10),")
    print("x = p10 relative to its p10 at %s (p10 resists the load of a shared machine)" % base)
    head = "%-9s %11s %11s" % ("size", "VmSize MB", "VmRSS MB")
    for m in methods:
        head += " %24s" % (m + " med/p10/x")
    head += " %14s" % "fork ns/page"
    print(head)
    for size in sizes:
        ref = cells.get(("fork", size))
        if ref is None:
            continue
        ext = ref["extra"]
        line = "%-9s %11.2f %11.2f" % (size, ext["vmsize_kib"] / 1024.0,
                                       ext["vmrss_kib"] / 1024.0)
        for m in methods:
            c, b = cells.get((m, size)), cells.get((m, base))
            if c is None or b is None:
                line += " %24s" % "-"
            else:
                cp, bp = c["extra"]["p10"], b["extra"]["p10"]
                line += " %8.1f %7.1f %6.1fx" % (c["median"], cp, cp / bp)
        b = cells.get(("fork", base))
        pages = (ext["vmrss_kib"] - b["extra"]["vmrss_kib"]) / 4.0
        if pages > 1000:
            line += " %14.1f" % ((ref["extra"]["p10"] - b["extra"]["p10"]) *
                                 1000.0 / pages)
        else:
            line += " %14s" % "-"
        print(line)
    for row in doc["rows"]:
        if row["name"].endswith(("_flat", "_grows")):
            ext = row.get("extra", {})
            print("%-17s %-4s ratio=%s bound=%s" % (
                row["name"], row["status"], ext.get("ratio", "-"),
                ext.get("bound", "-")))


if __name__ == "__main__":
    main()
