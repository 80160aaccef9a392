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
# Only the method rows (and the reaping check): the other checks time nothing.
rows=netlink_per_pid,netlink_batched,procfs,procfs_pread,ioctl,bpf_iter,children_reaped

usage() {
	sed -n '4,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
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
# -s takes the process counts as one space-separated word.
read -r -a size_list <<<"$sizes"

for n in "${size_list[@]}"; do
	echo "== $n processes: taskstats -N $n -p $passes -K $batch" >&2
	"$here/taskstats/taskstats" -N "$n" -p "$passes" -K "$batch" -t "$rows" \
		--json "$outdir/taskstats_$n.json" >"$outdir/taskstats_$n.ktap" || {
		echo "taskstats -N $n failed; see below" >&2
		grep -E '^(not ok|# )' "$outdir/taskstats_$n.ktap" | tail -20 >&2
		exit 1
	}
	grep -E '^ok .* # SKIP' "$outdir/taskstats_$n.ktap" >&2 || true
done

python3 "$here/bench/taskstats_seed.py" "$outdir" "$goal" "${size_list[@]}"
