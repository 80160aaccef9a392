#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# getppid() cost: kbench syscall_overhead beside 'perf bench syscall basic'
# (Debian linux-perf) on the same machine in the same run, interleaved
# ROUNDS times, with the ratio of the medians. kbench should add no harness
# overhead: the ratio should stay within 10% of 1.
#
# Usage: bench/syscall_vs_perf.sh [ROUNDS]   (default 5)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [ROUNDS]" >&2; exit 2; }
command -v perf >/dev/null ||
	{ echo "$0: perf not found: apt-get install linux-perf" >&2; exit 2; }

make -s -C "$top/syscall_overhead" >&2
prog=$top/syscall_overhead/syscall_overhead
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for ((r = 1; r <= rounds; r++)); do
	# perf: 10,000,000 getppid() calls in one loop, total / loops.
	perf bench syscall basic 2>/dev/null |
		awk '/usecs\/op/ { printf "%.3f\n", $1 * 1000 }' >>"$tmp/perf"
	# kbench: 2000 samples of 1000-call batches; their mean is total / calls,
	# the same time base as perf's figure.
	"$prog" -t getppid -i 2000 --json "$tmp/k.json" >/dev/null
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["rows"][0]
print("%.3f" % (r["mean"] * 1000))' "$tmp/k.json" >>"$tmp/kbench"
done

p=$(median <"$tmp/perf")
k=$(median <"$tmp/kbench")
printf '%-34s %10s\n' "getppid() ns per call (median of rounds)" ""
printf '%-34s %10s   (rounds: %s)\n' "perf bench syscall basic" "$p" "$(paste -sd' ' "$tmp/perf")"
printf '%-34s %10s   (rounds: %s)\n' "kbench syscall_overhead -t getppid" "$k" "$(paste -sd' ' "$tmp/kbench")"
awk -v k="$k" -v p="$p" 'BEGIN {
	r = k / p
	printf "ratio kbench/perf: %.3f (%s)\n", r,
		(r >= 0.9 && r <= 1.1) ? "within 10%" : "OUTSIDE 10%"
}'
