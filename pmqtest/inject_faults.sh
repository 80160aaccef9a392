#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every pmqtest check must be able to fail on the bug its name promises
# to catch. The kernel cannot be made to misbehave on demand, so strace's
# syscall fault injection makes one call return what a broken kernel
# would (an error, a short message, an early timeout, an unlink that did
# not happen) and this script checks that the named result says not ok,
# and that only a missing feature skips.
#
# Usage: pmqtest/inject_faults.sh [PMQTEST]
# Exit: 0 every case as expected, 1 a case was not, 2 bad usage,
# 4 strace is missing or cannot trace here (an explicit SKIP).
set -euo pipefail

usage() {
	sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'
}

case ${1:-} in
-h | --help)
	usage
	exit 0
	;;
-*)
	echo "inject_faults.sh: unknown option '$1'" >&2
	echo "Try 'inject_faults.sh --help' for more information." >&2
	exit 2
	;;
esac
if (($# > 1)); then
	echo "inject_faults.sh: unexpected argument '$2'" >&2
	exit 2
fi
prog=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pmqtest}
if [[ ! -x $prog ]]; then
	echo "inject_faults.sh: $prog is not an executable (make -C pmqtest)" >&2
	exit 2
fi
if ! command -v strace >/dev/null; then
	echo "SKIP: strace not installed (apt-get install strace)"
	exit 4
fi
if ! strace -f -o /dev/null true 2>/dev/null; then
	echo "SKIP: strace cannot trace here (ptrace not permitted)"
	exit 4
fi

out=$(mktemp "${TMPDIR:-/tmp}/pmqtest-faults.XXXXXX")
trap 'rm -f "$out"' EXIT
errs=0

# expect WANT_RC 'PATTERN...' -- INJECTION... -- [PMQTEST ARGS]: run
# pmqtest under strace with the injections; its exit status must be
# WANT_RC and every PATTERN (an extended regex) must match a line.
expect() {
	local want=$1 rc=0 pat
	local -a pats=() inj=() args=()
	shift
	while [[ $1 != -- ]]; do
		pats+=("$1")
		shift
	done
	shift
	while (($#)) && [[ $1 != -- ]]; do
		inj+=(-e "inject=$1")
		shift
	done
	(($#)) && shift
	args=("$@")
	timeout 60 strace -f -o /dev/null "${inj[@]}" "$prog" "${args[@]}" \
		>"$out" 2>&1 || rc=$?
	for pat in "${pats[@]}"; do
		if ! grep -qE "$pat" "$out"; then
			echo "FAIL: ${inj[*]} ${args[*]}: no line matches '$pat' (exit $rc)"
			grep -E '^not ok|^# [a-z_0-9]+: [^=]*$' "$out" | sed 's/^/    /' | tail -n 8
			errs=$((errs + 1))
			return
		fi
	done
	if ((rc != want)); then
		echo "FAIL: ${inj[*]} ${args[*]}: exit $rc, expected $want"
		grep -E '^not ok|^# [a-z_0-9]+: [^=]*$' "$out" | sed 's/^/    /' | tail -n 8
		errs=$((errs + 1))
		return
	fi
	echo "ok: ${inj[*]:-no injection} ${args[*]} -> exit $rc"
}

# Without a fault everything passes (or the cases below prove nothing).
expect 0 '^ok 1 latency_pair0' '^ok [0-9]+ queues_unlinked' -- --
# Only a kernel without POSIX message queues skips...
expect 4 '^1\.\.0 # SKIP POSIX message queues not supported' -- \
	mq_open:error=ENOSYS --
# ...a kernel whose mq_open fails otherwise fails, every check.
expect 1 '^1\.\.5' '^not ok 1 latency_pair0' '^not ok 5 queues_unlinked' \
	'mq_open: Invalid argument' -- mq_open:error=EINVAL --
expect 1 '^not ok 1 latency_pair0' 'Permission denied' -- \
	mq_open:error=EACCES --
expect 1 '^not ok 1 latency_pair0' 'too many queues' -- \
	mq_open:error=ENOSPC:when=2 --
# latency_pairN: a receive returning a short message.
expect 1 '^not ok [12] latency_pair[01]' 'Bad message' -- \
	mq_timedreceive:retval=8:when=300 --
# timed_receive and forced_timeouts: a receive that times out when no
# timeout is due (the receiver counts one too many, or the sender's
# blocking receive fails: either thread may take the injected call).
expect 1 '^not ok 3 timed_receive' \
	'timed_receive: (counted [0-9]+ timeouts, expected 0|.*Connection timed out)' \
	-- mq_timedreceive:error=ETIMEDOUT:when=50 --
expect 1 '^not ok 4 forced_timeouts' \
	'forced_timeouts: (counted 7 timeouts, expected 6|.*Connection timed out)' \
	-- mq_timedreceive:error=ETIMEDOUT:when=3 --
# queues_unlinked: an unlink that did not happen (the first only, so that
# the check's own clean-up unlinks it and nothing is left behind).
expect 1 '^not ok 5 queues_unlinked' 'queue names are still linked' -- \
	mq_unlink:error=EPERM:when=1 --
# The rt-tests command: the same rule, as exit status.
expect 1 'mq_open: Invalid argument' -- mq_open:error=EINVAL -- -l 5 -q
expect 4 'not supported by this kernel' -- mq_open:error=ENOSYS -- -l 5 -q

# An injected fault must not leave a queue in the system.
if mountpoint -q /dev/mqueue; then
	left=$(find /dev/mqueue -name 'kbench-pmqtest-*' | head -n 3)
	if [[ -n $left ]]; then
		echo "FAIL: queues left in /dev/mqueue: $left"
		errs=$((errs + 1))
	fi
fi
((errs == 0)) || exit 1
