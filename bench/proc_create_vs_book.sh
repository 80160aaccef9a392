#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# proc_create's figures beside Table 28-3 of The Linux Programming
# Interface (x86-32, Linux 2.6.27, 100,000 creations per cell) with the
# ratio book / here (how many times faster this machine creates).
#
# Usage: bench/proc_create_vs_book.sh [JSON]
#   JSON  the --json file of a proc_create run (a --full run for the
#         book's counts); without it, runs 'proc_create -m none' (quick)
# Environment: KSRC (kernel tree for the build, see lib/kbench.mk).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

case "${1:-}" in
-h|--help)
	sed -n '/^# Usage/,/^# Environment/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 0
	;;
esac
if [ $# -gt 1 ]; then
	echo "proc_create_vs_book.sh: too many arguments (see --help)" >&2
	exit 2
fi

if [ $# -eq 1 ]; then
	json=$1
	if [ ! -r "$json" ]; then
		echo "proc_create_vs_book.sh: cannot read '$json'" >&2
		exit 2
	fi
else
	make -s -C "$here/proc_create" >/dev/null
	json=$(mktemp /tmp/proc_create_vs_book.XXXXXX.json)
	trap 'rm -f "$json"' EXIT
	rc=0
	"$here/proc_create/proc_create" -m none --json "$json" >/dev/null || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "proc_create_vs_book.sh: proc_create exited with $rc" >&2
		exit "$rc"
	fi
fi

python3 "$here/bench/proc_create_vs_book.py" "$json" || exit
