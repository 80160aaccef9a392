#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# memcg_stat_read.sh: what one read of memory.stat and memory.numa_stat
# costs, three ways side by side, from one run of memcg_ks:
#   per_read     lseek(0) + read on a kept fd (a daemon),
#   per_cat      open + read + close (a script that reads the file itself),
#   cat_process  an external 'cat FILE' process (a shell pipeline; what
#                the seed's selftest timed),
# and, when the kernel has them, the same for the .ks files with each
# filter (ratio against legacy).
#
# Usage: bench/memcg_stat_read.sh [memcg_ks options...]
#   e.g. bench/memcg_stat_read.sh                 quick (20k reads, 100 cats)
#        bench/memcg_stat_read.sh --full          1M reads, 1000 cats
#        CGPATH=/sys/fs/cgroup/x bench/memcg_stat_read.sh -n 200000
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=$here/memcg_ks/memcg_ks

case "${1:-}" in
-h|--help)
	sed -n '3,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 0
	;;
esac

make -s -C "$here/memcg_ks" >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
"$prog" --json "$tmp/memcg_ks.json" "$@" >"$tmp/ktap" || rc=$?
if [ ! -s "$tmp/memcg_ks.json" ]; then
	cat "$tmp/ktap" >&2
	echo "memcg_stat_read.sh: memcg_ks exited $rc without results" >&2
	# A usage error of memcg_ks is ours too.
	[ "$rc" = 2 ] && exit 2
	exit 1
fi
if grep -q '^not ok' "$tmp/ktap"; then
	echo "memcg_stat_read.sh: some memcg_ks tests failed:" >&2
	grep '^not ok' "$tmp/ktap" >&2
fi

python3 "$here/bench/memcg_stat_read.py" "$tmp/memcg_ks.json"
