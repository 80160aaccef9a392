#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of scripts/vm-run.sh: runs inside the booted kernel (as
# virtme-ng's --exec command) and runs the collection with run_all.sh.
# Not meant to be started by hand.
#
# The two "vm-run: guest ..." lines on stderr are read by vm-run.sh on the
# host: the first ends the boot timeout, the second tells a finished run
# from a guest that died (panic, oops) in the middle of it.
#
#   vm-guest.sh [RUN_ALL_ARGUMENT]...
#
# Environment (set by vm-run.sh): KBENCH_GUEST=tcg|kvm, KSFT_MACHINE_SLOW,
# KBENCH_ICOUNT (the -icount shift, in exact mode).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

echo "vm-run: guest up: Linux $(uname -r), accel=${KBENCH_GUEST:-?}," \
	"KSFT_MACHINE_SLOW=${KSFT_MACHINE_SLOW:-}, $(nproc) CPUs," \
	"$(awk '/^MemTotal:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)" \
	"${KBENCH_ICOUNT:+, icount shift $KBENCH_ICOUNT}" >&2

# In exact mode (QEMU's -icount) a wait for the host stops the guest's
# clock from counting instructions: the read of a program over 9p lets
# virtual time jump to the next timer deadline (a cat that read /bin/cat
# took up to 4.5 virtual seconds, and a program's 120 s timeout fired
# after minutes). So the collection runs from a copy in guest memory,
# with what it loads and starts copied there too, its JSON is written
# there, and the results go to the host's directory once the run is
# over. And the root is 9p without a cache: a name in it that is no
# mount point (the links /bin, /lib, /lib64, /sbin) is looked up on the
# host at every exec and every library load, unless something holds it:
# pin_root_links keeps them in the guest's dentry cache.
args=("$@")
json=

# in_memory FILE...: copy the files (links followed) up into the guest's
# memory: virtme-ng's /usr, /etc, ... are overlays whose upper layer is a
# tmpfs, and a change of the files' times copies them up whole.
in_memory() {
	local f

	for f in "$@"; do
		f=$(readlink -f "$f") && [[ -f $f ]] && touch -c -r "$f" "$f"
	done
	return 0
}

# What the programs load and start while they measure: the dynamic
# loader, every library of the collection's programs, ld.so.cache, and
# the commands they run (memcg_ks's cat).
exec_files() {
	local prog

	for prog in "$1"/*/*; do
		[[ -f $prog && -x $prog ]] || continue
		ldd "$prog" 2>/dev/null | grep -o '/[^ ]*' || true
	done | sort -u
	echo /etc/ld.so.cache
	command -v cat
	ldd "$(command -v cat)" | grep -o '/[^ ]*'
}

# pin_root_links: a process that holds O_PATH descriptors of the root's
# links and sleeps (no timer, no work) until the run ends; sets pinner.
pin_root_links() {
	python3 -c 'import os, signal, sys
fds = [os.open(p, os.O_PATH | os.O_NOFOLLOW) for p in sys.argv[1:]
       if os.path.lexists(p)]
signal.pause()' /bin /lib /lib64 /lib32 /libx32 /sbin &
	pinner=$!
}

pinner=
if [[ -n ${KBENCH_ICOUNT:-} ]]; then
	pin_root_links
	copy=/tmp/kbench-icount
	mkdir -p "$copy" && mount -t tmpfs -o mode=755 kbench "$copy" || exit 1
	tar -C "$top" --exclude=./.git --exclude=./.cache --exclude=./out \
		--exclude=./fuzz/build --exclude=./tests/data --exclude=./docs -cf - . |
		tar -C "$copy" -xf - || exit 1
	top=$copy
	mapfile -t files < <(exec_files "$top")
	in_memory "${files[@]}"
	for ((i = 0; i < ${#args[@]}; i++)); do
		case ${args[i]} in
		--json)
			json=${args[i + 1]}
			args[i + 1]=$copy/json
			;;
		--json=*)
			json=${args[i]#*=}
			args[i]=--json=$copy/json
			;;
		esac
	done
fi

# The guest's /tmp is a throwaway overlay: fine for run_all.sh's scratch.
cd "$top" || exit 1
"$top/run_all.sh" "${args[@]}"
rc=$?

if [[ -n $json && -d $top/json ]]; then
	cp -r "$top/json/." "$json/" || rc=1
fi
[[ -z $pinner ]] || kill "$pinner" 2>/dev/null
echo "vm-run: guest done: exit status $rc" >&2
exit "$rc"
