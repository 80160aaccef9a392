#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reproduce the table of seed 000 (the /proc/taskstats RFC benchmark):
# seconds per pass over 1000 and 10000 processes, for every method, in one
# run, with the ratio of each method to per-pid netlink, and what loading
# the bpf_iter program costs once. Goal: batched netlink at least 1.2x
# faster than per-pid netlink at 1000 processes.
#
# Usage: bench/taskstats_seed.sh [-p PASSES] [-K BATCH] [-s "1000 10000"] [-o DIR]
# Needs CAP_NET_ADMIN for the netlink rows (run as root).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
passes=20
batch=64
sizes="1000 10000"
outdir=""
goal=1.2

usage() {
	sed -n '4,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while getopts "p:K:s:o:h" o; do
	case $o in
	p) passes=$OPTARG ;;
	K) batch=$OPTARG ;;
	s) sizes=$OPTARG ;;
	o) outdir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

make -s -C "$here/taskstats" >/dev/null

if [[ -z $outdir ]]; then
	outdir=$(mktemp -d /tmp/taskstats_seed.XXXXXX)
	trap 'rm -rf "$outdir"' EXIT
fi
mkdir -p "$outdir"

for n in $sizes; do
	echo "== $n processes: taskstats -N $n -p $passes -K $batch" >&2
	"$here/taskstats/taskstats" -N "$n" -p "$passes" -K "$batch" \
		--json "$outdir/taskstats_$n.json" >"$outdir/taskstats_$n.ktap" || {
		echo "taskstats -N $n failed; see below" >&2
		grep -E '^(not ok|# )' "$outdir/taskstats_$n.ktap" | tail -20 >&2
		exit 1
	}
	grep -E '^ok .* # SKIP' "$outdir/taskstats_$n.ktap" >&2 || true
done

python3 - "$outdir" "$goal" $sizes <<'PY'
import json, sys

outdir, goal, sizes = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
methods = ["netlink_per_pid", "netlink_batched", "procfs", "procfs_pread", "ioctl",
           "bpf_iter"]
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
for n in sizes:
    r = rows[n].get("bpf_iter")
    if r and r.get("status") == "ok" and "load_ms" in r.get("extra", {}):
        print(f"bpf_iter at {n}: program load {r['extra']['load_ms']:.3f} ms, once "
              "(not in the passes above)")
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
PY
