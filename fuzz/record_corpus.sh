#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Record seeds for the fuzz harnesses from real kernels and file them
# into the corpus by decoder family. fuzz/record_corpus (record_corpus.c)
# writes what a kernel hands kbench's decoders (taskstats and cgroupstats
# netlink replies, /proc/PID/stat, status and comm, mountinfo,
# /proc/self/cgroup, memory.stat and memory.numa_stat of cgroup v1 or v2)
# as raw files; this script runs it on this machine and, with -k, inside
# a guest booted under virtme-ng (as run_all.sh --kernel does: the host's
# root file system read-only, the output directory shared read-write),
# then files each file as CORPUS/HARNESS/ORIGIN-NAME, ORIGIN being the
# kernel's major.minor (6.1-taskstats-get-pid, 6.12-memory.stat-v2-child).
# The option-value seeds are a fixed list.
#
# Usage: fuzz/record_corpus.sh [-r RECORDER] [-o CORPUS] [-k IMAGE]... [-H]
#   -r RECORDER  the recorder (default fuzz/build/record_corpus)
#   -o CORPUS  where the seeds go (default fuzz/corpus)
#   -k IMAGE   record inside IMAGE too: debian-6.1 or debian-6.12 (the
#              Debian kernel 'run_all.sh --kernel debian-6.1' has fetched
#              into .cache/vm/kernels/), or an x86 bzImage (repeatable)
#   -H         record on this machine as well when -k is given (without
#              -k this machine is the only origin)
# Needs root (taskstats, a memory cgroup of its own) and the recorder
# built (make -C fuzz build/record_corpus; 'make -C fuzz corpus' does
# both for this machine). Exit 0 done, 1 a recording failed, 2 bad usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=${here%/*}
prog=record_corpus.sh
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"
recorder=$here/build/record_corpus
vng_version=${KBENCH_VNG_VERSION:-1.42}

# The guest half: run the recorder into the shared directory.
if [[ ${1:-} == --guest ]]; then
	(($# == 3)) || die_usage "--guest wants DIR RECORDER"
	echo "record_corpus.sh: guest up: Linux $(uname -r)" >&2
	"$3" "$2" || echo "record_corpus.sh: the recorder failed in the guest" >&2
	exit 0
fi

corpus=$here/corpus host="" images=()
[[ ${1:-} == --help ]] && set -- -h
while getopts :r:o:k:Hh opt; do
	case $opt in
	r) recorder=$(cd "$(dirname "$OPTARG")" && pwd)/${OPTARG##*/} ;;
	o) corpus=$OPTARG ;;
	k) images+=("$OPTARG") ;;
	H) host=1 ;;
	h)
		help_from_header "${BASH_SOURCE[0]}" 4 26
		exit 0
		;;
	:) die_usage "option -$OPTARG needs a value" ;;
	*) die_usage "unknown option -$OPTARG" ;;
	esac
