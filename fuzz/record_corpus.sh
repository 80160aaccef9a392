#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Record seed inputs for the fuzz harnesses from the running kernel:
# /proc/PID/stat (also of a task whose comm holds ") ("), status and
# comm, the memory
# controller's memory.stat and memory.numa_stat, /proc/self/mountinfo
# and /proc/self/cgroup, and (with RECORDER, fuzz/record_corpus.c) the
# kernel's netlink replies to taskstats requests. Each seed is named
# after its source and the kernel release, so that seeds of several
# kernels sit side by side. The option-value seeds are a fixed list.
#
# Usage: fuzz/record_corpus.sh [RECORDER] [CORPUS_DIR]
set -euo pipefail

recorder=${1:-}
dir=${2:-$(dirname "${BASH_SOURCE[0]}")/corpus}
rel=$(uname -r)
mkdir -p "$dir"/{options,proc_stat,cgroup,netlink}

# seed HARNESS NAME SELECTOR FILE...: the selector byte (octal) and the
# files' bytes, the files separated by a NUL byte.
seed() {
	local h=$1 name=$2 sel=$3 f first=1
	shift 3
	{
		printf '%b' "\\0$sel"
		for f; do
			((first)) || printf '\0'
			first=0
			cat "$f"
		done
	} >"$dir/$h/$name-$rel"
}

# Option values: selector = parser (low 3 bits) and bounds (high bits).
opt=0
for v in 0:100 0:010 0:-7 0:99999999999999999999 0:1.5 1:4096 1:1.5M \
	1:100MiB 1:2G 1:18446744073709551615 1:17179869184G 1:1BB 2:0.25 \
	2:.5 2:-2 2:inf 3:500ms 3:2m 3:1.5h 3:10us 4:30 4:1d 4:0.5; do
	printf '%b%s' "\\0$(printf '%03o' "${v%%:*}")" "${v#*:}" \
		>"$dir/options/value-$opt"
	opt=$((opt + 1))
done

# Task stat lines, also of a comm with spaces and parentheses.
cp /proc/self/stat "$dir/proc_stat/self-$rel"
cp /proc/1/stat "$dir/proc_stat/init-$rel"
cp /proc/self/status "$dir/proc_stat/status-$rel"
cp /proc/self/comm "$dir/proc_stat/comm-$rel"
odd=$(mktemp -d)
cp /bin/sleep "$odd/a) (b c"
"$odd/a) (b c" 5 &
pid=$!
sleep 0.2
cp "/proc/$pid/stat" "$dir/proc_stat/odd-comm-$rel"
kill "$pid"
wait "$pid" 2>/dev/null || true
rm -rf "$odd"

# The memory controller: v2 where it is, else v1's hierarchy.
memcg=''
for m in /sys/fs/cgroup /sys/fs/cgroup/memory; do
	[[ -r $m/memory.stat ]] && memcg=$m && break
done
if [[ -n $memcg ]]; then
	seed cgroup memory.stat 000 "$memcg/memory.stat"
	[[ -r $memcg/memory.numa_stat ]] &&
		seed cgroup numa_stat 001 "$memcg/memory.numa_stat"
fi
# Of mountinfo, the kernel's own file systems: a container's private
# mounts tell the parser nothing new and name the host's paths.
mi=$(mktemp)
grep -E ' - (cgroup2?|proc|sysfs|devtmpfs|devpts|mqueue|ext4|xfs|btrfs) ' \
	/proc/self/mountinfo >"$mi" || true
seed cgroup mountinfo 002 "$mi"
seed cgroup proc-cgroup 003 /proc/self/cgroup
seed cgroup own-dirs 004 "$mi" /proc/self/cgroup
rm -f "$mi"

if [[ -n $recorder ]]; then
	if "$recorder" "$dir/netlink" "$rel"; then
		# The burst's replies in one datagram, as a busy socket delivers.
		cat "$dir/netlink/burst"[0-9]"-$rel" >"$dir/netlink/burst-all-$rel"
	else
		echo "record_corpus.sh: netlink replies not recorded (taskstats needs root and CONFIG_TASKSTATS)" >&2
	fi
fi
echo "record_corpus.sh: $(find "$dir" -type f | wc -l) seeds in $dir"
