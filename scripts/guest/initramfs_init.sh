#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# /init of a guest that kbtools.vm's qemu backend boots with an initramfs
# root (arch.py's init: the arm64 guest, and the x86_64 exact guest):
# the initramfs is the cached root filesystem of Debian packages plus a
# cpio holding this file, the collection built for the guest in /kbench
# and its environment in /kbench-args. The whole root is in guest memory:
# the collection and every binary it execs are read without the host.
# Runs the host's plan (/kbench-plan, scripts/guest/run_plan.sh), prints
# its KTAP on the console, then the --json results as a base64 tar
# between marker lines, then the exit status, and powers off. Not meant
# to be started by hand.
set -uo pipefail

# It mounts over /proc, /tmp, /dev/shm, ... and powers the machine off:
# only ever as the init (PID 1) of the guest.
if (($$ != 1)); then
	echo "initramfs_init.sh: a guest's /init (run by kbench vm's qemu backend), not a command" >&2
	echo "Try 'scripts/vm_run.sh --help' for more information." >&2
	exit 2
fi

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

# shellcheck source=guest_mounts.sh
. /kbench/scripts/guest/guest_mounts.sh
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# Kernel messages would interleave with the KTAP on the one console.
dmesg -n 1

json=
plan=
kallsyms=
# shellcheck source=/dev/null
. /kbench-args	# sets json=DIR (the guest's path), plan=FILE, kallsyms=1

# settle: wait until the CPUs have been idle for 90% of two 0.1 s
# intervals in a row (at most 10 s), and say when. The kernel's own work
# at boot is not over when /init starts: an arm64 guest's crypto
# self-tests (cryptomgr_test threads) ran about 0.6 s more, on the one
# vCPU of an exact run, and under --icount each of their instructions
# counted in the loop it interrupted (a tenth of getpid's batches ten
# times as long, in the first repetition only). /proc/uptime holds the
# seconds up and idle (summed over the CPUs) to two decimals: compared
# in hundredths, without a fork. In exact mode only: under plain TCG the
# emulation is too slow for these intervals ever to be that idle (for
# 20 s of the guest's clock its two vCPUs stayed 10-90% busy), and its
# figures are a functional check.
settle() {
	local polls quiet=0 up idle up0 idle0 cpus busy

	cpus=$(nproc)
	read -r up0 idle0 </proc/uptime
	for ((polls = 0; polls < 100 && quiet < 2; polls++)); do
		sleep 0.1
		read -r up idle </proc/uptime
		busy=$(((10#${up/./} - 10#${up0/./}) * cpus - (10#${idle/./} - 10#${idle0/./})))
		if ((busy * 10 <= (10#${up/./} - 10#${up0/./}) * cpus)); then
			quiet=$((quiet + 1))
		else
			quiet=0
		fi
		up0=$up idle0=$idle
	done
	echo "$up s after boot"
}
settled=
[[ -z ${KBENCH_ICOUNT:-} ]] || settled=", quiet $(settle)"

echo "vm-run: guest up: Linux $(uname -r) $(uname -m), accel=${KBENCH_GUEST:-?}," \
	"KSFT_MACHINE_SLOW=${KSFT_MACHINE_SLOW:-}, $(nproc) CPUs," \
	"$(awk '/^MemTotal:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)$settled${KBENCH_ICOUNT_DITHER:+, dither $KBENCH_ICOUNT_DITHER}"

# Exact mode: a boot of the deterministic guest repeats the one before to
# the instruction, but an A/B is two kernels, and one instruction more
# early on moves every later interrupt. So each boot first runs a number
# of empty loops of the host's choosing (KBENCH_ICOUNT_DITHER, random per
# boot), and the A/A boots that calibrate a kernel differ as two kernels'
# would (docs/exact-runs.md).
dither=${KBENCH_ICOUNT_DITHER:-0}
for ((i = 0; i < dither; i++)); do
	:
done

cd /kbench || exit 1
# The host's plan (kbtools.plan.to_file: titles, order, timeouts, JSON
# paths; or --list's listing), run as it says.
./scripts/guest/run_plan.sh /kbench "$plan" 2>&1
rc=$?

# kbench run --where: the kernel's code symbols, for the QEMU plugin of
# a later boot to sum its counts per function (after the run: no figure
# moves; root reads the addresses when kptr_restrict allows).
if [[ -n $json && -n $kallsyms ]]; then
	echo 0 >/proc/sys/kernel/kptr_restrict
	grep ' [tTwW] ' /proc/kallsyms >"$json/kallsyms" || true
fi

if [[ -n $json ]]; then
	echo "vm-run: json begin"
	tar -C "$json" -czf - . | base64
	echo "vm-run: json end"
fi
echo "vm-run: guest done: exit status $rc"
sync
echo o >/proc/sysrq-trigger
sleep 10
