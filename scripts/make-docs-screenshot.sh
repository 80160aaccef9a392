#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate docs/report-ab.png, the README's picture of an A/B report: the
# null-syscall rows of syscall_overhead with and without a seccomp filter
# that costs every system call (tests/seccomp_wrap.c), 5 interleaved
# repetitions per side, reported by scripts/report.py and photographed by
# headless Chromium (tests/browser_check.py).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"

usage() {
	cat <<EOF
Usage: $prog [-o PNG] [AB_DIR]
Run a small A/B (syscall_overhead plain vs under a seccomp filter,
--repeat 5), write its HTML report and a screenshot of the report's top
to PNG (default: docs/report-ab.png). With AB_DIR (a run_all.sh --json
directory of an A/B run), photograph the report of those results instead
of running. Needs python3-matplotlib and chromium.
EOF
}

out=$top/docs/report-ab.png
ab=
while (($#)); do
	case $1 in
	-o)
		(($# >= 2)) || die_usage "option '$1' needs a file name"
		out=$2
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	-*) die_usage "unknown option '$1'" ;;
	*)
		[[ -z $ab ]] || die_usage "one A/B directory at most"
		[[ -d $1/base && -d $1/candidate ]] ||
			die_usage "'$1' is not an A/B directory (no base/ and candidate/)"
		ab=$1
		;;
	esac
	shift
done

"$top/scripts/report.py" --check || die 1 "cannot draw the report"
work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ -z $ab ]]; then
	cc -std=gnu11 -O2 -Wall -Wextra -o "$work/seccomp_wrap" \
		"$top/tests/seccomp_wrap.c" || die 1 "cannot build seccomp_wrap"
	ab=$work/ab
	KSELFTEST_SYSCALL_OVERHEAD_ARGS="-t fork,getpid,getppid,getpgid_self,getsid,msgsnd_rcv,shmat_ctl" \
		"$top/run_all.sh" -t syscall_overhead --repeat 5 \
		--vs-prefix "$work/seccomp_wrap -n 200" --json "$ab" >"$work/ab.ktap" ||
		msg "the A/B run reported failures (see the report)"
fi
"$top/scripts/report.py" -o "$work/report.html" \
	--title "kbench A/B: syscall_overhead under a 200-compare seccomp filter" \
	"$ab"
mkdir -p "$(dirname "$out")"
"$top/tests/browser_check.py" --width 1000 --clip 1150 --scale 0.8 \
	--screenshot "$out" "$work/report.html"
echo "$prog: wrote $out ($(stat -c %s "$out") bytes)"
