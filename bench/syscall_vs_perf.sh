#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# getppid() cost: kbench syscall_overhead beside 'perf bench syscall basic'
# (Debian linux-perf) on the same machine in the same run, interleaved
# ROUNDS times, with the ratios of the best and of the median rounds.
# kbench should add no harness overhead: the ratio of the best rounds
# (noise from the VM and other tasks only ever adds time, so the fastest
# round is the closest to the call's own cost) should stay within 10% of 1.
#
# Usage: bench/syscall_vs_perf.sh [ROUNDS]   (default 9)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-9}
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
	python3 "$top/bench/syscall_vs_perf_row.py" "$tmp/k.json" >>"$tmp/kbench"
done

best() {
	sort -g | head -n 1
}

pm=$(median <"$tmp/perf") pb=$(best <"$tmp/perf")
km=$(median <"$tmp/kbench") kb=$(best <"$tmp/kbench")
printf 'getppid() ns per call, %s interleaved rounds\n' "$rounds"
printf '%-36s %8s %8s   rounds\n' "" best median
printf '%-36s %8s %8s   %s\n' "perf bench syscall basic" "$pb" "$pm" "$(paste -sd' ' "$tmp/perf")"
printf '%-36s %8s %8s   %s\n' "kbench syscall_overhead -t getppid" "$kb" "$km" "$(paste -sd' ' "$tmp/kbench")"
awk -v kb="$kb" -v pb="$pb" -v km="$km" -v pm="$pm" 'BEGIN {
	r = kb / pb
	printf "ratio kbench/perf: best %.3f (%s), median %.3f\n", r,
		(r >= 0.9 && r <= 1.1) ? "within 10%" : "OUTSIDE 10%", km / pm
}'
