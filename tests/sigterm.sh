#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SIGTERM each program of the collection while it runs (as the runner's
# timeout does), or with --run-all run_all.sh itself: no process may
# survive, and no SysV IPC object, POSIX queue, cgroup or sysctl may
# change. make check runs it in a private IPC and mount namespace
# (kbench check: sigterm_leftovers, run_all_sigterm).
#
# Usage: tests/sigterm.sh [--run-all]
# Exit status: 0 nothing left behind, 1 something was, 2 bad usage,
# 4 POSIX queues cannot be seen (mqueue cannot be mounted).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=tests/sigterm.sh
# shellcheck source=../scripts/lib.bash
. "$top/scripts/lib.bash"

# fail MESSAGE: end as failed (on stderr, so that it is seen from inside
# a command substitution too).
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The program list, DIR:PROGRAM per line; never empty.
programs() {
	local list
	list=$("$top/run_all.sh" --no-build --list) ||
		fail "run_all.sh --list failed"
	[[ -n $list ]] || fail "run_all.sh --list printed no program"
	echo "$list"
}

run_all=''
case ${1:-} in
'') ;;
--run-all) run_all=1 ;;
-h | --help)
	help_from_header "$0" 3 11
	exit 0
	;;
*) die_usage "unknown argument '$1'" ;;
esac
(($# <= 1)) || die_usage "too many arguments"

work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-sigterm.XXXXXX")
trap 'rm -rf "$work"' EXIT



# Drop the names ending in ".PID" of a live process: another run's
# (make check of another clone), not something this one left behind.
not_of_live_process() {
	local name pid
	while read -r name; do
		pid=${name##*.}
		[[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]] || echo "$name"
	done
}

# What the system holds that a test could leave behind.
snapshot() {
	{
		ipcs -q | awk 'NR > 3 && NF' | awk '{print "msq", $2}'
		ipcs -m | awk 'NR > 3 && NF' | awk '{print "shm", $2}'
		ipcs -s | awk 'NR > 3 && NF' | awk '{print "sem", $2}'
		find "$mq_dir" -mindepth 1 -maxdepth 1 -printf 'mq %f\n'
		find /sys/fs/cgroup -maxdepth 3 -type d -name '*kbench*' 2>/dev/null |
			not_of_live_process | sed 's/^/cg /'
		for f in /proc/sys/kernel/task_delayacct /proc/sys/fs/mqueue/*; do
			[[ -r $f ]] && echo "knob $f $(cat "$f")"
		done
	} | sort
}

# POSIX queues are only visible through an mqueue mount of this IPC
# namespace: mount a fresh one in the work directory (unmounted at exit;
# /dev/mqueue, if mounted, may belong to another namespace), or SKIP,
# never look blind.
mq_dir=$work/mqueue
see_mqueues() {
	mkdir -p "$mq_dir"
	mount -t mqueue none "$mq_dir" 2>/dev/null || {
		echo "cannot mount an mqueue file system: leaked POSIX queues would go unseen"
		exit 4
	}
	trap 'umount "$mq_dir"; rm -rf "$work"' EXIT
}

# still_running PID: PID exists and has not exited (a zombie has).
still_running() {
	local state
	state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $state && ${state:0:1} != Z ]]
}

# start_and_term DIR PROGRAM: start PROGRAM in its own session and SIGTERM
# it while it runs, sooner each time it ended first. Sets term_pid and
# term_delay; fails if the program never outlives the shortest delay.
start_and_term() {
	local delay rc
	for delay in 2 1 0.5 0.25 0.1; do
		(cd "$top/$1" && exec setsid "./$2" >"$work/sigterm.out" 2>&1) &
		term_pid=$!
		term_delay=$delay
		sleep "$delay"
		if still_running "$term_pid" && kill -TERM "$term_pid"; then
			return 0
		fi
		rc=0
		wait "$term_pid" || rc=$?
		echo "note: $1/$2 ended (exit $rc) within $delay s, trying sooner"
	done
	fail "$1/$2 never ran long enough to be stopped: $(tail -n 3 "$work/sigterm.out")"
}

# wait_session SID: up to 10 s for every process of session SID to end.
wait_session() {
	local _
	for _ in $(seq 100); do
		pgrep -s "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# SIGTERM each program while it runs (as the runner's timeout does):
# nothing may survive it, and no IPC object, queue, cgroup or knob may
# change.
sigterm_leftovers() {
	local dir prog before after errs=0 programs_list
	programs_list=$(programs) || exit 1
	while IFS=: read -r dir prog; do
		before=$(snapshot)
		start_and_term "$dir" "$prog"
		wait_session "$term_pid" || true
		wait "$term_pid" 2>/dev/null || true
		after=$(snapshot)
		if pgrep -s "$term_pid" >/dev/null; then
			echo "FAIL: $dir/$prog: processes survive SIGTERM:" \
				"$(pgrep -s "$term_pid" | tr '\n' ' ')"
			pkill -KILL -s "$term_pid" || true
			errs=$((errs + 1))
		elif [[ $before != "$after" ]]; then
			echo "FAIL: $dir/$prog: left behind after SIGTERM:"
			diff <(echo "$before") <(echo "$after") || true
			errs=$((errs + 1))
		else
			echo "clean: $dir/$prog: SIGTERM after $term_delay s left nothing behind"
		fi
	done <<<"$programs_list"
	((errs == 0)) || fail "$errs programs left something behind"
}

run_all_sigterm() {
	local before after pid
	before=$(snapshot)
	setsid "$top/run_all.sh" --no-build >"$work/ra-term.out" 2>&1 &
	pid=$!
	sleep 4
	still_running "$pid" ||
		fail "run_all.sh ended before SIGTERM: $(tail -n 3 "$work/ra-term.out")"
	kill -TERM "$pid" || fail "cannot SIGTERM run_all.sh"
	wait "$pid" 2>/dev/null || true
	if ! wait_session "$pid"; then
		pgrep -a -s "$pid"
		pkill -KILL -s "$pid" || true
		fail "processes survive run_all.sh's SIGTERM"
	fi
	after=$(snapshot)
	[[ $before == "$after" ]] ||
		fail "run_all.sh SIGTERM left: $(diff <(echo "$before") <(echo "$after"))"
	echo "run_all.sh stopped by SIGTERM, nothing left behind"
}

see_mqueues
if [[ -n $run_all ]]; then
	run_all_sigterm
else
	sigterm_leftovers
fi
