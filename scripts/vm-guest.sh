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
# Environment (set by vm-run.sh): KBENCH_GUEST=tcg|kvm, KSFT_MACHINE_SLOW.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

echo "vm-run: guest up: Linux $(uname -r), accel=${KBENCH_GUEST:-?}," \
	"KSFT_MACHINE_SLOW=${KSFT_MACHINE_SLOW:-}, $(nproc) CPUs," \
	"$(awk '/^MemTotal:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)" >&2

# The guest's /tmp is a throwaway overlay: fine for run_all.sh's scratch.
cd "$top" || exit 1
"$top/run_all.sh" "$@"
rc=$?

echo "vm-run: guest done: exit status $rc" >&2
exit "$rc"
