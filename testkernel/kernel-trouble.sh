#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the lines of a guest console log in which the kernel itself
# reports trouble, in the kernel's own formats (after an optional
# "[  12.345678] " timestamp and "[T123]" caller id):
#   WARNING: CPU: N PID: N at FILE:LINE ...   (WARN_ON and friends)
#   BUG: ...  /  kernel BUG at FILE:LINE!
#   Oops ...  /  Internal error: Oops ...
#   general protection fault ...
#   Call Trace:
#   Kernel panic - not syncing: ...
# A user-space program's "WARNING:" (virtme-ng-init, systemd) is not one.
#
#   kernel-trouble.sh CONSOLE_LOG
#
# Exit status: 0 trouble found (lines on stdout), 1 none, 2 bad usage or
# an unreadable log.
set -euo pipefail

prog=${0##*/}
# shellcheck source=../scripts/lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.bash"

case ${1:-} in
-h | --help)
	sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
-* | '') die_usage "usage: $prog CONSOLE_LOG" ;;
esac
(($# == 1)) || die_usage "usage: $prog CONSOLE_LOG"
[[ -r $1 ]] || die 2 "cannot read '$1'"

prefix='^(\[ *[0-9]+\.[0-9]+\] )?(\[ *[CT][0-9]+\] )?'
formats='WARNING: CPU: [0-9]+ PID: [0-9]+ at [^ ]+:[0-9]+'
formats+='|BUG: |kernel BUG at |Oops|Internal error: Oops'
formats+='|general protection fault|Call Trace:|Kernel panic - not syncing'
grep -E -m 5 "$prefix($formats)" "$1" | tr -d '\r'
