#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of scripts/vm_run.sh: runs inside the booted kernel (as
# virtme-ng's --exec command) and runs the host's plan of the run
# (KBENCH_PLAN, kbtools.plan.to_file) with scripts/guest/run_plan.sh.
# Not meant to be started by hand.
#
# The two "vm-run: guest ..." lines on stderr are read by vm_run.sh on the
# host: the first ends the boot timeout, the second tells a finished run
# from a guest that died (panic, oops) in the middle of it.
#
#   vm_guest.sh [RUN_ALL_ARGUMENT]...
#
# Of its arguments (run_all.sh's, as the host was given them) only
# --json DIR is read here: where exact mode copies the results back.
# Environment (set by vm_run.sh): KBENCH_GUEST=tcg|kvm, KSFT_MACHINE_SLOW,
# KBENCH_ICOUNT (the -icount shift, in exact mode), KBENCH_PLAN (the
# host's plan file: in exact mode its JSON paths are the memory copy's).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

echo "vm-run: guest up: Linux $(uname -r), accel=${KBENCH_GUEST:-?}," \
	"KSFT_MACHINE_SLOW=${KSFT_MACHINE_SLOW:-}, $(nproc) CPUs," \
	"$(awk '/^MemTotal:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)" \
	"${KBENCH_ICOUNT:+, icount shift $KBENCH_ICOUNT}" >&2

# In exact mode (QEMU's -icount) a wait for the host stops the guest's
# clock from counting instructions: while the vCPU idles, virtual time
# jumps to the next timer deadline. virtme-ng's root is the host's, over
# 9p without a cache, so every exec asked the host: for the program, for
# each name in / that is no mount point (the links /bin, /lib, /lib64),
# for every link's target, and, through overlayfs, for the attributes of
# the files it copied up. A cat took up to 4.5 virtual seconds, and a
# program's 120 s timeout fired after minutes. So the collection and
# the plan run from a copy in guest memory, in a root whose top level and whatever an
# exec reads are in guest memory too (memory_root), its JSON written
# there and copied to the host's directory once the run is over.
root=/mnt
args=("$@")
json=

# memory_root: a tmpfs at $root holding the root's links made again, a
# /lib64 of its own with the dynamic loader, and every other directory
# of / bind-mounted.
memory_root() {
	local e name loader

	mount -t tmpfs -o mode=755 kbench-root "$root" || return
	for e in /*; do
		name=${e#/}
		[[ $e == "$root" ]] && continue
		if [[ $name == lib64 ]]; then
			mkdir "$root/lib64"
			for loader in /lib64/*; do
				cp "$(readlink -f "$loader")" "$root/lib64/${loader##*/}"
			done
		elif [[ -L $e ]]; then
			ln -s "$(readlink "$e")" "$root/$name"
		elif [[ -d $e ]]; then
			mkdir "$root/$name" && mount --rbind "$e" "$root/$name" || return
		fi
	done
}

# in_memory PATH: PATH as the new root sees it, read without the host:
# each link on its way copied up into the overlay's memory (a change of
# its times does it), the file it ends in copied to a tmpfs and mounted
# over it.
in_memory() {
	local path=$root$1 target store=$root/run/kbench-files

	mkdir -p "$store"
	while [[ -L $path ]]; do
		touch -c -h -r "$path" "$path"
		target=$(readlink "$path")
		[[ $target == /* ]] && path=$root$target || path=${path%/*}/$target
	done
	[[ -f $path ]] || return 0
	target=$store/$(tr / _ <<<"${path#"$root"}")
	[[ -e $target ]] && return 0
	cp "$path" "$target" && mount --bind "$target" "$path"
}

# What the programs load and start while they measure: the libraries of
# the collection's programs and of the commands they run (memcg_ks's
# cat), ld.so.cache, and those commands.
exec_files() {
	local prog

	for prog in "$1"/*/* "$(command -v cat)"; do
		[[ -f $prog && -x $prog ]] || continue
		ldd "$prog" 2>/dev/null | grep -o '/[^ :]*' || true
	done | sort -u
	echo /etc/ld.so.cache
	command -v cat
}

if [[ -n ${KBENCH_ICOUNT:-} ]]; then
	copy=/tmp/kbench-icount
	mkdir -p "$copy" && mount -t tmpfs -o mode=755 kbench "$copy" || exit 1
	tar -C "$top" --exclude=./.git --exclude=./.cache --exclude=./out \
		--exclude=./fuzz/build --exclude=./tests/data --exclude=./docs -cf - . |
		tar -C "$copy" -xf - || exit 1
	cp "$KBENCH_PLAN" "$copy/kbench-plan" || exit 1
	top=$copy
	memory_root || exit 1
	mapfile -t files < <(exec_files "$top")
	for f in "${files[@]}"; do
		in_memory "$f" || exit 1
	done
	# The host's --json directory; the plan writes into $copy/json
	# (kbtools.vm's ICOUNT_JSON), copied there at the end.
	for ((i = 0; i < ${#args[@]}; i++)); do
		case ${args[i]} in
		--json) json=${args[i + 1]} ;;
		--json=*) json=${args[i]#*=} ;;
		esac
	done
	# The run in the memory root; the collection's copy is in /tmp, which
	# the root binds.
	# shellcheck disable=SC2016 # the inner shell expands its own $1, $@
	chroot "$root" /bin/bash -c 'cd "$1" && shift && exec "$@"' - "$top" \
		"$top/scripts/guest/run_plan.sh" "$top" "$top/kbench-plan"
	rc=$?
else
	# The host's plan (its titles, order, timeouts, JSON paths), run as
	# it says. The guest's /tmp is a throwaway overlay: fine for the
	# scratch JSON of repetitions without --json.
	cd "$top" || exit 1
	"$top/scripts/guest/run_plan.sh" "$top" "$KBENCH_PLAN"
	rc=$?
fi

if [[ -n $json && -d $top/json ]]; then
	cp -r "$top/json/." "$json/" || rc=1
fi
echo "vm-run: guest done: exit status $rc" >&2
exit "$rc"
