#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fork() per-creation cost against the parent's size, from the book's
# 1.70 MB up to 1 GiB of touched memory, beside vfork() and posix_spawn()
# measured in the same run. Prints a table with each method's cost relative
# to its cost at 1.70 MB and fork's cost per resident 4 KiB page.
#
# Usage: bench/fork_vs_size.sh [-n N] [-m SIZES] [-T SECONDS] [-k]
#   -n N      creations per cell (default 300)
#   -m SIZES  touched sizes beyond the book's (default 16M,64M,256M,1G)
#   -T S      stop a cell after S seconds (default 3)
#   -k        keep the JSON file and print its path
# Environment: KSRC (kernel tree for the build, see lib/kbench.mk).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
count=300
sizes=16M,64M,256M,1G
cell_time=3
keep=0

usage() {
	sed -n '/^# Usage/,/^# Environment/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while getopts "n:m:T:kh" opt; do
	case $opt in
	n) count=$OPTARG ;;
	m) sizes=$OPTARG ;;
	T) cell_time=$OPTARG ;;
	k) keep=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	echo "fork_vs_size.sh: unexpected argument '$1'" >&2
	usage >&2
	exit 2
fi

make -s -C "$here/proc_create" >/dev/null
json=$(mktemp /tmp/fork_vs_size.XXXXXX.json)
if [ "$keep" = 0 ]; then
	trap 'rm -f "$json"' EXIT
fi

echo "proc_create -t fork,vfork,posix_spawn -m $sizes -n $count -T $cell_time"
start=$(date +%s)
rc=0
"$here/proc_create/proc_create" -t fork,vfork,posix_spawn -m "$sizes" \
	-n "$count" -T "$cell_time" --json "$json" >/dev/null || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
	echo "fork_vs_size.sh: proc_create exited with $rc" >&2
	exit "$rc"
fi
echo "wall time: $(( $(date +%s) - start )) s; kernel $(uname -r), $(nproc) CPUs"
[ "$keep" = 1 ] && echo "JSON: $json"

python3 "$here/bench/fork_vs_size.py" "$json" || exit
