#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Validate run_all.sh's A/B verdicts on this kernel:
#  - A/A: --vs-prefix env, K trials: no row may come out slower or faster;
#  - A/B with a known cost: --vs-prefix "seccomp_wrap -n C" for each C of
#    a list: the null-syscall rows must come out slower, their ratio
#    beside the filter's cost measured directly (seccomp_wrap --measure).
# Prints one line per trial and a verdict; exits 1 when an expectation
# fails. Takes minutes: every trial is 2 x REPEAT runs of the tests.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"

usage() {
	cat <<EOF
Usage: $prog [-t TEST]... [-r N] [--trials K] [--compares LIST] [--out DIR]
             [--no-aa] [--no-seccomp]
  -t TEST         tests to run (default: syscall_overhead)
  -r N            repetitions per side (default 5)
  --trials K      A/A trials (default 3)
  --compares LIST seccomp filter lengths, comma list (default 0,50,200)
  --out DIR       keep every run's KTAP and JSON in DIR (default: a
                  temporary directory, removed)
EOF
}

tests=()
names=()
repeat=5
trials=3
compares=0,50,200
out=
do_aa=1
do_seccomp=1
null_rows='getpid|getppid|getsid|getpgid_self|getpgid_0'

while (($#)); do
	case $1 in
	-t)
		(($# >= 2)) || die_usage "option '$1' needs a test"
		tests+=(-t "$2")
		names+=("$2")
		shift
		;;
	-r)
		(($# >= 2)) || die_usage "option '$1' needs a number"
		repeat=$2
		shift
		;;
	--trials)
		(($# >= 2)) || die_usage "option '$1' needs a number"
		trials=$2
		shift
		;;
	--compares)
		(($# >= 2)) || die_usage "option '$1' needs a list"
		compares=$2
		shift
		;;
	--out)
		(($# >= 2)) || die_usage "option '$1' needs a directory"
		out=$2
		shift
		;;
	--no-aa) do_aa= ;;
	--no-seccomp) do_seccomp= ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die_usage "unknown option '$1'" ;;
	esac
	shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die_usage "invalid -r '$repeat'"
[[ $trials =~ ^[0-9]+$ ]] || die_usage "invalid --trials '$trials'"
[[ $compares =~ ^[0-9]+(,[0-9]+)*$ ]] || die_usage "invalid --compares '$compares'"
if ((${#tests[@]} == 0)); then
	tests=(-t syscall_overhead)
	names=(syscall_overhead)
fi

if [[ -z $out ]]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/kbench-verdict.XXXXXX")
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
failed=0

# ab NAME PREFIX: one A/B run; its comparison lands in NAME.txt.
ab() {
	"$top/run_all.sh" --no-build "${tests[@]}" --vs-prefix "$2" \
		--repeat "$repeat" --json "$out/$1" >"$out/$1.ktap" 2>"$out/$1.err" || true
	"$top/scripts/compare.py" --label "base,$1" "$out/$1/base" \
		"$out/$1/candidate" >"$out/$1.txt" || true
}

# The compare lines of rows with a verdict of slower or faster.
changed_rows() {
	grep -E '  (slower|faster)( |$)' "$1" || true
}

make -s --no-print-directory -C "$top" TESTS="${names[*]}" all >&2
if [[ -n $do_aa ]]; then
	for ((i = 1; i <= trials; i++)); do
		ab "aa$i" env
		n=$(changed_rows "$out/aa$i.txt" | grep -c . || true)
		total=$(grep -cE '  (same|slower|faster|no-verdict)( |$)' "$out/aa$i.txt" || true)
		echo "A/A trial $i: $n of $total rows slower/faster"
		changed_rows "$out/aa$i.txt" | sed 's/^/    /'
		((n == 0)) || failed=1
	done
fi

if [[ -n $do_seccomp ]]; then
	wrap=$out/seccomp_wrap
	${CC:-cc} -O2 -Wall -Wextra -o "$wrap" "$top/tests/seccomp_wrap.c"
	IFS=, read -r -a lengths <<<"$compares"
	for c in "${lengths[@]}"; do
		echo "seccomp filter, $c compares: direct $("$wrap" -n "$c" --measure)"
		ab "seccomp$c" "$wrap -n $c"
		"$wrap" -n "$c" --measure | sed 's/^/    direct after the run: /'
		grep -E "^  ($null_rows) " "$out/seccomp$c.txt" | sed 's/^/    /' || true
		if grep -E "^  ($null_rows) " "$out/seccomp$c.txt" | grep -qvE '  slower( |$)'; then
			echo "    FAIL: a null-syscall row is not 'slower'"
			failed=1
		fi
		changed_rows "$out/seccomp$c.txt" | grep -vE "^  ($null_rows) " |
			sed 's/^/    other changed row: /' || true
	done
fi
if ((failed)); then
	echo "$prog: an expectation failed (figures above)"
	exit 1
fi
echo "$prog: all expectations met"
