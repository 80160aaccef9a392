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
