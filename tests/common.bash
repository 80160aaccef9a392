# SPDX-License-Identifier: GPL-2.0
#
# Shared by tests/run.sh and tests/sigterm.sh (source it after setting
# top, the clone's directory).
: "${top:?tests/common.bash needs top, the clone directory}"

# fail MESSAGE: end the step as failed (on stderr, so that it is seen
# from inside a command substitution too).
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
