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

# need_value OPTION WHAT ARGC: OPTION (with ARGC arguments left, itself
# included) must be followed by its value, else a usage error naming WHAT.
need_value() {
	(($3 >= 2)) || die_usage "option '$1' needs $2"
}

# help_from_header FILE FIRST LAST: print lines FIRST..LAST of FILE's
# header comment as the help text, without the leading '# '.
help_from_header() {
	sed -n "$2,$3p" "$1" | sed 's/^# \{0,1\}//'
}
