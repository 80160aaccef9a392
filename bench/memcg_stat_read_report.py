#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of bench/memcg_stat_read.sh from memcg_ks's JSON: one
read of memory.stat / numa_stat (and their .ks files) three ways.

Run by bench/memcg_stat_read.sh, which passes: $tmp/memcg_ks.json
"""


def main():
    import json
    import re
    import sys

    doc = json.load(open(sys.argv[1]))
    p = doc["params"]
    rows = {r["name"]: r for r in doc["rows"]}
    name_re = re.compile(r"^(stat|numa_stat)_(legacy|ks\w*?)_(per_read|per_cat|cat_process)$")
    cells = {}
    variants = []
    for name, r in rows.items():
        m = name_re.match(name)
        if not m or r.get("status") != "ok" or "median" not in r:
            continue
        f, v, mode = m.groups()
        cells[(f, v, mode)] = r["median"]
        if v not in variants:
            variants.append(v)
    variants.sort(key=lambda v: (v != "legacy", len(v), v))

    print("kernel %s, cgroup v%d %s (%s)" % (doc["kernel"]["release"],
          p["cgroup_version"], p["cgroup"], p["cgroup_origin"]))
    print("%d reads per row (batches of %d), %d cat processes; median us per read, %s"
          % (p["count"], p["batch"], p["cat_count"], doc["clock"]))
    print()
    hdr = "%-28s %10s %10s %12s %10s %10s" % ("file", "per_read", "per_cat",
                                              "cat_process", "cat/read", "cat/pcat")
    print(hdr)
    print("-" * len(hdr))
    files = {"stat": "memory.stat", "numa_stat": "memory.numa_stat"}
    for v in variants:
        for f in ("stat", "numa_stat"):
            if (f, v, "per_read") not in cells:
                continue
            label = files[f] + ("" if v == "legacy" else ".ks [%s]" % v)
            get = lambda mode: cells.get((f, v, mode))
            rd, pc, cp = get("per_read"), get("per_cat"), get("cat_process")
            fmt = lambda x, w, d=3: ("%*.*f" % (w, d, x)) if x is not None else "%*s" % (w, "-")
            ratio = lambda a, b: ("%10.1f" % (a / b)) if a and b else "%10s" % "-"
            print("%-28s %s %s %s %s %s" % (label, fmt(rd, 10), fmt(pc, 10),
                  fmt(cp, 12, 1), ratio(cp, rd), ratio(cp, pc)))
    dn = rows.get("cat_devnull_process")
    if dn and "median" in dn:
        print("%-28s %10s %10s %12.1f" % ("cat /dev/null", "-", "-", dn["median"]))
    print()
    ks = [v for v in variants if v != "legacy"]
    if ks:
        print("ks / legacy (median per_read):")
        for v in ks:
            for f in ("stat", "numa_stat"):
                a, b = cells.get((f, v, "per_read")), cells.get((f, "legacy", "per_read"))
                if a and b:
                    print("  %-22s %-10s x%.2f" % (files[f] + ".ks", v, a / b))
    else:
        print("no .ks rows: the kernel has no memory.stat.ks (or no right to write a filter)")


if __name__ == "__main__":
    main()
