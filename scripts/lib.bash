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

# use_debian_python DIR: on Debian or Ubuntu (dpkg has python3 installed)
# the python3-* packages setup.sh installs (matplotlib, yaml, hypothesis)
# are for /usr/bin/python3 alone. When PATH's python3 is another one (a
# pyenv shim, a venv, /usr/local), a link to Debian's goes into DIR, first
# in PATH (exported): every python3 and '#!/usr/bin/env python3' this
# command starts then sees what setup.sh installed. Said on stderr.
# Elsewhere, or when PATH's is Debian's already, nothing changes.
use_debian_python() {
	local debian=/usr/bin/python3 have

	[[ -x $debian ]] || return 0
	[[ $(dpkg-query -W -f='${db:Status-Status}' python3 2>/dev/null) == installed ]] ||
		return 0
	have=$(command -v python3 || true)
	[[ -n $have && $(realpath "$have") == "$(realpath "$debian")" ]] && return 0
	if ! mkdir -p "$1" || ! ln -sfn "$debian" "$1/python3"; then
		msg "python3 in PATH is ${have:-none}, not Debian's $debian (which has the" \
			"python3-* packages), and $1 cannot be written: the tools run with ${have:-none}"
		return 0
	fi
	PATH=$1:$PATH
	export PATH
	msg "python3 in PATH is ${have:-none}; the tools run with Debian's $debian," \
		"which has the python3-* packages (first in PATH through $1)"
}

# help_from_header FILE FIRST LAST: print lines FIRST..LAST of FILE's
# header comment as the help text, without the leading '# '.
help_from_header() {
	sed -n "$2,$3p" "$1" | sed 's/^# \{0,1\}//'
}

# ---- option values of run_all.sh (kbtools.ab checks its own) -------------
# Each check ends the script with a usage error when the value is bad.

# check_repeat N: --repeat's value, a number above 0.
check_repeat() {
	if [[ ! $1 =~ ^[0-9]+$ ]] || ((10#$1 < 1)); then
		die_usage "invalid --repeat '$1': not a number above 0"
	fi
}

# check_fail_above PCT: --fail-above's value, a percentage.
check_fail_above() {
	[[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]] ||
		die_usage "invalid --fail-above '$1': not a percentage"
}

# check_json_dir DIR: --json's directory, created when missing.
check_json_dir() {
	[[ $1 != -* ]] || die_usage "invalid --json directory '$1'"
	mkdir -p "$1" || die_usage "cannot create directory '$1'"
}
