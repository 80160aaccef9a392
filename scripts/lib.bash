# SPDX-License-Identifier: GPL-2.0
#
# Messages and exits shared by the collection's bash scripts. Source it
# after setting prog (the name messages start with).

msg() {
	echo "$prog: $*" >&2
}

# die STATUS MESSAGE...
die() {
	local status=$1

	shift
	msg "$*"
	exit "$status"
}

# Bad usage: the problem, a hint, exit status 2 (never 4, which is SKIP).
die_usage() {
	msg "$*"
	echo "Try '$prog --help' for more information." >&2
	exit 2
}

# settings_timeout DIR: the test's "timeout=" (kselftest's default 45).
settings_timeout() {
	local t=45 line

	if [[ -f $1/settings ]]; then
		while IFS= read -r line; do
			[[ $line =~ ^timeout=([0-9]+) ]] && t=${BASH_REMATCH[1]}
		done <"$1/settings"
	fi
	echo "$t"
}

# interrupted DIR: the end of a runner on a signal: stop the program it is
# waiting for ($current_pid), remove its scratch DIR, say so, exit 130.
interrupted() {
	trap - INT TERM HUP
	if [[ -n ${current_pid:-} ]]; then
		kill -TERM "$current_pid" 2>/dev/null || true
		wait "$current_pid" 2>/dev/null || true
	fi
	rm -rf "$1"
	echo "Bail out! interrupted" >&2
	exit 130
}
