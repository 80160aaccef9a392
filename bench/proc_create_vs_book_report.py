#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of bench/proc_create_vs_book.sh: proc_create's JSON
beside Table 28-3 of The Linux Programming Interface.

Run by bench/proc_create_vs_book.sh, which passes: $json
"""


def main():
    import json
    import sys

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

    doc = json.load(open(sys.argv[1]))
    rows = {r["name"]: r for r in doc["rows"]}
    print("proc_create: %s, kernel %s, %s CPUs; book: x86-32, Linux 2.6.27" % (
        doc.get("cmdline", "?"), doc["kernel"]["release"],
        doc["machine"]["cpus"]))
    print("seconds for %d creations: elapsed (parent CPU); rate = creations per "
          "elapsed second; x = book elapsed / ours" % N)
    print("%-17s %-8s %27s %27s %8s" % ("method", "size", "here", "book", "x"))
    for m in ORDER:
        for i, size in enumerate(SIZES):
            r = rows.get("%s@%s" % (m, size))
            if r is None or r.get("status") != "ok":
                continue
            e = r["extra"]
            k = N / e["creations"]
            here = "%8.2f (%6.2f) %7.0f/s" % (e["elapsed_s"] * k,
                                              e["parent_cpu_s"] * k,
                                              e["rate_per_s"])
            book = BOOK.get(m)
            if book:
                b = book[i]
                print("%-17s %-8s %27s %8.2f (%6.2f) %7d/s %7.1fx" % (
                    m, size, here, b[0], b[1], b[2], b[0] / (e["elapsed_s"] * k)))
            else:
                print("%-17s %-8s %27s %27s %8s" % (m, size, here, "-", "-"))


if __name__ == "__main__":
    main()
