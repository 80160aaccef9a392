#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of bench/taskstats_seed.sh: taskstats' JSON per process
count against the seed's goal.

Run by bench/taskstats_seed.sh, which passes: $outdir $goal $sizes
"""


def main():
    import json, sys

    outdir, goal, sizes = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    methods = ["netlink_per_pid", "netlink_batched", "procfs", "procfs_pread", "ioctl"]
    seed = {"1000": {"netlink_per_pid": 0.004446851, "ioctl": 0.001553733},
            "10000": {"netlink_per_pid": 0.047024986, "ioctl": 0.023290664}}
    rows = {}
    for n in sizes:
        doc = json.load(open(f"{outdir}/taskstats_{n}.json"))
        rows[n] = {r["name"]: r for r in doc["rows"]}
        rows[n]["_n"] = doc["params"].get("nr_process", n)
        kernel = doc["kernel"]["release"]

    def pass_s(n, m):
        r = rows[n].get(m)
        if not r or r.get("status") != "ok" or "extra" not in r:
            return None
        return r["extra"]["pass_s_median"]

    print(f"kernel {kernel}; seconds per pass over all processes (median)")
    print(f"{'process-count':<16}" + "".join(f"{m:>17}" for m in methods))
    print("-" * (16 + 17 * len(methods)))
    for n in sizes:
        cells = []
        for m in methods:
            v = pass_s(n, m)
            cells.append(f"{v:17.9f}" if v is not None else f"{'skip':>17}")
        print(f"{int(rows[n]['_n']):<16}" + "".join(cells))
    print()
    print("ratio per-pid netlink / method (x faster than netlink_per_pid)")
    print(f"{'process-count':<16}" + "".join(f"{m:>17}" for m in methods))
    for n in sizes:
        base = pass_s(n, "netlink_per_pid")
        cells = []
        for m in methods:
            v = pass_s(n, m)
            cells.append(f"{base / v:16.2f}x" if base and v else f"{'-':>17}")
        print(f"{int(rows[n]['_n']):<16}" + "".join(cells))
    print()
    print("seed (2021, RFC kernel):")
    for n, s in seed.items():
        print(f"  {n:>6}: netlink {s['netlink_per_pid']:.9f}  ioctl {s['ioctl']:.9f}"
              f"  ({s['netlink_per_pid'] / s['ioctl']:.2f}x)")
    status = 0
    if "1000" in rows:
        base, bat = pass_s("1000", "netlink_per_pid"), pass_s("1000", "netlink_batched")
        if base and bat:
            r = base / bat
            verdict = "met" if r >= goal else "MISSED"
            print(f"\ngoal: netlink_batched >= {goal}x faster than netlink_per_pid at 1000: "
                  f"{r:.2f}x, {verdict}")
            status = 0 if r >= goal else 1
        else:
            print("\ngoal: not measured (netlink rows skipped: run as root)")
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
