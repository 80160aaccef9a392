#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CI step: boot Debian kernels other than the host's under virtme-ng/QEMU
# (scripts/vm-run.sh) and run every test directory inside each. Fails when
# a guest does not boot, anything is "not ok", a SKIP names no reason, the
# KTAP is malformed, or a program leaves no JSON marked with the guest's
# accelerator. Prints the time each kernel took.
#
#   scripts/ci-vm.sh [KERNEL]...
#
# KERNEL: as vm-run.sh --kernel takes it; default $KBENCH_CI_KERNELS, else
# debian-6.1 (the most different from a 6.12+ host: cgroup v2 memory
# controller, taskstats version 13, no /proc/config.gz).
# Exit status: 0 every kernel passed, 1 otherwise, 2 bad usage.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}

case ${1:-} in
-h | --help)
	sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
-*)
	echo "$prog: unknown option '$1' (try --help)" >&2
	exit 2
	;;
esac

kernels=("$@")
if ((${#kernels[@]} == 0)); then
	read -r -a kernels <<<"${KBENCH_CI_KERNELS:-debian-6.1}"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-ci-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_kernel KERNEL: one guest run and its checks; prints a summary line.
run_kernel() {
	local k=$1 out=$work/${1//\//_} rc=0 start=$SECONDS programs verdict=PASS

	mkdir -p "$out"
	echo "ci-vm: === $k (host: $(uname -r))"
	# KTAP and messages both stream, each also kept for the checks.
	set +e
	{
		"$top/scripts/vm-run.sh" --kernel "$k" --json "$out/json" \
			--console "$out/console.log" 2>&1 >&3 3>&- |
			tee "$out/stderr" >&2
		echo "${PIPESTATUS[0]}" >"$out/rc"
	} 3>&1 | tee "$out/ktap"
	set -e
	rc=$(cat "$out/rc")
	if ((rc != 0)); then
		echo "ci-vm: $k: vm-run.sh exit status $rc"
		verdict=FAIL
	fi
	if ! "$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out/ktap"; then
		echo "ci-vm: $k: the KTAP check failed"
		verdict=FAIL
	fi
	# Programs that ran (a skipped one may leave no JSON).
	programs=$(grep -v '# SKIP' "$out/ktap" |
		sed -n 's/^ok [0-9]* selftests: kbench\/[^:]*: \([^ ]*\)$/\1/p' | tr '\n' ' ')
	if [[ -z $programs ]] || ! "$top/scripts/check_guest_json.py" "$out/json" "$programs"; then
		echo "ci-vm: $k: JSON results missing or unmarked"
		verdict=FAIL
	fi
	summary+=("$(printf '%-16s %-4s %4d s  %s' "$k" "$verdict" $((SECONDS - start)) \
		"$(grep -o 'boot [0-9.]* s, run [0-9.]* s' "$out/stderr" | tail -n 1)")")
	[[ $verdict == PASS ]]
}

summary=()
failed=0
for k in "${kernels[@]}"; do
	run_kernel "$k" || failed=1
done
echo "ci-vm: kernel           result  time   (in the guest)"
printf 'ci-vm: %s\n' "${summary[@]}"
exit "$failed"