done
shift $((OPTIND - 1))
(($# == 0)) || die_usage "unexpected argument '$1'"
((${#images[@]})) || host=1
[[ -x $recorder ]] || die 2 "no $recorder: make -C fuzz build/record_corpus first"
((EUID == 0)) || msg "not root: taskstats and the memory cgroup will be missing"

work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-seeds.XXXXXX")
trap 'rm -rf "$work"' EXIT

# image_of NAME -> the kernel image to boot.
image_of() {
	local name=$1 glob img

	case $name in
	debian-6.1) glob='linux-image-6.1.0-*-amd64' ;;
	debian-6.12) glob='linux-image-6.12.*+deb*-amd64' ;;
	*)
		[[ -f $name ]] || die_usage "no kernel image '$name'"
		echo "$name"
		return
		;;
	esac
	# The newest of the series, not its PREEMPT_RT flavour.
	# shellcheck disable=SC2086 # the glob
	img=$(printf '%s\n' "$top"/.cache/vm/kernels/$glob/boot/vmlinuz-* |
		grep -v -e '-rt-' | sort -V | tail -n 1)
	[[ -f $img ]] ||
		die 1 "$name not fetched yet: run 'run_all.sh --kernel $name -t taskstats' once"
	echo "$img"
}

# record_guest NAME IMAGE DIR: boot IMAGE (TCG: KVM cannot run guests
# on every host) and record into DIR.
record_guest() {
	local name=$1 img=$2 venv=${KBENCH_CACHE:-$top/.cache}/venv

	shift 2
	[[ $("$venv/bin/vng" --version 2>/dev/null) == "virtme-ng $vng_version" ]] ||
		die 1 "no virtme-ng in $venv: run 'run_all.sh --kernel $name' once"
	mkdir -p "$1"
	msg "booting $img (TCG: a few minutes)"
	PATH=$venv/bin:$PATH timeout -k 10 600 vng --run "$img" --user root --cwd "$top" \
		--memory 1G --force-9p --disable-kvm --rwdir="$1" \
		--exec "$(printf '%q ' "$here/record_corpus.sh" --guest "$1" "$recorder")" \
		</dev/null >"$work/vng.log" 2>&1 || true
	grep -a -o 'record_corpus.*' "$work/vng.log" >&2 || true
	[[ -s $1/release ]] || {
		tail -n 20 "$work/vng.log" >&2
		die 1 "nothing recorded in $name"
	}
}

# put HARNESS NAME [SELECTOR FILE...]: a seed of the cgroup harness is its
# selector byte (octal) and the files, separated by NUL bytes; the
# others are the file itself.
put() {
	local h=$1 name=$2 sel=${3:-} f first=1

	shift 3
	mkdir -p "$corpus/$h"
	{
		[[ -n $sel ]] && printf '%b' "\\0$sel"
		for f; do
			((first)) || printf '\0'
			first=0
			cat "$f"
		done
	} >"$corpus/$h/$origin-$name"
}

# file_raw DIR: every file the recorder wrote, to its harness.
file_raw() {
	local raw=$1 f name

	origin=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' "$raw/release")
	for f in "$raw"/*; do
		name=${f##*/}
		case $name in
		taskstats-* | cgroupstats-*) put netlink "$name" '' "$f" ;;
		proc-*) put proc_stat "$name" '' "$f" ;;
		memory.stat-*) put cgroup "$name" 000 "$f" ;;
		memory.numa_stat-*) put cgroup "$name" 001 "$f" ;;
		mountinfo) put cgroup "$name" 002 "$f" ;;
		cgroup-*)
			put cgroup "$name" 003 "$f"
			[[ -f $raw/mountinfo ]] &&
				put cgroup "own-dirs-${name#cgroup-}" 004 "$raw/mountinfo" "$f"
			;;
		esac
	done
	# The burst's replies in one datagram, as a busy socket delivers them.
	if [[ -f $raw/taskstats-burst-0 ]]; then
		cat "$raw"/taskstats-burst-[0-9] >"$corpus/netlink/$origin-taskstats-burst-all"
	fi
	msg "$origin ($(cat "$raw/release")): $(find "$raw" -type f | wc -l) files filed"
}

# Option values: selector = parser (low 3 bits) and bounds (high bits).
option_seeds() {
	local v i=0

	mkdir -p "$corpus/options"
	for v in 0:100 0:010 0:-7 0:99999999999999999999 0:1.5 1:4096 1:1.5M \
		1:100MiB 1:2G 1:18446744073709551615 1:17179869184G 1:1BB 2:0.25 \
		2:.5 2:-2 2:inf 3:500ms 3:2m 3:1.5h 3:10us 4:30 4:1d 4:0.5; do
		printf '%b%s' "\\0$(printf '%03o' "${v%%:*}")" "${v#*:}" \
			>"$corpus/options/value-$i"
		i=$((i + 1))
	done
}

# Every image first: a wrong name ends the run before anything is done.
paths=()
for img in "${images[@]}"; do
	path=$(image_of "$img")
	paths+=("$path")
done

bad=0
option_seeds
if [[ -n $host ]]; then
	mkdir -p "$work/host"
	"$recorder" "$work/host" || bad=1
	[[ -s $work/host/release ]] && file_raw "$work/host"
fi
n=0
for img in "${images[@]}"; do
	if (record_guest "$img" "${paths[n]}" "$work/guest$n"); then
		file_raw "$work/guest$n"
	else
		bad=1
	fi
	n=$((n + 1))
done
msg "$(find "$corpus" -type f | wc -l) seeds in $corpus"
exit "$bad"
